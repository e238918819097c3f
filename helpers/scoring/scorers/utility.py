"""``rerank_api: utility``: Agent Zero's utility model as the judge (a scorer).

Every Agent Zero user has a utility model (the small LLM the host calls for memorizing,
chat names and its own memory post-filter), so this judge needs no server. One call per
search: the prompt (scoring/judge.py) shows the reranker query and the numbered pool, cut
to a character budget; the answer, a JSON array of the useful memories' numbers best first,
becomes one score per memory. The model is the one of the agent the call is made for
(scoring/calling_agent.py); with none, the judge is unavailable and the fused order stands.

What applies around it (scoring/score.py), by what it declares: memory text leaves the
process when the utility model is a hosted API, so redaction applies; the private-only
guard checks the utility model's api_base (privacy.py), a hosted one has none. The breaker counts its failures per utility model; scores are cached per model
(verdict_key), and the verdict too, so switching the utility model probes again.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from typing import Any, Sequence

from ...errors import DeadlineExceeded, MalformedResponse, NotConfigured, RerankError, TransportError
from ...settings import Settings
from .. import calling_agent, judge
from ..client import Deadline
from ..verdicts import IRRELEVANT, NEAR_MISS, PROBE_QUERY, ProbeReport, RELEVANT, Verdict

NAME = "Agent Zero's utility model"
# The probe shows the relevant memory last: a judge that answers [0], or lists everything
# in the order shown, does not pass.
PROBE_ORDER = (NEAR_MISS, IRRELEVANT, RELEVANT)
_LATENCIES = 50  # recent answer times kept per model, for the status views


class UtilityScorer:
    name = "utility"
    sends_text = True  # the utility model may be a hosted API: redaction applies
    may_go_down = True  # a provider can fail or rate-limit for a while: the breaker applies
    caches_scores = True  # an LLM call is worth saving: the score cache applies
    needs_warm_up = False

    def __init__(self) -> None:
        self._latencies: dict[str, collections.deque] = {}
        self._lock = threading.Lock()

    def verdict_key(self, settings: Settings) -> tuple:
        # Another utility model (a per-chat override, a changed setting) is probed again and
        # gets scores of its own; the judge's budgets change what it reads.
        return ("utility", calling_agent.model_name(calling_agent.current()), settings.judge_max_chars, settings.judge_doc_chars)

    async def probe(self, settings: Settings, deadline: Deadline, report: ProbeReport, *, fresh: bool = False) -> None:
        agent = calling_agent.current()
        report.model = calling_agent.model_name(agent)
        try:
            listed = await self._judge(settings, agent, PROBE_QUERY, PROBE_ORDER, deadline)
        except RerankError as exc:
            report.verdict, report.reason = _probe_failure(exc)
            return
        relevant, near, irrelevant = (PROBE_ORDER.index(d) for d in (RELEVANT, NEAR_MISS, IRRELEVANT))
        named = {relevant: "relevant", near: "near miss", irrelevant: "irrelevant"}
        answered = f"it listed {[named[n] for n in listed] or 'nothing'}"
        if not listed or listed[0] != relevant:
            report.verdict = "misranks"
            report.reason = f"{NAME} ({report.model}) did not put the relevant probe memory first: {answered}"
            return
        scores = judge.scores(listed, len(PROBE_ORDER))
        report.ok = True
        report.verdict = "weak" if irrelevant in listed else "ok"
        what = "ranks the probe correctly" if report.verdict == "ok" else "puts the answer first but also lists the off-topic memory"
        report.reason = f"{NAME} ({report.model}) {what} ({answered})"
        report.result = Verdict(None, "probability", scores[relevant], scores[irrelevant], None, "pass" if report.verdict == "ok" else "weak")

    async def score(self, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline) -> list[float]:
        listed = await self._judge(settings, calling_agent.current(), query, documents, deadline)
        return judge.scores(listed, len(documents))

    def warm(self, settings: Settings) -> None:
        pass

    async def _judge(self, settings: Settings, agent: Any, query: str, documents: Sequence[str], deadline: Deadline) -> list[int]:
        """One utility-model call within ``deadline``: the listed numbers, best first."""
        if agent is None or not callable(getattr(agent, "call_utility_model", None)):
            raise NotConfigured(f"no agent to ask: {NAME} is asked for an Agent Zero chat (recall, the status tool, Test connection)")
        prompt = judge.build(query, documents, settings.judge_max_chars, settings.judge_doc_chars)
        remaining = deadline.remaining()
        if remaining <= 0:
            raise DeadlineExceeded(f"no time left to ask {NAME} (rerank_timeout {settings.timeout:g} s)")
        started = time.monotonic()
        try:
            async with asyncio.timeout(remaining):
                answer = await agent.call_utility_model(system=prompt.system, message=prompt.message)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            raise DeadlineExceeded(f"{NAME} did not answer within rerank_timeout ({settings.timeout:g} s)") from None
        except Exception as exc:  # a provider error, a rate limit, a missing key: the type only, never its text (it may name a URL or key)
            raise TransportError(f"{NAME} call failed ({type(exc).__name__})") from None
        self._remember(calling_agent.model_name(agent), (time.monotonic() - started) * 1000)
        return judge.read_answer(answer, prompt.shown)

    def _remember(self, model: str, latency_ms: float) -> None:
        with self._lock:
            self._latencies.setdefault(model, collections.deque(maxlen=_LATENCIES)).append(latency_ms)

    def latency(self) -> dict[str, dict[str, float]]:
        """Per utility model: the last and the median answer time (ms) of recent calls."""
        with self._lock:
            recent = {model: list(times) for model, times in self._latencies.items() if times}
        return {model: {"last_ms": round(times[-1], 1), "median_ms": round(sorted(times)[len(times) // 2], 1), "calls": len(times)}
                for model, times in recent.items()}

    def forget(self) -> None:
        with self._lock:
            self._latencies.clear()


# A failed probe call, by the first kind that matches: (kind, verdict, reason).
_PROBE_FAILURES = (
    (DeadlineExceeded, "timeout", str),
    (NotConfigured, "not_configured", str),
    (MalformedResponse, "misranks", lambda exc: f"{NAME} did not answer with memory numbers: {exc}"),
    (RerankError, "error", str),
)


def _probe_failure(exc: RerankError) -> tuple[str, str]:
    return next((verdict, reason(exc)) for kind, verdict, reason in _PROBE_FAILURES if isinstance(exc, kind))


UTILITY = UtilityScorer()
