"""Command line: ``python -m helpers.cli probe|rerank|status|report`` from the plugin folder.

``rerank`` with no endpoint uses the built-in lexical (BM25) reranker, which needs nothing
but Python: that path imports no third-party package. Talking to a server needs httpx,
jinja2, pyyaml and tenacity (all inside Agent Zero already).

Bad input never ends in a traceback: each command answers it with one line on stderr that
names the argument, or the package that is missing, and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Sequence

from . import vocabulary
from .settings import APIS, SettingsError, coerce, shown_endpoint
from .vocabulary import cli_words as words

# import name -> what pip installs
RUNTIME_PACKAGES = {"httpx": "httpx", "jinja2": "jinja2", "yaml": "pyyaml", "tenacity": "tenacity"}

# The option behind each setting, so a setting's error names what the user typed.
OPTIONS = {
    "rerank_endpoint": "--endpoint",
    "rerank_api": "--api",
    "rerank_model": "--model",
    "rerank_timeout": "--timeout",
    "rerank_instruction": "--instruction",
    "rerank_api_key": "--api-key-env",
}


class UsageError(Exception):
    """Bad input; the message names the argument. Exit status 2."""

    def __init__(self, message: str, prog: str = ""):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        raise UsageError(message, self.prog)


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(words.at_least_one(text))
    return value


def _setting(key: str) -> Callable[[str], Any]:
    """An option's value checked by the plugin's own rule for that setting."""

    def parse(text: str) -> Any:
        try:
            return coerce(key, text)
        except SettingsError as exc:
            raise argparse.ArgumentTypeError(exc.detail) from None

    return parse


def _unreadable(path: str, argument: str, exc: OSError) -> UsageError:
    return UsageError(words.cannot_read(argument, path, (exc.strerror or str(exc)).lower()))


# ``rerank``'s documents are read to at most this: a file that never ends (/dev/zero) is
# refused at the cap, not read until memory runs out.
MAX_DOCUMENTS_BYTES = 16 << 20


def _read_text(path: str, argument: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_DOCUMENTS_BYTES + 1)
    except OSError as exc:  # missing, a directory, no permission
        raise _unreadable(path, argument, exc) from None
    return _documents_text(data, words.argument(argument, path))


def _read_stdin() -> str:
    stream = getattr(sys.stdin, "buffer", None)
    data = (
        stream.read(MAX_DOCUMENTS_BYTES + 1) if stream is not None else sys.stdin.read(MAX_DOCUMENTS_BYTES + 1).encode()
    )
    return _documents_text(data, "stdin")


def _documents_text(data: bytes, source: str) -> str:
    if len(data) > MAX_DOCUMENTS_BYTES:
        raise UsageError(words.too_many_bytes(source, MAX_DOCUMENTS_BYTES >> 20))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(words.not_utf8(source, exc.start + 1)) from None


def _read_documents(args: argparse.Namespace) -> list[str]:
    if args.documents and args.file:
        raise UsageError(words.BOTH_SOURCES)
    if args.documents:
        blank = [n for n, d in enumerate(args.documents, 1) if not d.strip()]
        if blank:
            raise UsageError(words.empty_document(blank[0]))
        return list(args.documents)
    if args.file:
        text = _read_text(args.file, "--file")
    elif not sys.stdin.isatty():
        text = _read_stdin()
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
        config["rerank_api_key"] = os.environ.get(args.api_key_env, "").strip()
        if not config["rerank_api_key"]:
            raise UsageError(words.variable_not_set(args.api_key_env))
    return config


def _runtime_reranker(config: dict[str, Any], url_argument: str = "--endpoint"):
    """The reranker module with ``config`` checked the way the plugin checks it. Raises
    ``ModuleNotFoundError`` without the runtime packages, ``UsageError`` for a bad value."""
    from . import reranker

    try:
        reranker.load_settings(config)
    except SettingsError as exc:
        option = url_argument if exc.key == "rerank_endpoint" else OPTIONS.get(exc.key, exc.key)
        raise UsageError(words.argument(option, exc.detail)) from None
    return reranker


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def cmd_rerank(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise UsageError(words.EMPTY_QUERY)
    documents = _read_documents(args)
    if not documents:
        raise UsageError(words.no_documents(args.file))
    config = _config(args)
    api = config.get("rerank_api", "auto")
    if not config.get("rerank_endpoint") and api in ("rerank", "qwen3_score"):
        raise UsageError(words.needs_endpoint(api))
    if not config.get("rerank_endpoint") and api in ("lexical", "auto"):
        from .scoring import bm25  # the embedded default: standard library only

        scores = bm25.bm25_scores(args.query, documents)
        ranked = sorted(enumerate(scores), key=lambda p: (-p[1], p[0]))
        used = vocabulary.CLI_BM25
    else:
        ranked = _runtime_reranker(config).rerank(args.query, documents, config=config)
        if ranked is None:
            print(vocabulary.CLI_UNAVAILABLE, file=sys.stderr)
            return 1
        used = shown_endpoint(config.get("rerank_endpoint") or "") or api
    ranked = ranked[: args.top] if args.top else ranked
    if args.json:
        print(
            json.dumps(
                {"reranker": used, "results": [{"index": i, "score": s, "document": documents[i]} for i, s in ranked]},
                indent=2,
            )
        )
    else:
        width = 90
        rows = [
            (rank + 1, i, f"{s:.4f}", documents[i][:width] + ("…" if len(documents[i]) > width else ""))
            for rank, (i, s) in enumerate(ranked)
        ]
        print(words.ranked_header(used, args.query))
        print(_table(rows, ("rank", "index", "score", "document")))
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    config = {**_config(args), "rerank_endpoint": args.url}
    _runtime_reranker(config, url_argument="url")  # the runtime packages there, the settings checked
    from .scoring import sync

    report = sync.probe_report(config)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(vocabulary.probe_headline(report))
        if report.route:
            print(words.probe_route_line(report.route, report.answered_api, report.scale, report.batch_limit))
        # Reasons in full: the sentence that matters (the models a server serves) may come late.
        rows = [
            (a.route.describe(), a.verdict, a.status or "-", f"{a.latency_ms:.0f} ms", a.reason)
            for a in report.attempts
        ]
        if rows:
            print()
            print(_table(rows, ("route tried", "verdict", "http", "latency", "reason")))
        for note in report.notes:
            print(words.note_line(note))
    return 0 if report.ok else 1


def cmd_status(args: argparse.Namespace) -> int:
    from . import reranker

    print(json.dumps(reranker.status(), indent=2, default=str))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import decision_log

    try:
        summary = decision_log.summarise(args.log, k=args.k)
    except OSError as exc:
        raise _unreadable(args.log, "log", exc) from None
    except ValueError as exc:  # nothing in it to summarise
        raise UsageError(words.argument("log", f"{args.log}: {exc}")) from None
    print(json.dumps(summary.as_dict(), indent=2) if args.json else vocabulary.decision_log_text(summary))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=words.PROG, description=words.DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)  # subcommands get _Parser too

    def connection(p: argparse.ArgumentParser) -> None:
        p.add_argument("--api", choices=APIS, help=words.HELP["api"])
        p.add_argument("--model", help=words.HELP["model"])
        p.add_argument("--timeout", type=_setting("rerank_timeout"), help=words.HELP["timeout"])
        p.add_argument("--instruction", help=words.HELP["instruction"])
        p.add_argument("--api-key-env", metavar="VAR", help=words.HELP["api_key_env"])
        p.add_argument("--json", action="store_true", help=words.HELP["json"])

    p = sub.add_parser("rerank", help=words.HELP["rerank"])
    p.add_argument("query")
    p.add_argument("documents", nargs="*", default=[], help=words.HELP["documents"])
    p.add_argument("--file", help=words.HELP["file"])
    p.add_argument("--endpoint", help=words.HELP["endpoint"])
    p.add_argument("--top", type=_at_least_one, help=words.HELP["top"])
    connection(p)
    p.set_defaults(func=cmd_rerank)

    p = sub.add_parser("probe", help=words.HELP["probe"])
    p.add_argument("url")
    connection(p)
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("status", help=words.HELP["status"])
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("report", help=words.HELP["report"])
    p.add_argument("log")
    p.add_argument("--k", type=_at_least_one, default=5, help=words.HELP["k"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as exc:
        print(words.error_line(exc.prog or _prog(parser, args), str(exc)), file=sys.stderr)
    except ModuleNotFoundError as exc:  # a runtime package, imported on the way to a server
        name = (exc.name or "").split(".")[0]
        package = RUNTIME_PACKAGES.get(name, name)
        print(words.missing_package(_prog(parser, args), package), file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left (``| head``): nothing more to say to it
        sys.stderr.close()
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 2


def _prog(parser: argparse.ArgumentParser, args: argparse.Namespace | None) -> str:
    return f"{parser.prog} {args.command}" if args is not None else parser.prog


if __name__ == "__main__":
    sys.exit(main())
