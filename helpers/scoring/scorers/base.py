"""What a scorer is: the small interface every kind of reranker implements.

A scorer scores a query against documents within a deadline, and can be probed to a
verdict with a scale (scoring/verdicts.py). Everything around a call is the caller's
(scoring/score.py), applied by what the scorer declares here, never by its name:

    api            the rerank_api value that names it; None: a reranker server, named by
                   any other value (auto, rerank, qwen3_score) and an endpoint
    mode           what the views call the plugin's mode with it (helpers/vocabulary/)
    sends_text     memory text leaves the process: the endpoint guard and redaction apply,
                   to the endpoint ``guarded_endpoint`` names
    may_go_down    calls can fail for a while: the circuit breaker applies, under
                   ``breaker_key``, and a failure drops the cached verdict so the next call
                   probes again
    caches_scores  a score is worth remembering: the score cache applies (rerank_cache)
    needs_warm_up  its first call would wait for a load: Agent Zero's start warms it
    probes_once    its probe is costly (LLM calls): its verdict, passed or failed (too slow,
                   misranks), is kept for the settings and tried again only in the
                   background; a failed call does not drop it, and a kept failure keeps it
                   out of recall
    asks_utility_model  it is Agent Zero's utility model, which the host's own memory
                   post-filter asks too: the views say so, with its answer times, and Test
                   connection asks the model of the chat it was opened from
    judges_recall_at_once  one call judges both of a recall's searches (recall/judge_call.py)
    calibrates_apart  its calibration runs on the plugin's own loop, apart from the recall
                   that asked (calibration.py); otherwise within that recall's time
    calibration_questions  how many of the calibration set's questions it answers (its
                   first ones, written by hand); None: all of them
    query_chars    how much of the user's message and the newest conversation its query
                   holds (rerank_max_query_chars, or less where reading more would cost more
                   time than a recall has)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    from ...deadline import Deadline
    from ...settings import Settings
    from ..verdicts import ProbeReport, Verdict


class Scorer(Protocol):
    name: str  # shown in reports: "remote", "local", "lexical", "utility"
    api: str | None
    mode: str
    sends_text: bool
    may_go_down: bool
    caches_scores: bool
    needs_warm_up: bool
    probes_once: bool
    asks_utility_model: bool
    judges_recall_at_once: bool
    calibrates_apart: bool
    calibration_questions: int | None

    def breaker_key(self, settings: "Settings") -> str:
        """The circuit breaker's key for these settings (the status views list these keys)."""
        ...

    def owns_breaker(self, settings: "Settings", key: str) -> bool:
        """Whether a Save of these settings closes the breaker under ``key``."""
        ...

    def guarded_endpoint(self, settings: "Settings") -> tuple[str, str] | None:
        """(the host memory text would be sent to, how a refusal names it); None: there is
        nothing to check (no endpoint, nobody to ask)."""
        ...

    def verdict_key(self, settings: "Settings") -> tuple:
        """What its verdict depends on beyond the endpoint, model, API and instruction."""
        ...

    async def probe(
        self, settings: "Settings", deadline: "Deadline", report: "ProbeReport", *, fresh: bool = False
    ) -> None:
        """Judge the probe documents and fill ``report`` (``report.result``: the verdict).
        ``fresh``: a person asked (Test connection): try again what failed a moment ago."""
        ...

    async def score(
        self, settings: "Settings", verdict: "Verdict", query: str, documents: Sequence[str], deadline: "Deadline"
    ) -> list[float]:
        """One score per document, in input order. Raises ``RerankError``."""
        ...

    def warm(self, settings: "Settings") -> None:
        """Load what the first call would wait for (blocking; run off the event loop)."""
        ...

    def query_chars(self, settings: "Settings") -> int:
        """The most characters of the message and the newest conversation its query holds."""
        ...


class InProcess:
    """What every scorer that runs inside Agent Zero's process declares alike: nothing
    leaves it, nothing to guard, and no breaker (a missing package or model is reported,
    not retried)."""

    sends_text = False
    may_go_down = False
    asks_utility_model = False
    judges_recall_at_once = False
    probes_once = False
    calibrates_apart = True
    calibration_questions = None

    def breaker_key(self, settings: "Settings") -> str:
        return ""  # never asked: it cannot go down

    def owns_breaker(self, settings: "Settings", key: str) -> bool:
        return False

    def guarded_endpoint(self, settings: "Settings") -> tuple[str, str] | None:
        return None

    def query_chars(self, settings: "Settings") -> int:
        return settings.max_query_chars
