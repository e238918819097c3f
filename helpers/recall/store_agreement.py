"""Per store: does its embedder find what the words find?

In most stores the embedder is the better first stage (memories the agent wrote as facts,
LoCoMo's observations: the message's own search beats its words alone by 0.05 to 0.16 of
recall@5). In chat stored message by message it is the other way round (LoCoMo turn by turn:
BM25 0.575, the embedder 0.417): short, chatty memories whose names and dates only the
words see. No fixed fusion of the two lists holds on both kinds of store, and no signal of
one search says which list to trust (docs/relevance.md). One signal of the store does: how
often the embedder's first five hold a **strong word match** (the best word match, holding
at least half of the message's IDF-weighted words, fusion.STRONG_COVERAGE) when there is
one: 0.73-0.91 of the time in every observation store and in the own bench, 0.46-0.71 in
the turn stores.

So each store keeps a running tally of the strong word matches its searches met (the last
WINDOW), and whether the embedder's first HELD_WITHIN held them. Its share, drawn toward
PRIOR_SHARE as if PRIOR_WEIGHT matches had been seen already (a few misses in a new store are
chance, not evidence), below AGREEMENT_BAR after at least MIN_SEEN matches: the store's
new-chat searches let the words lead (fusion.word_led). With those numbers a store needs its
first 3 matches all missed, at most 1 of 5 or 4 of 10 held, or at most 56 % in the long run.
It is learned from the user's own searches, none labelled: a new store starts with the
embedder leading, as every store did before. Kept in memory per store, like the word index;
reset_state forgets it.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from typing import Any, Callable, Hashable, Sequence

from .fusion import STRONG_COVERAGE

# Chosen on the tuning material (LoCoMo's tuning conversations stored turn by turn and as
# observations, the own bench's tuning half; the study in docs/relevance.md).
AGREEMENT_BAR = 0.6
PRIOR_SHARE, PRIOR_WEIGHT = 0.8, 5
MIN_SEEN = 3
WINDOW = 50  # the store changes: the newest evidence counts
HELD_WITHIN = 5  # the embedder holds a match within its first this many: the prompt's usual slots


# Per store, the last WINDOW strong word matches: held by the embedder's first five or not.
_tallies: "weakref.WeakKeyDictionary[Any, deque[bool]]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def words_lead(db: Any) -> bool:
    """Whether ``db``'s embedder has missed too many of the strong word matches seen so far."""
    with _lock:
        tally = _tallies.get(db) if _weakrefable(db) else None
        if tally is None or len(tally) < MIN_SEEN:
            return False
        return (sum(tally) + PRIOR_SHARE * PRIOR_WEIGHT) / (len(tally) + PRIOR_WEIGHT) < AGREEMENT_BAR


def note_search(
    db: Any, best_word: Any, coverage: float, embedder_hits: Sequence[Any], key: Callable[[Any], Hashable]
) -> None:
    """What one new-chat search of ``db`` says of its store: nothing, unless its best word
    match (``best_word``, holding ``coverage`` of the message's words) is strong; then
    whether the embedder's own list (``embedder_hits``, best first) held it."""
    if best_word is None or coverage < STRONG_COVERAGE:
        return
    best = key(best_word)
    note(db, any(key(hit) == best for hit in embedder_hits[:HELD_WITHIN]))


def note(db: Any, held_by_embedder: bool) -> None:
    """One strong word match a search of ``db`` met, and whether the embedder's first five held it."""
    if not _weakrefable(db):
        return
    with _lock:
        tally = _tallies.get(db)
        if tally is None:
            tally = _tallies[db] = deque(maxlen=WINDOW)
        tally.append(bool(held_by_embedder))


def forget() -> None:
    """Testing switch (reset_state): every store starts again with the embedder leading."""
    with _lock:
        _tallies.clear()


def _weakrefable(db: Any) -> bool:
    try:
        weakref.ref(db)
    except TypeError:
        return False
    return True
