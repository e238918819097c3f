"""Query embeddings for one recall: each distinct text embedded once.

One recall makes two searches (memories, then solutions) with the same texts, and Agent Zero
recalls again every few message-loop iterations with the same user message. Embedding each
distinct text once, with the host's own embedder, and reusing the vector for a short while
is what keeps the plugin's three searches about as cheap as the host's two: the host embeds
its long query twice per recall, the plugin once, plus two short texts.

Vectors are exactly what the host's store computes for a query: the store's embedder
(``db.embedding_function``) through ``aembed_query``, one call per text, concurrently
(remote embedders overlap their requests; local ones run in the host's executor, off the
event loop). Not one batch: a local model pads every text of a batch to the longest, and
the host's query is always the longest (256 tokens for all-MiniLM-L6-v2), so on a CPU a
batch of the three texts cost 1.6x the three calls (``python -m bench.recall_cost``).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import OrderedDict
from typing import Any, Sequence

_TTL_S = 300.0
_ENTRIES = 64


class _Memo:
    """A small bounded memo of (embedder, text) -> vector, shared by every event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple, tuple[float, Any, list[float]]] = OrderedDict()

    @staticmethod
    def key(embedder: Any, text: str) -> tuple:
        return (id(embedder), hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest())

    def get(self, embedder: Any, text: str) -> list[float] | None:
        key, now = self.key(embedder, text), time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            # The embedder itself is kept in the entry: an id reused by a new object after
            # the old one was collected (a changed embedding model) is not a hit.
            if hit is None or hit[1] is not embedder or hit[0] < now:
                return None
            self._items.move_to_end(key)
            return hit[2]

    def put(self, embedder: Any, text: str, vector: list[float]) -> None:
        with self._lock:
            self._items[self.key(embedder, text)] = (time.monotonic() + _TTL_S, embedder, vector)
            while len(self._items) > _ENTRIES:
                self._items.popitem(last=False)

    def forget(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


MEMO = _Memo()


async def embed(db: Any, texts: Sequence[str]) -> list[list[float]]:
    """One vector per text, in order, each as the store would embed it for a search."""
    embedder = db.embedding_function
    vectors: dict[str, list[float]] = {}
    missing = []
    for text in dict.fromkeys(texts):
        hit = MEMO.get(embedder, text)
        if hit is None:
            missing.append(text)
        else:
            vectors[text] = hit
    if missing:
        if hasattr(embedder, "aembed_query"):
            fresh = await asyncio.gather(*(embedder.aembed_query(t) for t in missing))
        else:  # a bare callable, which LangChain's FAISS also accepts
            fresh = [await asyncio.to_thread(embedder, t) for t in missing]
        for text, vector in zip(missing, fresh):
            vector = list(vector)
            MEMO.put(embedder, text, vector)
            vectors[text] = vector
    return [vectors[t] for t in texts]
