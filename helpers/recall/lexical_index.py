"""A word index over the host's whole memory store, kept in step with it: the lexical search.

The embedder misses what only words find: a name, a date, a number, a rare term the
question shares with the memory that answers it, when the rest of the memory is about
something else. So each search also asks BM25 (scoring/bm25.py, the same words and weights)
over every memory of the store, not only over what the embedder found.

The index is built once per store, in a worker thread (never on the event loop), and kept
in step incrementally: LangChain's FAISS appends new vectors at the next positions of
``index_to_docstore_id`` (an insert: only the new ids are read), and rebuilds that dict on
a delete (a consolidation, a forget, an edit: every memory is compared with the text it
was indexed from, so one deleted and added back under its id with new text is read
again). A query scores each of its terms over the term's whole posting list with numpy (a
word most memories hold is tens of thousands of postings at 100k memories), and reads the
ranking only as deep as the caller's filter needs. A recall waits for the index at most ``WAIT_S``; a store too large
to index by then is searched without it until the build finishes in the background. Each
memory is cut to ``DOC_CHARS`` before it is read, so a huge memory costs no more than a
long one.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import struct
import threading
import time
import weakref
from array import array
from collections import Counter
from typing import Any, Callable

from ..scoring import bm25

DOC_CHARS = 4_000  # what of a memory the index reads: its start, where its subject is
WAIT_S = 1.0  # how long a recall waits for the index to catch up with the store
# Deleted memories leave their slots in the postings (dropping them from every posting list
# would cost a pass over the index per delete); once there are more of them than live ones
# (and at least this many) the index is packed again.
_PACK_AT_LEAST = 1_024
# One posting: the memory's slot and how often it holds the term. A term's postings are one
# bytearray of these: an object the garbage collector does not track (an array.array, or a
# tuple holding two, it does), so indexing 100k memories adds nothing to a full collection's
# work or its trigger, which would stop the host's loop with every other thread.
_POSTING = struct.Struct("<if")
_POSTING_DTYPE = [("slot", "<i4"), ("tf", "<f4")]


# What bm25.tokens makes of each whitespace-separated chunk of text: its words never span
# whitespace, so a text's tokens are its chunks' tokens in order. Chunks repeat across
# memories ("nginx", "the", "2024-05-01,"), so indexing 100k of them stems each once.
_CHUNKS_AT_MOST = 200_000
_chunk_tokens: dict[str, tuple[str, ...]] = {}


def _tokens(text: str) -> list[str]:
    if len(_chunk_tokens) > _CHUNKS_AT_MOST:
        _chunk_tokens.clear()
    out: list[str] = []
    for chunk in text.lower().split():
        found = _chunk_tokens.get(chunk)
        if found is None:
            found = _chunk_tokens[chunk] = tuple(bm25.tokens(chunk))  # a tuple of str: untracked by the gc
        out += found
    return out


class StoreIndex:
    """BM25 postings for one store. Each memory has a slot (its position in ``ids``); a
    term's postings are one flat buffer of (slot, count), so a query scores a term held by
    most of 100k memories in a few vector operations, not a Python loop over them. Read
    through numpy without a copy (numpy is there wherever FAISS is, and only FAISS-like
    stores are indexed)."""

    def __init__(self) -> None:
        self.slot_of: dict[str, int] = {}  # live doc id -> its slot
        self.ids: list[str | None] = []  # slot -> doc id, None once deleted
        self.lengths = array("d")  # slot -> how many terms it holds, 0 once deleted
        self.doc_terms: list[tuple[str, ...]] = []  # slot -> its distinct terms
        self.read = array("q")  # slot -> the hash of the text it was indexed from
        self.postings: dict[str, bytearray] = {}  # term -> its postings (_POSTING each)
        self.df: dict[str, int] = {}  # term -> how many live memories hold it
        self.total = 0
        self.dead = 0  # deleted slots still in the postings
        self.mapping: dict | None = None  # the index_to_docstore_id dict last read (held: its id is never reused)
        self.mapping_len = 0
        self.lock = threading.RLock()  # one writer at a time; readers take it too
        self.building: asyncio.Future | None = None
        self.building_since = 0.0  # when the catch-up under way started (time.monotonic)

    @classmethod
    def of_texts(cls, texts: list[str]) -> "StoreIndex":
        """An index of ``texts`` alone, text ``i`` in slot ``i`` (store_agreement's survey)."""
        index = cls()
        for i, text in enumerate(texts):
            index._add(str(i), text[:DOC_CHARS])
        return index

    def current(self, mapping: dict) -> bool:
        return self.mapping is mapping and self.mapping_len == len(mapping)

    def catch_up(self, mapping: dict, ids: list[str], docstore: Any) -> None:
        """Runs in a worker thread: index what the store gained, drop what it lost.
        ``ids``: the docstore ids of ``mapping`` in its order, copied on the loop."""
        with self.lock:
            if self.mapping is mapping and self.mapping_len <= len(ids):
                to_read, removed = ids[self.mapping_len :], []
            else:
                # Every id is read again, not only the new ones: Agent Zero edits a memory
                # (update_documents: the dashboard, a consolidation's UPDATE) by deleting it
                # and adding it back under the same id with its new text.
                now = set(ids)
                removed = [doc_id for doc_id in self.slot_of if doc_id not in now]
                to_read = ids
            for doc_id in removed:
                self._remove(doc_id)
            for doc_id in to_read:
                self._read(doc_id, docstore.search(doc_id))
            if self.dead > max(len(self.slot_of), _PACK_AT_LEAST):
                self._pack()
            self.mapping, self.mapping_len = mapping, len(ids)

    def _read(self, doc_id: str, doc: Any) -> None:
        """Index ``doc`` under ``doc_id`` unless it holds what it was indexed from."""
        text = getattr(doc, "page_content", None)
        if not isinstance(text, str):  # gone, or never a memory the index can read
            self._remove(doc_id)
            return
        text = text[:DOC_CHARS]  # the text itself when shorter: its hash is already known
        slot = self.slot_of.get(doc_id)
        if slot is None or self.read[slot] != hash(text):
            self._add(doc_id, text)

    def _add(self, doc_id: str, text: str) -> None:
        counts = Counter(_tokens(text))
        if doc_id in self.slot_of:
            self._remove(doc_id)
        slot = self.slot_of[doc_id] = len(self.ids)
        self.ids.append(doc_id)
        length = sum(counts.values())
        self.lengths.append(length)
        self.total += length
        self.doc_terms.append(tuple(counts))
        self.read.append(hash(text))
        postings, df, pack = self.postings, self.df, _POSTING.pack
        for term, n in counts.items():
            if term in postings:
                postings[term] += pack(slot, n)
                df[term] += 1
            else:
                postings[term] = bytearray(pack(slot, n))
                df[term] = 1

    def _remove(self, doc_id: str) -> None:
        slot = self.slot_of.pop(doc_id, None)
        if slot is None:
            return
        self.total -= int(self.lengths[slot])
        self.lengths[slot] = 0.0
        self.ids[slot] = None
        for term in self.doc_terms[slot]:
            left = self.df[term] - 1
            if left:
                self.df[term] = left
            else:  # no live memory holds it: its postings go
                del self.df[term], self.postings[term]
        self.doc_terms[slot] = ()
        self.dead += 1

    def _pack(self) -> None:
        """Renumber the live slots from 0 and drop the deleted ones from every posting list."""
        import numpy as np

        keep = [slot for slot, doc_id in enumerate(self.ids) if doc_id is not None]
        new_slot = np.full(len(self.ids), -1, dtype=np.intc)
        new_slot[keep] = np.arange(len(keep), dtype=np.intc)
        for term, buffer in self.postings.items():
            old = np.frombuffer(buffer, dtype=_POSTING_DTYPE)
            moved = new_slot[old["slot"]]
            live = moved >= 0
            packed = np.empty(int(live.sum()), dtype=_POSTING_DTYPE)
            packed["slot"], packed["tf"] = moved[live], old["tf"][live]
            self.postings[term] = bytearray(packed.tobytes())
        self.ids = [self.ids[slot] for slot in keep]
        self.slot_of = {doc_id: slot for slot, doc_id in enumerate(self.ids)}
        self.lengths = array("d", (self.lengths[slot] for slot in keep))
        self.doc_terms = [self.doc_terms[slot] for slot in keep]
        self.read = array("q", (self.read[slot] for slot in keep))
        self.dead = 0

    def scores(self, text: str) -> tuple[Any, Any]:
        """BM25 of every memory sharing a word with ``text``, IDF over the whole store:
        (their slots, their scores), two numpy arrays in slot order."""
        import numpy as np

        with self.lock:
            n = len(self.slot_of)
            out = None
            if n:
                average = self.total / n or 1.0
                lengths = np.frombuffer(self.lengths, dtype=np.float64)
                for term in set(_tokens(text[:DOC_CHARS])):
                    buffer = self.postings.get(term)
                    if buffer is None:
                        continue
                    df = self.df[term]
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    postings = np.frombuffer(buffer, dtype=_POSTING_DTYPE)
                    slots, tf = postings["slot"], postings["tf"].astype(np.float64)
                    norm = tf + bm25.K1 * (1 - bm25.B + bm25.B * lengths[slots] / average)
                    if out is None:
                        out = np.zeros(len(self.ids))
                    out[slots] += idf * tf * (bm25.K1 + 1) / norm
            if out is None:
                return np.zeros(0, dtype=np.intc), np.zeros(0)
            hit = np.flatnonzero((out > 0) & (lengths > 0))  # a deleted slot has length 0
            return hit, out[hit]

    def coverage(self, text: str, doc: Any) -> float:
        """How much of ``text``'s words ``doc`` holds, each word weighted by its IDF over the
        store (a word no memory holds weighs most): 1 when it holds every word of the
        message, whatever their counts or its length. Unlike a BM25 score it means the same
        in every store and for every message, so one bar can say "a strong word match"."""
        with self.lock:
            n = len(self.slot_of)
            slot = self.slot_of.get(str((getattr(doc, "metadata", None) or {}).get("id", "")))
            held = set(self.doc_terms[slot]) if slot is not None else set()
            weights = {
                term: math.log(1 + (n - df + 0.5) / (df + 0.5))
                for term in set(_tokens(text[:DOC_CHARS]))
                for df in [self.df.get(term, 0)]
            }
            total = sum(weights.values())
            return sum(w for term, w in weights.items() if term in held) / total if total > 0 else 0.0

    def stored_order(self, ids: list[str]) -> dict[str, int]:
        """Where each of ``ids`` the index holds sits in the order the store holds its
        memories: its slot (FAISS appends what is stored, and a delete keeps the order of the
        rest; a memory edited is read again at the end, as it was stored again)."""
        with self.lock:
            return {doc_id: self.slot_of[doc_id] for doc_id in ids if doc_id in self.slot_of}

    def best(
        self, docstore: Any, text: str, depth: int, comparator: Callable[[dict], Any] | None
    ) -> list[tuple[Any, float]]:
        """Runs in a worker thread: the best ``depth`` memories for ``text`` passing the
        caller's filter, best first (ties newest stored first: see ``_head``). Reads the
        ranking from its head, four times deeper each time the filter leaves too few, so a
        filter few memories pass costs no sort of every match."""
        with self.lock:
            slots, values = self.scores(text)
            out: list[tuple[Any, float]] = []
            read, wanted = 0, max(4 * depth, 64)
            while read < len(values):
                head = self._head(slots, values, wanted)
                for doc_id, score in head[read:]:
                    doc = docstore.search(doc_id)
                    if hasattr(doc, "page_content") and (comparator is None or comparator(doc.metadata)):
                        out.append((doc, score))
                        if len(out) >= depth:
                            return out
                read, wanted = len(head), wanted * 4
            return out

    def _head(self, slots: Any, values: Any, wanted: int) -> list[tuple[str, float]]:
        """The ``wanted`` best, best first, ties newest stored first (the higher slot: the
        store's own order, which a restart keeps and an edit moves to the end): of two memories
        the words cannot tell apart, the later one is the likelier to hold what is true now,
        and the order is the one the store's history gives, never that of ids the host draws
        at random. A longer head starts with every shorter one. Memories tied at the cut
        (thousands, when most of them hold the same words as often) are not sorted, only the
        newest of them taken."""
        import numpy as np

        if wanted < len(values):
            cut = np.partition(values, len(values) - wanted)[len(values) - wanted]
            above = values > cut
            tied = heapq.nlargest(wanted - int(above.sum()), slots[values == cut].tolist())
            slots, values = slots[above], values[above]
        else:
            cut, tied = 0.0, []
        # (-score, -slot) pairs sort in C, with no key function called per memory.
        head = sorted(zip((-values).tolist(), (-slots).tolist()))
        ids = self.ids
        return [(ids[-negated_slot], -negated) for negated, negated_slot in head] + [
            (ids[slot], float(cut)) for slot in tied
        ]


_indexes: "weakref.WeakKeyDictionary[Any, StoreIndex]" = weakref.WeakKeyDictionary()
_indexes_lock = threading.Lock()


def _index_of(db: Any) -> StoreIndex:
    with _indexes_lock:
        index = _indexes.get(db)
        if index is None:
            index = _indexes[db] = StoreIndex()
        return index


async def ready(db: Any) -> StoreIndex | None:
    """The store's index, caught up with the store, or None when it is not ready within
    WAIT_S (it goes on catching up in the background)."""
    mapping = getattr(db, "index_to_docstore_id", None)
    if not isinstance(mapping, dict) or not hasattr(db, "docstore"):
        return None
    index = _index_of(db)
    if index.current(mapping) and index.building is None:
        return index
    building = index.building
    if building is not None and building.get_loop() is not asyncio.get_running_loop():
        building = None  # started on a loop that has ended: catch up again (the lock orders them)
    if building is None:
        # Read on the loop, where the host changes the store: the thread gets a copy (one
        # C-level copy of the values, a fraction of a millisecond at 100k memories).
        ids = list(mapping.values())
        building = index.building = asyncio.ensure_future(asyncio.to_thread(index.catch_up, mapping, ids, db.docstore))
        building.add_done_callback(lambda _: setattr(index, "building", None))
        index.building_since = time.monotonic()
    # WAIT_S from when the catch-up started: the recall that started a long first build
    # waits for it at most that long, the ones during the rest of it not at all.
    left = WAIT_S - (time.monotonic() - index.building_since)
    done, _ = await asyncio.wait({building}, timeout=max(0.0, left))
    if not done or building.exception() is not None:
        return None
    return index if index.current(mapping) else None


async def search(
    db: Any, text: str, depth: int, comparator: Callable[[dict], Any] | None
) -> list[tuple[Any, float]] | None:
    """The store's memories best first by BM25 against ``text`` (at most ``depth``, those
    passing the filter), or None when the index is not ready."""
    found = await matches(db, text, depth, comparator)
    return None if found is None else found[0]


async def matches(
    db: Any,
    text: str,
    depth: int,
    comparator: Callable[[dict], Any] | None,
    later: Callable[[Any], bool] | None = None,
) -> tuple[list[tuple[Any, float]], float] | None:
    """``StoreIndex.best``'s list, the memories ``later`` names after the others (each part
    best first), and its first memory's ``StoreIndex.coverage`` of ``text`` (0 for none),
    in one trip to a worker thread; None when the index is not ready."""
    if not text.strip() or depth <= 0:
        return [], 0.0
    index = await ready(db)
    if index is None:
        return None

    def both() -> tuple[list[tuple[Any, float]], float]:
        hits = index.best(db.docstore, text, depth, comparator)
        if later is not None:
            hits = sorted(hits, key=lambda hit: later(hit[0]))  # stable: each part stays best first
        return hits, index.coverage(text, hits[0][0]) if hits else 0.0

    return await asyncio.to_thread(both)


async def stored_order(db: Any, ids: list[str]) -> dict[str, int]:
    """StoreIndex.stored_order of ``ids`` in ``db``'s index, or {} when the index is not ready."""
    index = await ready(db)
    if index is None or not ids:
        return {}
    # A few dict reads: on the loop when no thread holds the index (a trip to a worker
    # thread costs more than the reads); while one does (another chat's search, a catch-up
    # of 100k memories), in a thread, so the loop never waits for the lock.
    if index.lock.acquire(blocking=False):
        try:
            return index.stored_order(ids)
        finally:
            index.lock.release()
    return await asyncio.to_thread(index.stored_order, ids)


def forget() -> None:
    """Testing switch (reset_state): drop every store's index."""
    with _indexes_lock:
        _indexes.clear()
