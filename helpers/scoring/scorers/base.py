"""What a scorer is: the small interface every kind of reranker implements.

A scorer scores a query against documents within a deadline, and can be probed to a
verdict with a scale (scoring/verdicts.py). Everything around a call is the caller's
(scoring/score.py), applied by what the scorer declares here, never by its name:

    sends_text     memory text leaves the process: the privacy guard and redaction apply
    may_go_down    calls can fail for a while: the circuit breaker applies, and a failure
                   drops the cached verdict so the next call probes again
    caches_scores  a score is worth remembering: the score cache applies (rerank_cache)
    needs_warm_up  its first call would wait for a load: Agent Zero's start warms it
    probes_once    its probe is costly (LLM calls): its verdict, passed or failed (too slow,
                   misranks), is kept for the settings and tried again only in the
                   background; a failed call does not drop it
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    from ..client import Deadline
    from ...settings import Settings
    from ..verdicts import ProbeReport, Verdict


class Scorer(Protocol):
    name: str  # shown in reports: "remote", "local", "lexical"
    sends_text: bool
    may_go_down: bool
    caches_scores: bool
    needs_warm_up: bool
    probes_once: bool

    def verdict_key(self, settings: "Settings") -> tuple:
        """What its verdict depends on beyond the endpoint, model, API and instruction."""
        ...

    async def probe(self, settings: "Settings", deadline: "Deadline", report: "ProbeReport", *, fresh: bool = False) -> None:
        """Judge the probe documents and fill ``report`` (``report.result``: the verdict).
        ``fresh``: a person asked (Test connection): try again what failed a moment ago."""
        ...

    async def score(self, settings: "Settings", verdict: "Verdict", query: str, documents: Sequence[str],
                    deadline: "Deadline") -> list[float]:
        """One score per document, in input order. Raises ``RerankError``."""
        ...

    def warm(self, settings: "Settings") -> None:
        """Load what the first call would wait for (blocking; run off the event loop)."""
        ...
