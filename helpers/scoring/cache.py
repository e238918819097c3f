"""Scores already paid for: (reranker, query, document) -> score, with a TTL.

Agent Zero recalls twice per message and often with the same query and the same memories,
so a repeat costs no server call. Keys hold fixed-size digests, never the texts, so memory
is bounded by the entry limit (about 200 bytes an entry). One cache per process, shared by
every event loop, guarded by a thread lock; evicts least recently used first.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections import OrderedDict
from typing import Hashable, Sequence


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class ScoreCache:
    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple, tuple[float, float]] = OrderedDict()
        self._namespaces: dict[Hashable, int] = {}
        # Never reset, not even by clear(): a call in flight across a reset holds keys with
        # its old number, and must not store its scores under a number another reranker
        # is given afterwards.
        self._numbers = itertools.count()
        self.hits = 0
        self.misses = 0

    def _namespace(self, namespace: Hashable) -> int:
        # A small int stands for the (endpoint, model, api, route, ...) tuple in every key;
        # each number is handed out once in the process's life.
        with self._lock:
            if namespace not in self._namespaces:
                if len(self._namespaces) > 1024:
                    self._namespaces.clear()
                    self._entries.clear()
                self._namespaces[namespace] = next(self._numbers)
            return self._namespaces[namespace]

    def keys(self, namespace: Hashable, query: str, documents: Sequence[str]) -> list[tuple]:
        ns, q = self._namespace(namespace), digest(query)
        return [(ns, q, digest(d)) for d in documents]

    def lookup(self, keys: Sequence[tuple]) -> list[float | None]:
        now = self._clock()
        out: list[float | None] = []
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is not None and entry[1] > now:
                    self._entries.move_to_end(key)
                    out.append(entry[0])
                    self.hits += 1
                else:
                    if entry is not None:
                        del self._entries[key]
                    out.append(None)
                    self.misses += 1
        return out

    def store(self, keys: Sequence[tuple], scores: Sequence[float], ttl: float, max_entries: int) -> None:
        if max_entries <= 0 or ttl <= 0:
            return
        expires = self._clock() + ttl
        with self._lock:
            for key, score in zip(keys, scores):
                self._entries[key] = (score, expires)
                self._entries.move_to_end(key)
            while len(self._entries) > max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def forget(self) -> None:
        with self._lock:
            self._entries.clear()
            self._namespaces.clear()
            self.hits = self.misses = 0


CACHE = ScoreCache()
