"""A built-in BM25 scorer: no server, no model, no dependency.

It is the honest embedded default for the command line and a no-server setup. It is a
lexical ranker, not a cross-encoder: it rewards shared (rare) words and knows nothing of
meaning, so it cannot tell "PostgreSQL 14" from "migrated to PostgreSQL 16" by sense.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from .stemming import stem

_WORD = re.compile(r"[a-z0-9][a-z0-9_.+#-]*[a-z0-9+#]|[a-z0-9]")
_STOP = frozenset(
    """a an and are as at be but by can could did do does for from had has have how i if in into is it its
    me my of on or our so than that the their them then there these they this to was we were what when where
    which who why will with would you your about after again all also any been before being both each few
    further just more most no nor not now only other over own same should some such too under until up very
    am he her here him his she us out off once""".split()
)
# BM25's term-frequency saturation and length normalisation. K1 is Robertson's usual value.
# B is low: memories are short and their lengths say little of their subject (a chat turn
# of forty words is a message that says more, not one that wanders), and the usual 0.75
# held a long message that answers below a short one that only shares a word. Chosen on the
# tuning material (0.1-0.3 alike there, 0.2 the best word search alone; the study in
# docs/relevance.md). The word index of a store (recall/lexical_index.py) scores with the same.
K1, B = 1.2, 0.2


def tokens(text: str) -> list[str]:
    """The words BM25 matches on: lowercase, stop words left out, each stemmed (stemming.py)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 of each document against the query, with IDF taken over ``documents`` themselves."""
    docs = [Counter(tokens(d)) for d in documents]
    if not docs:
        return []
    lengths = [sum(d.values()) for d in docs]
    avg_len = (sum(lengths) / len(docs)) or 1.0
    n = len(docs)
    terms = set(tokens(query))
    idf = {}
    for term in terms:
        df = sum(1 for d in docs if term in d)
        idf[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    scores = []
    for counts, length in zip(docs, lengths):
        total = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if tf:
                total += idf[term] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg_len))
        scores.append(total)
    return scores
