"""``rerank_api: lexical``: the built-in BM25 (helpers/bm25.py), no server, no model.

It ranks by shared words, not meaning: a weak reranker, which the fusion it is combined
with keeps from losing what the searches found.

Each memory is cut to ``rerank_max_doc_chars`` first, as a server is sent it, and what is
left is tokenized in a thread: BM25 is pure Python, and 60 memories of 250 KB tokenized on
the event loop every chat shares held it for seconds per recall.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from ... import vocabulary
from ...vocabulary import scorer_words
from ...deadline import Deadline
from ...settings import Settings
from .. import bm25
from .base import InProcess
from ..verdicts import PROBE_DOCS, PROBE_QUERY, ProbeReport, Verdict


class LexicalScorer(InProcess):
    name = "lexical"
    api = "lexical"
    mode = vocabulary.LEXICAL
    caches_scores = False  # scoring is cheaper than looking the scores up
    needs_warm_up = False

    def verdict_key(self, settings: Settings) -> tuple:
        return ()

    async def probe(self, settings: Settings, deadline: Deadline, report: ProbeReport, *, fresh: bool = False) -> None:
        rel, near, irr = bm25.bm25_scores(PROBE_QUERY, PROBE_DOCS)
        report.ok, report.verdict, report.detected_api = True, "ok", self.api
        report.reason = scorer_words.LEXICAL_PROBE
        report.result = Verdict(None, "bm25", rel, irr)

    async def score(
        self, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline
    ) -> list[float]:
        cut = [d[: settings.max_doc_chars] for d in documents]
        return await asyncio.to_thread(bm25.bm25_scores, query, cut)

    def warm(self, settings: Settings) -> None:
        pass


LEXICAL = LexicalScorer()
