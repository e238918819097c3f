"""Score fusion instead of rank fusion, offline: over the lists a ``--dump`` recorded, what
the prompt's slots would hold if the message's dense list and its word list (BM25) were
fused by their scores (each list's scores z-normalised, a memory missing from a list given
that list's lowest) instead of by their ranks, and what the shipped order holds.

    python -m bench.relevance [--locomo DIR [--turns]] --only lexical --dump run.json
    python -m bench.score_fusion run.json

Each question is judged on its first search of the memories area, as the dump's "none" pass
recorded it (the shipped order is the no-reranker default). Two kinds of row: the score
fusion alone (CombSUM), and its first K placed before the shipped order (the fused order
kept below them). The latter applies only where the shipped order had no follow-up list to
fuse and the store's words did not lead (there the shipped order already rests on the word
list); "+ word-led" applies it there too. The study in docs/relevance.md reads these rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from typing import Callable, Iterable, Sequence

Order = Callable[[dict], list[str]]

WEIGHTS = (0.5, 0.6, 0.7)  # the dense list's weight; the word list's is the rest
FIRST = (3, 4)  # how many of the score fusion's first go before the shipped order


def zscores(scores: Sequence[float]) -> list[float]:
    """Each score's distance from the list's mean in standard deviations (a list of one: 0)."""
    if len(scores) < 2:
        return [0.0] * len(scores)
    mean, spread = statistics.fmean(scores), statistics.pstdev(scores) or 1.0
    return [(s - mean) / spread for s in scores]


def dense_list(search: dict) -> list:
    return search["lists"].get("message") or search["lists"].get("host") or []


def combsum(search: dict, dense_weight: float) -> list[str]:
    """The memories of both lists, by the weighted sum of their z-scores, best first."""
    fused: dict[str, float] = defaultdict(float)
    weighted = ((dense_list(search), dense_weight), (search["lists"].get("lexical") or [], 1 - dense_weight))
    # The dense list's order first, then the word list's: a tie keeps that order, run to run.
    memories = list(dict.fromkeys(memory for ranked, _ in weighted for memory, _ in ranked))
    for ranked, weight in weighted:
        if not ranked:
            continue  # a list that found nothing adds nothing to anyone
        z = zscores([score for _, score in ranked])
        by_id, floor = {memory: value for (memory, _), value in zip(ranked, z)}, min(z)
        for memory in memories:
            fused[memory] += weight * by_id.get(memory, floor)
    return sorted(fused, key=lambda memory: -fused[memory])


def score_fusion_first(first: int, dense_weight: float, word_led_too: bool) -> Order:
    def order(search: dict) -> list[str]:
        lists = search["lists"]
        if "followup" in lists or not lists.get("lexical") or (search.get("words_led") and not word_led_too):
            return search["shipped"]
        head = combsum(search, dense_weight)[:first]
        return head + [memory for memory in search["shipped"] if memory not in head]

    return order


def rows() -> Iterable[tuple[str, Order]]:
    yield "shipped (rank fusion)", lambda s: s["shipped"]
    yield "the message's own search", lambda s: [m for m, _ in dense_list(s)]
    yield "its words alone, BM25", lambda s: [m for m, _ in s["lists"].get("lexical") or []]
    for weight in WEIGHTS:
        yield f"score fusion alone, dense {weight}", lambda s, w=weight: combsum(s, w)
    for word_led_too in (False, True):
        for first in FIRST:
            for weight in WEIGHTS:
                name = f"its first {first} + shipped, dense {weight}" + (" + word-led" if word_led_too else "")
                yield name, score_fusion_first(first, weight, word_led_too)


def first_search(question: dict) -> dict | None:
    """The search a question is judged on: its first of the memories area."""
    return next((s for s in question["searches"] if s["area"] == "memories"), None)


def recall(questions: list[dict], order: Order, half: str) -> dict[str, tuple[int, int]]:
    """Per class: (questions with a relevant memory in the first slots, questions)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for question in questions:
        if question["half"] != half:
            continue
        search = first_search(question)
        if search is None:
            continue
        hit = bool(set(order(search)[: search["slots"]]) & set(question["relevant"]))
        for cls in {"all", *question["classes"]}:
            counts[cls][0] += hit
            counts[cls][1] += 1
    return {cls: (hits, total) for cls, (hits, total) in counts.items()}


def share(hits: int, total: int) -> str:
    return f"{hits / total:.3f}"


def table(
    questions: list[dict],
    orders: Iterable[tuple[str, Order]] | None = None,
    cell: Callable[[int, int], str] = share,
) -> str:
    """A row per order (``rows()`` by default): per half and class, ``cell`` of (questions
    answered, questions)."""
    classes = sorted({c for q in questions for c in q["classes"]} - {"all"})
    head = ["order", "held-out all", "tuning all", *(f"{c} held / tuning" for c in classes)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
    for name, order in rows() if orders is None else orders:
        held, tuned = recall(questions, order, "held"), recall(questions, order, "tuned")

        def shown(counts: dict, cls: str) -> str:
            hits, total = counts.get(cls, (0, 0))
            return cell(hits, total) if total else "-"

        cells = [shown(held, "all"), shown(tuned, "all"), *(f"{shown(held, c)} / {shown(tuned, c)}" for c in classes)]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)


def dump_questions(argv: list[str] | None, description: str) -> list[dict]:
    """The questions of the no-reranker pass of the dump the command line names."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("dump", help="a file bench.relevance --dump wrote")
    args = parser.parse_args(argv)
    with open(args.dump, encoding="utf-8") as fh:
        return json.load(fh)["none"]


def main(argv: list[str] | None = None) -> None:
    print(table(dump_questions(argv, __doc__.splitlines()[0])))


if __name__ == "__main__":
    sys.exit(main())
