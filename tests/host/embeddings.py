"""Deterministic embeddings for the stand-in host.

HashEmbeddings is a bag of hashed words, L2-normalised: texts that share words have a
larger inner product (cosine), unrelated texts are near 0 (relevance 0.5 in the host's
(1 + ip) / 2 scale). No model, no network, stable across processes (blake2b, not hash()).
"""

from __future__ import annotations

import hashlib
import math
import re

from langchain_core.embeddings import Embeddings

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbeddings(Embeddings):
    def __init__(self, dim: int = 256):
        if dim <= 0:
            raise ValueError("dim must be positive")
        self.dim = dim
        self.calls = 0  # texts embedded so far (queries + documents)

    def _bucket(self, word: str) -> int:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "little") % self.dim

    def vector(self, text: str) -> list[float]:
        self.calls += 1
        counts = [0.0] * self.dim
        for word in _WORD.findall((text or "").lower()):
            counts[self._bucket(word)] += 1.0
        norm = math.sqrt(sum(c * c for c in counts))
        return [c / norm for c in counts] if norm else counts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two texts (what FAISS's inner product gives for these vectors)."""
        return sum(x * y for x, y in zip(self.vector(a), self.vector(b)))
