"""A real cross-encoder over the pools a relevance run recorded, offline: what it would ship
with each say the calibration can give it, and what it costs per search.

Through the real recall a CPU cross-encoder takes seconds a search (the recall's deadline
keeps the fused order when it is late), so a whole bench takes hours; and the say it earns
decides alone what it ships. Here the pools one run recorded (``--dump``, any reranker: the
pool is the same for every one) are scored once, in one batch a search, and shipped with
each say through the pipeline's own policies and combine stages (the standout rule, the
some-say agreement, which fused memories make room, the host's first kept, knowledge last),
with the default settings. The no-say order is checked against the recorded one first: a
mismatch means the recorded search was not rebuilt faithfully, and the run stops.

    python -m bench.relevance [--locomo [DIR] [--turns]] --only lexical --dump run.json
    python -m bench.rescore run.json [--model DIR] [--max-query-chars 400] [--half held] [--limit N]

``--model`` defaults to the real ms-marco-MiniLM-L-12-v2 built by tests/real/reranker_model.py
(``bash tests/run.sh`` builds it). Prints a table per half; ``--json FILE`` writes it too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path


SAYS = ("none", "some", "full", "alone", "earned")
# What the real L-12 scores on the calibration set, and Agent Zero's embedder, and the
# share of the set's unrelated memories the L-12 scores at or above the answer
# (`python -m bench.calibration --local DIR`): the say it earns, search by search, in the
# "earned" row (calibration.lend_say in a new chat's search and where its words led).
CALIBRATED_MRR, CALIBRATED_EMBEDDER_MRR, CALIBRATED_QUESTIONS = 0.633, 0.546, 70
CALIBRATED_UNRELATED_ABOVE = 0.033
CALIBRATED_UNRELATED_RELEVANT = 0.0  # the share of them it calls relevant (none of 210)


def earned_say(
    search: dict,
    mrr: float,
    embedder_mrr: float,
    questions: int,
    unrelated_above: float | None = None,
    unrelated_relevant: float | None = None,
) -> str:
    """The say the calibration's figures give the model in this recorded search."""
    from helpers.scoring import calibration

    trust = calibration.Trust.from_figures(
        mrr, embedder_mrr, questions=questions, unrelated_above=unrelated_above, unrelated_relevant=unrelated_relevant
    )
    return calibration.lend_say(
        trust, new_chat=bool(search.get("new_chat")), words_led=bool(search.get("words_led"))
    ).say


class _Memory:
    """A recorded memory as the pipeline's stages read one: its id and whether it is one of
    Agent Zero's knowledge chunks (the bench names those "k:<file>#<n>")."""

    def __init__(self, corpus_id: str):
        self.page_content = corpus_id
        self.metadata = {"id": corpus_id, "knowledge_source": corpus_id.startswith("k:")}


def shipped(
    search: dict,
    scores: list[float],
    scale: str,
    say: str,
    unrelated_above: float | None = None,
    unrelated_relevant: float | None = None,
) -> list[str]:
    """The memories the prompt gets (the first ``slots``) with ``say``: the recorded search
    put through the pipeline's own last stages (policies, combine) with the policies'
    default settings; ``alone`` is the reranker's own order. ``unrelated_above`` and
    ``unrelated_relevant``: the shares of the calibration's unrelated memories the model
    scored at or above the answer and called relevant (whether its line is read: a pick it
    calls relevant with some say, a new chat it leads)."""
    pool = [_Memory(d) for d in search["candidates"]]
    if say == "alone":
        order = [doc for _, doc in sorted(zip(scores, search["candidates"]), key=lambda pair: -pair[0])]
        return order[: search["slots"]]
    from helpers.recall import pipeline, store_search
    from helpers.scoring import calibration
    from helpers.scoring.score import Scored
    from helpers.settings import Settings

    by_id = {m.metadata["id"]: m for m in pool}
    area = search.get("area", "memories")
    run = pipeline.Search(
        call=pipeline.Call(
            "recall", None, message=search.get("message", search["rerank_query"]), prompt_slots={area: search["slots"]}
        ),
        settings=Settings.from_mapping({}),
        query=search["rerank_query"],
        limit=search["limit"],
        threshold=0.0,
        filter="area == 'solutions'" if area == "solutions" else "",
    )
    run.new_chat, run.words_led = bool(search.get("new_chat")), bool(search.get("words_led"))
    run.fused = [by_id.get(d) or _Memory(d) for d in search["fused"]]
    # By place, as the fuse stage leaves them: what the policies order the fused order by.
    run.fused_scores = [float(len(run.fused) - place) for place in range(len(run.fused))]
    run.pool = pool
    run.found = store_search.Found(host_result=[_Memory(search["host_first"])] if search["host_first"] else [])
    run.scored = Scored(list(scores), scale, None)
    run.trust = calibration.Trust(say, unrelated_above=unrelated_above, unrelated_relevant=unrelated_relevant)
    pipeline.apply_policies(None, run)
    pipeline.combine(None, run)
    return [d.metadata["id"] for d in run.docs[: run.slots]]


def load_model(model_dir: str):
    from sentence_transformers import CrossEncoder

    from helpers.scoring.scorers import local

    model = CrossEncoder(model_dir, device="cpu", max_length=512)  # the plugin's defaults
    return model, local._scale(model)


def rescore(
    dump: dict,
    name: str,
    model,
    scale: str,
    max_query_chars: int,
    limit: int | None,
    calibrated: tuple[float, float, int, float | None, float | None] = (
        CALIBRATED_MRR,
        CALIBRATED_EMBEDDER_MRR,
        CALIBRATED_QUESTIONS,
        CALIBRATED_UNRELATED_ABOVE,
        CALIBRATED_UNRELATED_RELEVANT,
    ),
    kept_scores: dict[str, list[float]] | None = None,
) -> dict:
    """``kept_scores``: the model's scores of an earlier run, by search (read, and filled in)."""
    kept_scores = {} if kept_scores is None else kept_scores
    texts = dump["_texts"]
    questions = dump[name][:limit] if limit else dump[name]
    hits: dict[tuple[str, str, str], list[bool]] = defaultdict(list)  # (say, half, class) -> answered
    seconds, pairs, scored_pairs = [], 0, 0
    for n, q in enumerate(questions, start=1):
        if n % 200 == 0:
            print(f"  {n} of {len(questions)} questions, {pairs} pairs in {sum(seconds):.0f} s", file=sys.stderr)
        shown: dict[str, set[str]] = {say: set() for say in SAYS}
        for at, search in enumerate(q["searches"]):
            pool = search["candidates"]
            if not pool:
                continue
            query = search["rerank_query"][:max_query_chars]
            kept_as = f"{q['id']}#{at}#{max_query_chars}"
            if kept_as in kept_scores and len(kept_scores[kept_as]) == len(pool):
                scores = kept_scores[kept_as]
            else:
                started = time.perf_counter()
                scores = [float(s) for s in model.predict([(query, texts[d][:8000]) for d in pool], batch_size=64)]
                seconds.append(time.perf_counter() - started)
                scored_pairs += len(pool)
                kept_scores[kept_as] = scores
            pairs += len(pool)
            if shipped(search, scores, scale, "none") != search["shipped"][: search["slots"]]:
                raise SystemExit(
                    f"{q['id']}: the no-say order differs from the recorded one: the search was not rebuilt as recorded"
                )
            for say in SAYS:
                as_said = earned_say(search, *calibrated) if say == "earned" else say
                shown[say] |= set(shipped(search, scores, scale, as_said, *calibrated[3:]))
        for say in SAYS:
            answered = bool(shown[say] & set(q["relevant"]))
            for cls in q["classes"]:
                hits[(say, q["half"], cls)].append(answered)
    return {"hits": hits, "seconds": seconds, "pairs": pairs, "scored_pairs": scored_pairs, "questions": len(questions)}


def table(result: dict, half: str) -> str:
    hits = result["hits"]
    classes = sorted({c for (_, h, c) in hits if h == half}, key=lambda c: (c != "all", c))
    lines = ["| say | " + " | ".join(classes) + " |", "|---|" + "--:|" * len(classes)]
    for say in SAYS:
        cells = [f"{sum(v) / len(v):.3f}" if (v := hits.get((say, half, c))) else "-" for c in classes]
        lines.append(f"| {say} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rescore", description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", help="a bench.relevance --dump file")
    parser.add_argument("--from", dest="name", help="which recorded pass's pools (default: the first with a reranker)")
    parser.add_argument(
        "--model", help="a cross-encoder folder (default: the real L-12 of tests/real/reranker_model.py)"
    )
    parser.add_argument(
        "--max-query-chars",
        type=int,
        default=400,
        help="the query's first N characters (a CPU cross-encoder's setting)",
    )
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--half", choices=("held", "tuned"), help="only the questions of this half")
    parser.add_argument(
        "--words-led",
        choices=("yes", "no"),
        help="only the questions whose (first) search the words led, or only the others: where the earned row differs",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--scores", help="keep the model's scores in this file and read them from it when run again (the same dump)"
    )
    parser.add_argument(
        "--calibrated",
        nargs=5,
        type=float,
        metavar=("MRR", "EMBEDDER_MRR", "QUESTIONS", "UNRELATED_ABOVE", "UNRELATED_RELEVANT"),
        default=(
            CALIBRATED_MRR,
            CALIBRATED_EMBEDDER_MRR,
            CALIBRATED_QUESTIONS,
            CALIBRATED_UNRELATED_ABOVE,
            CALIBRATED_UNRELATED_RELEVANT,
        ),
        help="the model's and the embedder's MRR on the calibration set, its size, and the shares of its unrelated "
        "memories the model scores at or above the answer and calls relevant: the earned row's say",
    )
    args = parser.parse_args(argv)
    with open(args.dump, encoding="utf-8") as fh:
        dump = json.load(fh)
    if "_texts" not in dump:
        raise SystemExit(f"{args.dump}: no pool texts in it: record it again with this bench.relevance")
    name = args.name or next((n for n in dump if n not in ("none", "_texts")), None)
    if name not in dump or name == "_texts":
        raise SystemExit(f"{args.dump}: no recorded pass {name!r} with pools (record one with --only lexical)")
    model_dir = args.model
    if model_dir is None:
        from tests.real import reranker_model

        missing = reranker_model.missing_environment()
        if missing:
            raise SystemExit(missing)
        model_dir = str(reranker_model.model_dir())
    model, scale = load_model(model_dir)
    if args.half:
        dump[name] = [q for q in dump[name] if q["half"] == args.half]
    if args.words_led:
        led = args.words_led == "yes"
        dump[name] = [q for q in dump[name] if bool(q["searches"] and q["searches"][0].get("words_led")) == led]
    kept: dict[str, list[float]] = {}
    if args.scores and Path(args.scores).exists():
        kept = json.loads(Path(args.scores).read_text(encoding="utf-8"))
    mrr, embedder_mrr, questions, unrelated, called = args.calibrated
    result = rescore(
        dump,
        name,
        model,
        scale,
        args.max_query_chars,
        args.limit,
        (mrr, embedder_mrr, int(questions), unrelated, called),
        kept,
    )
    if args.scores:
        Path(args.scores).write_text(json.dumps(kept), encoding="utf-8")
    per_search = result["seconds"]
    timing = (
        f"per search: median {statistics.median(per_search):.2f} s, "
        f"90th percentile {sorted(per_search)[int(0.9 * (len(per_search) - 1))]:.2f} s, "
        f"{result['scored_pairs'] / sum(per_search):.0f} pairs/s"
        if per_search
        else "every score read from --scores"
    )
    print(
        f"{result['questions']} questions, pools of {name!r}, {result['pairs']} pairs; scale {scale}; "
        f"{len(per_search)} searches scored, {timing}",
        file=sys.stderr,
    )
    halves = sorted({h for (_, h, _) in result["hits"]}, key=lambda h: h != "held")
    for half in halves:
        print(f"\n{half}\n\n{table(result, half)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "model": model_dir,
                    "from": name,
                    "per_search_s": per_search,
                    "pairs": result["pairs"],
                    "recall@5": {
                        f"{say}/{half}/{cls}": sum(v) / len(v) for (say, half, cls), v in result["hits"].items()
                    },
                },
                fh,
            )


if __name__ == "__main__":
    main()
