"""Command line: ``python -m helpers.cli probe|rerank|status|report`` from the plugin folder.

``rerank`` with no endpoint uses the built-in lexical (BM25) reranker, which needs nothing
but Python: that path imports no third-party package. Talking to a server needs httpx,
jinja2, pyyaml and tenacity (all inside Agent Zero already).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

RUNTIME_HINT = "this needs the plugin's runtime packages: pip install httpx jinja2 pyyaml tenacity"


def _read_documents(args: argparse.Namespace) -> list[str]:
    if args.documents:
        return list(args.documents)
    if args.file:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    elif not sys.stdin.isatty():
        text = sys.stdin.read()
    else:
        return []
    # One document per line; blank lines and # comments are skipped.
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if getattr(args, "endpoint", None):
        config["rerank_endpoint"] = args.endpoint
    if getattr(args, "api", None):
        config["rerank_api"] = args.api
    if getattr(args, "model", None):
        config["rerank_model"] = args.model
    if getattr(args, "timeout", None):
        config["rerank_timeout"] = args.timeout
    if getattr(args, "instruction", None):
        config["rerank_instruction"] = args.instruction
    # The key is read from the environment, never from argv (shell history, ps).
    if getattr(args, "api_key_env", None):
        config["rerank_api_key"] = os.environ.get(args.api_key_env, "")
    return config


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def cmd_rerank(args: argparse.Namespace) -> int:
    documents = _read_documents(args)
    if not documents:
        print("no documents: pass them as arguments, with --file, or on stdin", file=sys.stderr)
        return 2
    config = _config(args)
    if not config.get("rerank_endpoint") and config.get("rerank_api", "lexical") in ("lexical", "auto"):
        from . import lexical  # the embedded default: standard library only

        scores = lexical.bm25_scores(args.query, documents)
        ranked = sorted(enumerate(scores), key=lambda p: (-p[1], p[0]))
        used = "lexical (built-in BM25, no server)"
    else:
        try:
            from . import reranker
        except ImportError as exc:
            print(f"{exc}: {RUNTIME_HINT}", file=sys.stderr)
            return 2
        ranked = reranker.rerank(args.query, documents, config=config)
        if ranked is None:
            print("the reranker is unavailable (run `probe` for the reason); nothing was reordered", file=sys.stderr)
            return 1
        used = config.get("rerank_endpoint") or config.get("rerank_api", "")
    ranked = ranked[: args.top] if args.top else ranked
    if args.json:
        print(json.dumps({"reranker": used, "results": [{"index": i, "score": s, "document": documents[i]} for i, s in ranked]}, indent=2))
    else:
        width = 90
        rows = [(rank + 1, i, f"{s:.4f}", documents[i][:width] + ("…" if len(documents[i]) > width else "")) for rank, (i, s) in enumerate(ranked)]
        print(f"reranker: {used}\nquery: {args.query}\n")
        print(_table(rows, ("rank", "index", "score", "document")))
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    try:
        from . import reranker
    except ImportError as exc:
        print(f"{exc}: {RUNTIME_HINT}", file=sys.stderr)
        return 2
    config = _config(args)
    config["rerank_endpoint"] = args.url
    report = reranker.probe(config)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{'OK' if report.get('ok') else 'NOT USABLE'}: {report.get('reason')}")
        if report.get("route"):
            print(f"route: {report['route']}  api: {report.get('detected_api')}  scale: {report.get('scale')}  batch limit: {report.get('batch_limit') or '-'}")
        rows = [(a["route"], a["verdict"], a["status"] or "-", f"{a['latency_ms']:.0f} ms", a["reason"][:80]) for a in report.get("attempts", [])]
        if rows:
            print()
            print(_table(rows, ("route tried", "verdict", "http", "latency", "reason")))
        for note in report.get("notes", []):
            print(f"note: {note}")
    return 0 if report.get("ok") else 1


def cmd_status(args: argparse.Namespace) -> int:
    from . import reranker

    print(json.dumps(reranker.status(), indent=2, default=str))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from . import shadow_log

    try:
        summary = shadow_log.summarise(args.log, k=args.k)
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.log}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2) if args.json else shadow_log.format_summary(summary))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m helpers.cli", description="a0_reranker from a terminal")
    sub = parser.add_subparsers(dest="command", required=True)

    def connection(p: argparse.ArgumentParser) -> None:
        p.add_argument("--api", choices=("auto", "rerank", "qwen3_score", "lexical", "local"), help="rerank_api (default auto)")
        p.add_argument("--model", help="rerank_model: the model id the server expects")
        p.add_argument("--timeout", type=float, help="rerank_timeout in seconds")
        p.add_argument("--instruction", help="rerank_instruction for Qwen3 rerankers")
        p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("rerank", help="rank documents for a query (lexical BM25 when no endpoint is given)")
    p.add_argument("query")
    p.add_argument("documents", nargs="*", help="documents; or use --file / stdin, one per line")
    p.add_argument("--file", help="a file with one document per line")
    p.add_argument("--endpoint", help="reranker base URL; omit for the built-in lexical reranker")
    p.add_argument("--top", type=int, default=0, help="show only the best N")
    connection(p)
    p.set_defaults(func=cmd_rerank)

    p = sub.add_parser("probe", help="detect which API an endpoint speaks and whether it ranks correctly")
    p.add_argument("url")
    connection(p)
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("status", help="counters of this process (mostly useful inside Agent Zero)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("report", help="summarise a shadow log (rerank_shadow_log)")
    p.add_argument("log")
    p.add_argument("--k", type=int, default=5, help="the prompt's slots: how many top results count")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
