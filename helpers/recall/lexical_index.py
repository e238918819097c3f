"""A word index over the host's whole memory store, kept in step with it: the lexical search.

The embedder misses what only words find: a name, a date, a number, a rare term the
question shares with the memory that answers it, when the rest of the memory is about
something else. So each search also asks BM25 (scoring/bm25.py, the same words and weights)
over every memory of the store, not only over what the embedder found.

The index is built once per store, in a worker thread (never on the event loop), and kept
in step incrementally: LangChain's FAISS appends new vectors at the next positions of
``index_to_docstore_id`` (an insert: only the new ids are read), and rebuilds that dict on
a delete (a consolidation, a forget: the ids are compared). A recall waits for the index at
most ``WAIT_S``; a store too large to index by then is searched without it until the build
finishes in the background. Each memory is cut to ``DOC_CHARS`` before it is read, so a
huge memory costs no more than a long one.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import threading
import weakref
from collections import Counter
from typing import Any, Callable

from ..scoring import bm25

DOC_CHARS = 4_000  # what of a memory the index reads: its start, where its subject is
WAIT_S = 1.0  # how long a recall waits for the index to catch up with the store
_K1, _B = 1.2, 0.75


class StoreIndex:
    """BM25 postings for one store, by docstore id."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}  # term -> {doc id: term count}
        self.lengths: dict[str, int] = {}  # doc id -> how many terms it holds
        self.terms: dict[str, tuple[str, ...]] = {}  # doc id -> its distinct terms
        self.total = 0
        self.mapping_id = 0  # id() of the index_to_docstore_id dict last read
        self.mapping_len = 0
        self.lock = threading.Lock()  # one writer at a time; readers take it too
        self.building: asyncio.Future | None = None

    def current(self, mapping: dict) -> bool:
        return self.mapping_id == id(mapping) and self.mapping_len == len(mapping)

    def catch_up(self, mapping_id: int, items: list[tuple[int, str]], docstore: Any) -> None:
        """Runs in a worker thread: index what the store gained, drop what it lost."""
        with self.lock:
            if self.mapping_id == mapping_id and self.mapping_len <= len(items):
                added = [doc_id for _, doc_id in items[self.mapping_len:]]
                removed: set[str] = set()
            else:
                now = {doc_id for _, doc_id in items}
                removed = set(self.lengths) - now
                added = [doc_id for doc_id in now if doc_id not in self.lengths]
            for doc_id in removed:
                self._remove(doc_id)
            for doc_id in added:
                doc = docstore.search(doc_id)
                text = getattr(doc, "page_content", None)
                if isinstance(text, str):
                    self._add(doc_id, text[:DOC_CHARS])
            self.mapping_id, self.mapping_len = mapping_id, len(items)

    def _add(self, doc_id: str, text: str) -> None:
        counts = Counter(bm25.tokens(text))
        if doc_id in self.lengths:
            self._remove(doc_id)
        self.lengths[doc_id] = sum(counts.values())
        self.total += self.lengths[doc_id]
        self.terms[doc_id] = tuple(counts)
        for term, n in counts.items():
            self.postings.setdefault(term, {})[doc_id] = n

    def _remove(self, doc_id: str) -> None:
        self.total -= self.lengths.pop(doc_id, 0)
        for term in self.terms.pop(doc_id, ()):
            docs = self.postings.get(term, {})
            docs.pop(doc_id, None)
            if not docs:
                self.postings.pop(term, None)

    def scores(self, text: str) -> dict[str, float]:
        """BM25 of every memory sharing a word with ``text``, IDF over the whole store."""
        with self.lock:
            n = len(self.lengths)
            if not n:
                return {}
            average = self.total / n or 1.0
            out: dict[str, float] = {}
            for term in set(bm25.tokens(text[:DOC_CHARS])):
                docs = self.postings.get(term)
                if not docs:
                    continue
                idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
                for doc_id, tf in docs.items():
                    norm = tf + _K1 * (1 - _B + _B * self.lengths[doc_id] / average)
                    out[doc_id] = out.get(doc_id, 0.0) + idf * tf * (_K1 + 1) / norm
            return out


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
        # Read on the loop, where the host changes the store: the thread gets a copy.
        items = sorted(mapping.items())
        building = index.building = asyncio.ensure_future(asyncio.to_thread(index.catch_up, id(mapping), items, db.docstore))
        building.add_done_callback(lambda _: setattr(index, "building", None))
    done, _ = await asyncio.wait({building}, timeout=WAIT_S)
    if not done or building.exception() is not None:
        return None
    return index if index.current(mapping) else None


def _best(db: Any, scored: dict[str, float], depth: int, comparator: Callable[[dict], Any] | None) -> list[tuple[Any, float]]:
    """Runs in a worker thread: the best ``depth`` memories passing the caller's filter,
    best first (ties by id, so the order never depends on the store's history)."""
    order = lambda items: sorted(items, key=lambda item: (-item[1], item[0]))  # noqa: E731
    head = order(heapq.nlargest(max(4 * depth, 64), scored.items(), key=lambda item: item[1]))
    out = _passing(db, head, depth, comparator)
    if len(out) < depth and len(head) < len(scored):  # a filter few memories pass: read them all
        out = _passing(db, order(scored.items()), depth, comparator)
    return out


def _passing(db: Any, ranked: list[tuple[str, float]], depth: int, comparator) -> list[tuple[Any, float]]:
    out = []
    for doc_id, score in ranked:
        doc = db.docstore.search(doc_id)
        if hasattr(doc, "page_content") and (comparator is None or comparator(doc.metadata)):
            out.append((doc, score))
            if len(out) >= depth:
                break
    return out


async def search(db: Any, text: str, depth: int, comparator: Callable[[dict], Any] | None) -> list[tuple[Any, float]] | None:
    """The store's memories best first by BM25 against ``text`` (at most ``depth``, those
    passing the filter), or None when the index is not ready."""
    if not text.strip() or depth <= 0:
        return []
    index = await ready(db)
    if index is None:
        return None
    scored = await asyncio.to_thread(index.scores, text)
    return await asyncio.to_thread(_best, db, scored, depth, comparator)


def forget() -> None:
    """Testing switch (reset_state): drop every store's index."""
    with _indexes_lock:
        _indexes.clear()
