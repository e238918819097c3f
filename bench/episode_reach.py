"""Where the words lead, the embedder's guess against the next word match, offline: over the
searches a ``--dump`` recorded, what the prompt's slots would hold if the embedder's best
guess kept the last of them only when stored within ``reach`` places of a word match above
it (fusion.word_led, EPISODE_REACH), for each reach, and for "always" (the rule before it).

    python -m bench.relevance --locomo DIR --turns --only lexical --dump run.json
    python -m bench.score_fusion run.json     # the other study of the same dump
    python -m bench.episode_reach run.json

Only the searches whose store's words led are ordered again, with the plugin's own
fusion.word_led and fusion.keep_first over the recorded word list, the message's list (its
memories above the message's similarity threshold: the fused order of a new chat) and each
memory's recorded place in the store; every other search keeps its shipped order. The
order at the shipped reach is checked against the shipped one first, search by search.
"""

from __future__ import annotations

import sys
from typing import Iterable

from bench.score_fusion import Order, dump_questions, table
from helpers.recall import fusion
from helpers.settings import Settings

HOST_THRESHOLD = 0.7  # the host's memory_recall_similarity_threshold default
REACHES = (1, 2, 3, 5, 8, 12, 15, 20)
ALWAYS = None  # the guess keeps the last place wherever it was stored


def message_threshold() -> float:
    """The message's list's similarity threshold in the fused order, as the bench's recall had it."""
    setting = Settings.from_mapping({}).message_threshold
    return min(HOST_THRESHOLD, setting) if setting > 0 else HOST_THRESHOLD


def word_led(search: dict, reach: int | None, threshold: float) -> list[str]:
    """The search's order with the words leading and the given reach (ALWAYS: no places)."""
    words = [(memory, score) for memory, score in search["lists"].get("lexical") or []]
    fused = [memory for memory, similarity in search["lists"].get("message") or [] if similarity >= threshold]
    if reach is ALWAYS:
        order = fusion.word_led(fused, words, search["slots"], str)
    else:
        order = fusion.word_led(fused, words, search["slots"], str, search.get("stored_at") or {}, reach)
    return fusion.keep_first(order, search["host_first"], search["slots"], str)


def reach_order(reach: int | None, threshold: float) -> Order:
    def order(search: dict) -> list[str]:
        return word_led(search, reach, threshold) if search.get("words_led") else search["shipped"]

    return order


def check(questions: list[dict], threshold: float) -> int:
    """The word-led searches, each ordered at the shipped reach as it was shipped; raises where not."""
    checked = 0
    for question in questions:
        for search in question["searches"]:
            if search["area"] != "memories" or not search.get("words_led"):
                continue
            slots = search["slots"]
            if word_led(search, fusion.EPISODE_REACH, threshold)[:slots] != search["shipped"][:slots]:
                raise SystemExit(
                    f"{question['id']}: the word-led order here is not the shipped one; is the dump stale?"
                )
            checked += 1
    return checked


def rows(threshold: float) -> Iterable[tuple[str, Order]]:
    yield "the guess always keeps the last place (before)", reach_order(ALWAYS, threshold)
    for reach in REACHES:
        shipped = " (shipped)" if reach == fusion.EPISODE_REACH else ""
        yield f"only when stored within {reach} of a word match{shipped}", reach_order(reach, threshold)


def main(argv: list[str] | None = None) -> None:
    questions = dump_questions(argv, __doc__.splitlines()[0])
    threshold = message_threshold()
    checked = check(questions, threshold)
    print(f"{checked} word-led searches, each as shipped at reach {fusion.EPISODE_REACH}\n")
    print(table(questions, rows(threshold), cell=lambda hits, total: f"{hits}/{total}"))


if __name__ == "__main__":
    sys.exit(main())
