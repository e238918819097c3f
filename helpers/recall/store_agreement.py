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
It is learned from the user's own searches, none labelled.

A tally needs a few searches, and a store's first questions would go the embedder's way
before it says otherwise. So a store is **surveyed** at its first new-chat search: its own
memories (up to SURVEY_SIZE, spread over the store, Agent Zero's knowledge files left out)
asked as questions of each other, once by their vectors and once by their words. Where the
two agree on a memory's nearest five the embedder finds what the words find: 1.4-2.0 shared
of five in every observation store and the own bench, 0.9-1.15 in the turn stores (a sample
of 200 says what the whole store says; docs/relevance.md). A store under SURVEY_BAR starts
with the words leading: its prior share is SURVEYED_SHARE instead of PRIOR_SHARE, and its
tally overrules it as soon as two strong word matches were held. A store of fewer than
SURVEY_LEAST memories, or one whose index cannot give its vectors back, says nothing, and the
embedder leads as every store did before. Kept in memory per store, like the word index;
reset_state forgets it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections import deque
from typing import Any, Callable, Hashable, Sequence

from . import store_search
from .fusion import STRONG_COVERAGE
from .lexical_index import DOC_CHARS, StoreIndex

log = logging.getLogger("a0_reranker")

# Chosen on the tuning material (LoCoMo's tuning conversations stored turn by turn and as
# observations, the own bench's tuning half; the study in docs/relevance.md).
AGREEMENT_BAR = 0.6
PRIOR_SHARE, PRIOR_WEIGHT = 0.8, 5
MIN_SEEN = 3
WINDOW = 50  # the store changes: the newest evidence counts
HELD_WITHIN = 5  # the embedder holds a match within its first this many: the prompt's usual slots

# The survey: the bar halfway between the tuning conversations' turn stores (0.95-1.14) and
# observation stores (1.40-1.78; the own bench 2.04). The held-out ones fall on the same
# sides (0.89-1.04, 1.51-1.63), and every store stays on its side since BM25's b is 0.2
# (turns 0.84-1.05, observations 1.42-1.78, the own bench 2.01; bench/store_survey.py).
SURVEY_SIZE = 200  # memories asked of each other; more says the same at a higher cost
SURVEY_LEAST = 40  # fewer memories than this: too few neighbours to say anything
SURVEY_BAR = 1.25  # shared memories of the nearest five, vectors against words
SURVEYED_SHARE = 0.5  # the prior share of a store the survey says its words lead
SURVEY_WAIT_S = 0.5  # how long a search waits for its store's survey (it goes on in the background)


# Per store, the last WINDOW strong word matches: held by the embedder's first five or not.
_tallies: "weakref.WeakKeyDictionary[Any, deque[bool]]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


class _Survey:
    """One store's survey: how many memories it had, and what they said (None: nothing)."""

    def __init__(self, size: int, agreement: float | None) -> None:
        self.size, self.agreement = size, agreement


# Per store, its last survey, and the one under way (with the loop it runs on).
_surveys: "weakref.WeakKeyDictionary[Any, _Survey]" = weakref.WeakKeyDictionary()
_surveying: "weakref.WeakKeyDictionary[Any, asyncio.Future]" = weakref.WeakKeyDictionary()


def words_lead(db: Any) -> bool:
    """Whether ``db``'s embedder has missed too many of the strong word matches seen so far,
    or, before its tally says so, its survey says the words find what its embedder misses."""
    if not _weakrefable(db):
        return False
    with _lock:
        tally = _tallies.get(db) or ()
        surveyed = _surveys.get(db)
    agreement = surveyed.agreement if surveyed is not None else None
    words_first = agreement is not None and agreement < SURVEY_BAR
    if not words_first and len(tally) < MIN_SEEN:
        return False
    prior = SURVEYED_SHARE if words_first else PRIOR_SHARE
    return (sum(tally) + prior * PRIOR_WEIGHT) / (len(tally) + PRIOR_WEIGHT) < AGREEMENT_BAR


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


async def survey(db: Any) -> None:
    """Survey ``db`` unless it was surveyed at no less than half its size: waited for at most
    SURVEY_WAIT_S; what it finds after that counts from the next search on. Raises nothing
    but CancelledError: a store that cannot be surveyed is a store with no survey."""
    try:
        await _survey_once(db)
    except Exception:
        log.debug("store survey failed", exc_info=True)


async def _survey_once(db: Any) -> None:
    index = getattr(db, "index", None)
    size = getattr(index, "ntotal", None)
    if not isinstance(size, int) or not _weakrefable(db):
        return
    with _lock:
        done, running = _surveys.get(db), _surveying.get(db)
    if done is not None and size < 2 * max(done.size, SURVEY_LEAST):
        return
    loop = asyncio.get_running_loop()
    if running is None or running.get_loop() is not loop:  # none, or started on a loop that has ended
        running = asyncio.ensure_future(_survey_store(db, size))
        with _lock:
            _surveying[db] = running
    await asyncio.wait({running}, timeout=SURVEY_WAIT_S)


async def _survey_store(db: Any, size: int) -> None:
    """Records ``db``'s survey. The sample is read on the loop, where the host changes the
    store (SURVEY_SIZE vectors copied out of FAISS: a millisecond or two), and worked out in
    a worker thread."""
    try:
        vectors, texts = _sample(db, size)
        agreement = await asyncio.to_thread(agreement_of, vectors, texts)
    except Exception:  # an index that cannot give its vectors back, a docstore of another kind
        agreement = None
    with _lock:
        _surveys[db] = _Survey(size, agreement)
        _surveying.pop(db, None)


def _sample(db: Any, size: int) -> tuple[Any, list[str]]:
    """Up to SURVEY_SIZE of ``db``'s memories spread over its positions, knowledge files left
    out: their vectors (one row each) and texts."""
    import numpy as np

    mapping, docstore = db.index_to_docstore_id, db.docstore
    step = max(1, size // (4 * SURVEY_SIZE))  # a store of mostly knowledge is still read to its end
    rows, texts = [], []
    for position in range(0, size, step):
        doc = docstore.search(mapping.get(position))
        text = getattr(doc, "page_content", None)
        # What the word index reads of it (a megabyte memory is not copied on the loop to be stripped).
        if isinstance(text, str) and text[:DOC_CHARS].strip() and not store_search.is_knowledge(doc):
            rows.append(position)
            texts.append(text)
    if len(rows) > SURVEY_SIZE:
        picks = np.linspace(0, len(rows) - 1, SURVEY_SIZE).round().astype(int)
        rows, texts = [rows[i] for i in picks], [texts[i] for i in picks]
    return (store_search.stored_vectors(db.index, rows) if rows else np.zeros((0, 0))), texts


def agreement_of(vectors: Any, texts: list[str]) -> float | None:
    """How many of each memory's five nearest by its vector (cosine) are among its five
    nearest by its words (BM25, over these texts alone), on average; None for fewer than
    SURVEY_LEAST memories."""
    import numpy as np

    if len(texts) < SURVEY_LEAST:
        return None
    cosine = store_search.cosine_matrix(vectors)
    np.fill_diagonal(cosine, -np.inf)
    words = StoreIndex.of_texts(texts)
    shared = []
    for i, text in enumerate(texts):
        by_vector = set(np.argsort(-cosine[i], kind="stable")[:5].tolist())
        slots, scores = words.scores(text)
        keep = slots != i
        slots, scores = slots[keep], scores[keep]
        by_words = set(slots[np.argsort(-scores, kind="stable")[:5]].tolist())
        shared.append(len(by_vector & by_words))
    return float(np.mean(shared))


def forget() -> None:
    """Testing switch (reset_state): every store starts again with the embedder leading."""
    with _lock:
        _tallies.clear()
        _surveys.clear()
        _surveying.clear()


def _weakrefable(db: Any) -> bool:
    try:
        weakref.ref(db)
    except TypeError:
        return False
    return True
