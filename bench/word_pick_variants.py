"""Two looser word picks, offline: over the searches a ``--dump`` recorded, what the prompt's
slots would hold if a word match could earn its place in a search whose store's words do
not lead other than by the dense searches confirming it (fusion.with_word_picks) or by
holding half of the message's words (fusion.with_strong_word_match):

- **its episode**: a word match stored within ``reach`` places of one of the fused order's
  first FUSED_KEEPS counts as confirmed (the embedder found its stretch of the chat);
- **it stands out**: the best word match goes where a strong one goes when its BM25 score
  stands out from the word list's by the standout rule a reranker's pick must meet
  (fusion.standing_out).

    python -m bench.relevance [--locomo DIR [--turns] | --memorybank DIR] --only none --dump run.json
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

REACHES = (2, 5, fusion.EPISODE_REACH)
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


def confirmed_by_dense(fused: list, words: list, search: dict) -> list:
    return fusion.with_word_picks(fused, words, [fused], search["slots"], str)


def confirmed_by_episode(reach: int) -> Picks:
    def picks(fused: list, words: list, search: dict) -> list:
        stored_at = search.get("stored_at") or {}
        heads = [stored_at[m] for m in fused[: fusion.FUSED_KEEPS] if m in stored_at]
        near = [m for m, _ in words if m in stored_at and any(abs(stored_at[m] - at) <= reach for at in heads)]
        return fusion.with_word_picks(fused, words, [fused, near], search["slots"], str)

    return picks


def strong_by_coverage(order: list, words: list, search: dict) -> list:
    return fusion.with_strong_word_match(order, words[0][0], search["best_word_coverage"], search["slots"], str)


def strong_or_standing_out(order: list, words: list, search: dict) -> list:
    order = strong_by_coverage(order, words, search)
    if fusion.standing_out([score for _, score in words], "bm25")[:1] == [True]:
        return fusion.with_strong_word_match(order, words[0][0], 1.0, search["slots"], str)
    return order


def rebuilt(picks: Picks, strong: Strong, threshold: float) -> Callable[[dict], list]:
    def order(search: dict) -> list:
        words = [(m, score) for m, score in search["lists"]["lexical"]]
        fused = [m for m, similarity in search["lists"]["message"] if similarity >= threshold]
        ordered = strong(picks(fused, words, search), words, search)
        return fusion.keep_first(ordered, search["host_first"], search["slots"], str)

    return order


def faithful(questions: list[dict], threshold: float) -> set[str]:
    """The ids of the questions whose first search the shipped rebuild gives as shipped."""
    shipped_rebuild = rebuilt(confirmed_by_dense, strong_by_coverage, threshold)
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
    for reach in REACHES:
        yield f"confirmed by its episode too, within {reach}", variant(confirmed_by_episode(reach), strong_by_coverage)
    yield "the best word match where it stands out", variant(confirmed_by_dense, strong_or_standing_out)
    for reach in (5, fusion.EPISODE_REACH):
        yield f"both, within {reach}", variant(confirmed_by_episode(reach), strong_or_standing_out)


def main(argv: list[str] | None = None) -> None:
    questions = dump_questions(argv, __doc__.splitlines()[0])
    threshold = message_threshold()
    ok = faithful(questions, threshold)
    considered = sum(1 for q in questions if first_search(q) and reordered(first_search(q)))
    print(f"{len(ok)} of {considered} searches the variants reorder rebuilt as shipped\n")
    print(table(questions, rows(questions, threshold, ok), cell=lambda hits, total: f"{hits}/{total}"))


if __name__ == "__main__":
    sys.exit(main())
