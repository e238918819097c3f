"""The word picks, offline: over the searches a ``--dump`` recorded, what the prompt's slots
would hold in a search whose store's words do not lead with the rules that let a word match
earn its place (fusion.with_word_picks, fusion.with_strong_word_match) changed one at a time.

The shipped rules: a word match among the word list's first WORD_DEPTH, scoring at least
WORD_STRENGTH of the best, takes one of the prompt's last two places when the dense lists'
first DENSE_DEPTH hold it or it was stored within EPISODE_REACH places of one of the fused
order's first FUSED_KEEPS (**its episode**); and the best word match goes after the fused
order's first three when it holds half of the message's words or its BM25 score stands out
from the word list's by the rule a reranker's pick must meet (**it stands out**). Rows:

- **before the episode and the standout** (the rules up to 2026-12-07), and each of the
  two alone;
- **its episode within 2 or 5** stored places instead of EPISODE_REACH;
- **confirmed nearer the top**: within the dense lists' first 5 or 10 instead of
  DENSE_DEPTH, what a depth scaled to the store's size would give a store of MemoryBank's
  size (34-104 memories), where the first 20 are a fifth to half of it;
- **by both ranks**: the picks and the fused memories they would push out of the slots
  compete for those places by their reciprocal-rank fusion over the dense list and the word
  list, so a memory both searches rank high keeps its place before one only the words do.

    python -m bench.relevance [--locomo DIR [--turns [--first N]] | --memorybank DIR] --only none --dump run.json
    python -m bench.word_pick_variants run.json

Only the first search of the memories area of a new chat, without a follow-up list, whose
store's words did not lead, is ordered again, with the plugin's own fusion functions over
the recorded lists (the message's list above its threshold, the word list, each memory's
place in the store); every other search keeps its shipped order, and so does a search the
rebuild does not give exactly as shipped (Agent Zero's knowledge put last: the own bench's
few), which the first line counts. The study in docs/relevance.md reads these rows.
"""

from __future__ import annotations

import sys
from typing import Callable, Iterable

from bench.episode_reach import message_threshold
from bench.score_fusion import Order, dense_list, dump_questions, first_search, table
from helpers.recall import fusion

REACHES = (2, 5)
DEPTHS = (5, 10)
Picks = Callable[[list, list, dict], list]
Strong = Callable[[list, list, dict], list]


def reordered(search: dict) -> bool:
    """Whether this search is one whose word picks the variants change."""
    lists = search["lists"]
    return (
        search["area"] == "memories"
        and bool(search.get("new_chat"))
        and not search.get("words_led")
        and "followup" not in lists
        and bool(lists.get("lexical"))
        and "message" in lists
    )


def shipped_picks(fused: list, words: list, search: dict) -> list:
    return fusion.with_word_picks(fused, words, [fused], search["slots"], str, search.get("stored_at") or {})


def confirmed_by_dense(fused: list, words: list, search: dict) -> list:
    return fusion.with_word_picks(fused, words, [fused], search["slots"], str)


def confirmed_by_episode(reach: int) -> Picks:
    def picks(fused: list, words: list, search: dict) -> list:
        return fusion.with_word_picks(fused, words, [fused], search["slots"], str, search.get("stored_at"), reach)

    return picks


def confirmed_within(depth: int) -> Picks:
    def picks(fused: list, words: list, search: dict) -> list:
        return fusion.with_word_picks(fused, words, [fused[:depth]], search["slots"], str, search.get("stored_at"))

    return picks


def picked_by_both_ranks(fused: list, words: list, search: dict) -> list:
    slots = search["slots"]
    shipped = shipped_picks(fused, words, search)
    keep = slots - min(fusion.WORD_PLACES, slots - fusion.FUSED_KEEPS)
    if keep >= slots:
        return shipped
    contenders = list(dict.fromkeys(shipped[keep:slots] + fused[keep:slots]))
    both = {memory: rank for rank, (memory, _) in enumerate(fusion.fuse([fused, [m for m, _ in words]], str))}
    chosen = sorted(contenders, key=lambda memory: both.get(memory, len(both)))[: slots - keep]
    return shipped[:keep] + chosen + [memory for memory in shipped[keep:] if memory not in chosen]


def strong_by_coverage(order: list, words: list, search: dict) -> list:
    return fusion.with_strong_word_match(order, words[0][0], search["best_word_coverage"], search["slots"], str)


def strong_or_standing_out(order: list, words: list, search: dict) -> list:
    return fusion.with_strong_word_match(
        order,
        words[0][0],
        search["best_word_coverage"],
        search["slots"],
        str,
        stands_out=fusion.stands_out_of_words(words),
    )


def rebuilt(picks: Picks, strong: Strong, threshold: float) -> Callable[[dict], list]:
    def order(search: dict) -> list:
        words = [(m, score) for m, score in search["lists"]["lexical"]]
        fused = [m for m, similarity in search["lists"]["message"] if similarity >= threshold]
        ordered = strong(picks(fused, words, search), words, search)
        return fusion.keep_first(ordered, search["host_first"], search["slots"], str)

    return order


def faithful(questions: list[dict], threshold: float) -> set[str]:
    """The ids of the questions whose first search the shipped rebuild gives as shipped."""
    shipped_rebuild = rebuilt(shipped_picks, strong_or_standing_out, threshold)
    ok = set()
    for question in questions:
        search = first_search(question)
        if search and reordered(search):
            if shipped_rebuild(search)[: search["slots"]] == search["shipped"][: search["slots"]]:
                ok.add(question["id"])
    return ok


def rows(questions: list[dict], threshold: float, ok: set[str]) -> Iterable[tuple[str, Order]]:
    """The table's rows; ``ok``: the questions whose search is rebuilt as shipped (faithful)."""
    first_searches = {id(first_search(q)): q["id"] for q in questions if first_search(q)}

    def variant(picks: Picks, strong: Strong) -> Order:
        order = rebuilt(picks, strong, threshold)
        return lambda s: order(s) if first_searches.get(id(s)) in ok and reordered(s) else s["shipped"]

    yield "shipped", lambda s: s["shipped"]
    yield "the message's own search", lambda s: [m for m, _ in dense_list(s)]
    yield "its words alone, BM25", lambda s: [m for m, _ in s["lists"].get("lexical") or []]
    yield "before the episode and the standout", variant(confirmed_by_dense, strong_by_coverage)
    yield "its episode alone", variant(shipped_picks, strong_by_coverage)
    yield "the standout alone", variant(confirmed_by_dense, strong_or_standing_out)
    for reach in REACHES:
        yield f"its episode within {reach}", variant(confirmed_by_episode(reach), strong_or_standing_out)
    for depth in DEPTHS:
        yield (
            f"confirmed within the dense lists' first {depth}",
            variant(confirmed_within(depth), strong_or_standing_out),
        )
    yield (
        "the picks and the memories they push out, by both ranks",
        variant(picked_by_both_ranks, strong_or_standing_out),
    )


def main(argv: list[str] | None = None) -> None:
    questions = dump_questions(argv, __doc__.splitlines()[0])
    threshold = message_threshold()
    ok = faithful(questions, threshold)
    considered = sum(1 for q in questions if first_search(q) and reordered(first_search(q)))
    print(f"{len(ok)} of {considered} searches the variants reorder rebuilt as shipped\n")
    print(table(questions, rows(questions, threshold, ok), cell=lambda hits, total: f"{hits}/{total}"))


if __name__ == "__main__":
    sys.exit(main())
