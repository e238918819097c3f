"""``rerank_api: utility``: Agent Zero's utility model as the judge (a scorer).

Every Agent Zero user has a utility model (the small LLM the host calls for memorizing,
chat names and its own memory post-filter), so this judge needs no server. One call per
search: the prompt (scoring/judge.py) shows the reranker query and the numbered pool, cut
to a character budget; the answer, a JSON array of the useful memories' numbers best first,
becomes one score per memory. The model is the one of the agent the call is made for
(scoring/calling_agent.py); with none, the judge is unavailable and the fused order stands.

What applies around it (scoring/score.py), by what it declares: memory text leaves the
process when the utility model is a hosted API, so redaction applies; the private-only
guard checks the utility model's api_base (endpoint_guard.py), a hosted one has none. The
breaker counts its failures per utility model; scores are cached per model (verdict_key),
and the verdict too, so switching the utility model probes again.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ... import vocabulary
from ...vocabulary import scorer_words as words
from ...deadline import RECALL_SECONDS, Deadline
from ...errors import DeadlineExceeded, MalformedResponse, NotConfigured, RerankError, TooSlow, TransportError
from ...settings import Settings
from .. import call_failure, calling_agent, endpoint_guard, judge
from ..verdicts import IRRELEVANT, NEAR_MISS, PROBE_QUERY, ProbeReport, RELEVANT, Verdict

# The probe: three trials, each the three probe memories in another order, asked at once
# (a hosted model answers them side by side, a local server one after the other) at the
# temperature the host calls its utility model with. Every trial must put the relevant
# memory first, so a model that answers at random does not pass on one lucky draw, nor
# one that always names the first, or the last, memory shown, or lists them in order.
PROBE_ORDERS = (
    (NEAR_MISS, IRRELEVANT, RELEVANT),
    (RELEVANT, IRRELEVANT, NEAR_MISS),
    (IRRELEVANT, RELEVANT, NEAR_MISS),
)
# A call cut short having had nearly all of rerank_timeout (all but a fifth of it, or a
# quarter second for the plugin's own steps before the call) had the time a recall gives
# it: a judge that needs longer is too slow for recall, not unlucky. One cut short sooner
# (the recall's own time running out) says nothing about its speed.
SLACK_SHARE, SLACK_MIN_S = 0.2, 0.25


def recall_gives(settings: Settings) -> float:
    """The most a recall gives one call: rerank_timeout, within the recall's own cap."""
    return min(settings.timeout, RECALL_SECONDS)


def had_its_time(allowed: float, settings: Settings) -> bool:
    # Against what a recall can give, not rerank_timeout alone: with rerank_timeout 30 a
    # 29 s judge was cut at 15 s by every recall, never "too slow", and tried on every one.
    gives = recall_gives(settings)
    return allowed >= gives - max(SLACK_MIN_S, SLACK_SHARE * gives)


_LATENCIES = 50  # recent answer times kept per model, for the status views and the skip


@dataclass(frozen=True)
class AnswerTimes:
    """A utility model's recent answer times, as the status shows them."""

    last_ms: float
    median_ms: float
    calls: int


class UtilityScorer:
    name = "utility"
    api = "utility"
    mode = vocabulary.UTILITY
    sends_text = True  # the utility model may be a hosted API: redaction applies
    may_go_down = True  # a provider can fail or rate-limit for a while: the breaker applies
    caches_scores = True  # an LLM call is worth saving: the score cache applies
    needs_warm_up = False
    # Its probe costs three LLM calls: the verdict, passed or failed (too slow, misranks),
    # is kept for the settings, never asked again per search (scoring/probing.py).
    probes_once = True
    asks_utility_model = True
    judges_recall_at_once = True  # memories and solutions in one prompt (recall/judge_call.py)
    # Its calls are the chat's own model, asked in the chat's loop and paid per call: it
    # answers the 12 calibration questions written by hand, within the recall that asks.
    calibrates_apart = False
    calibration_questions = 12

    def __init__(self) -> None:
        self._latencies: dict[str, collections.deque] = {}
        self._lock = threading.Lock()

    def breaker_key(self, settings: Settings) -> str:
        # No endpoint: what fails is the utility model of the agent asking.
        return f"{calling_agent.model_name(calling_agent.current())}|utility"

    def owns_breaker(self, settings: Settings, key: str) -> bool:
        # One breaker per utility model, and no agent is asking at a Save: all of them.
        return key.endswith("|utility")

    def guarded_endpoint(self, settings: Settings) -> tuple[str, str] | None:
        """The judge sends memory text to the calling agent's utility model: its api_base is
        the endpoint to check. No api_base is a provider's hosted service: never private."""
        agent = calling_agent.current()
        if agent is None:
            return None  # nobody to ask: no text can go anywhere (the judge says there is no agent)
        endpoint = calling_agent.utility_endpoint(agent)
        host = endpoint_guard.hostname(endpoint) if endpoint else ""
        return host, vocabulary.utility_endpoint_named(calling_agent.model_name(agent), endpoint, host)

    def verdict_key(self, settings: Settings) -> tuple:
        # Another utility model (a per-chat override, a changed setting) is probed again and
        # gets scores of its own; the judge's budgets and time change what it reads and how
        # long it may take.
        return (
            "utility",
            calling_agent.model_name(calling_agent.current()),
            settings.judge_max_chars,
            settings.judge_doc_chars,
            settings.max_query_chars,
            settings.timeout,
        )

    async def probe(self, settings: Settings, deadline: Deadline, report: ProbeReport, *, fresh: bool = False) -> None:
        agent = calling_agent.current()
        report.model = calling_agent.model_name(agent)
        started = time.monotonic()
        trials = await asyncio.gather(
            *(self._trial(settings, agent, order, deadline) for order in PROBE_ORDERS), return_exceptions=True
        )
        seconds = time.monotonic() - started
        failed = next((t for t in trials if isinstance(t, TooSlow)), None) or next(
            (t for t in trials if isinstance(t, BaseException)), None
        )
        if isinstance(failed, TooSlow):
            report.verdict, report.reason = "too_slow", str(failed)
            return
        if isinstance(failed, RerankError):
            report.verdict, report.reason = _probe_failure(failed, report.model)
            return
        if failed is not None:  # not a RerankError: never expected, never hidden
            raise failed
        wrong = next((answered for placed_first, answered, _ in trials if not placed_first), None)
        if wrong is not None:
            report.verdict = "misranks"
            report.reason = words.judge_misranks(report.model, len(PROBE_ORDERS), wrong)
            return
        weak = any(off_topic for _, _, off_topic in trials)
        report.ok, report.detected_api = True, self.api
        report.verdict = "weak" if weak else "ok"
        report.reason = words.judge_probed(report.model, weak, len(PROBE_ORDERS), seconds, settings.timeout)
        report.result = Verdict(
            None,
            "probability",
            judge.LISTED_FIRST,
            judge.UNLISTED,
            None,
            "weak" if weak else "pass",
            latency_s=round(seconds, 3),
        )

    async def _trial(
        self, settings: Settings, agent: Any, order: Sequence[str], deadline: Deadline
    ) -> tuple[bool, str, bool]:
        """One probe trial: (the relevant memory first, what it listed in words, the
        off-topic memory listed too)."""
        listed = await self._judge(settings, agent, PROBE_QUERY, order, deadline)
        relevant, near, irrelevant = (order.index(d) for d in (RELEVANT, NEAR_MISS, IRRELEVANT))
        named = {relevant: "relevant", near: "near miss", irrelevant: "irrelevant"}
        answered = words.judge_listed([named[n] for n in listed])
        return bool(listed) and listed[0] == relevant, answered, irrelevant in listed

    async def score(
        self, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline
    ) -> list[float]:
        """One score per document; callable on its own (a labelled set, a calibration)
        within ``deadline``, with the agent to ask set by calling_agent.asking."""
        agent = calling_agent.current()
        typical = self.typical_seconds(calling_agent.model_name(agent))
        if typical is not None and typical > deadline.remaining():
            # Never wait for nothing: it answers in about `typical`, and there is less left.
            raise DeadlineExceeded(words.judge_usually(typical, max(0.0, deadline.remaining())))
        listed = await self._judge(settings, agent, query, documents, deadline)
        return judge.scores(listed, len(documents))

    def warm(self, settings: Settings) -> None:
        pass

    def query_chars(self, settings: Settings) -> int:
        return settings.max_query_chars  # its prompt's own budgets share it out (judge.py)

    async def _judge(
        self, settings: Settings, agent: Any, query: str, documents: Sequence[str], deadline: Deadline
    ) -> list[int]:
        """One utility-model call within ``deadline``: the listed numbers, best first.
        Raises ``TooSlow`` when it had the whole rerank_timeout and gave no answer."""
        if agent is None or not callable(getattr(agent, "call_utility_model", None)):
            raise NotConfigured(words.NO_AGENT)
        prompt = judge.build(
            query, documents, settings.judge_max_chars, settings.judge_doc_chars, settings.max_query_chars
        )
        allowed = min(settings.timeout, deadline.remaining())
        if allowed <= 0:
            raise DeadlineExceeded(words.judge_no_time(settings.timeout))
        started = time.monotonic()
        model = calling_agent.model_name(agent)
        window = asyncio.timeout(allowed)
        try:
            async with window:
                answer = await agent.call_utility_model(system=prompt.system, message=prompt.message)
        except asyncio.CancelledError:
            raise
        except TimeoutError as exc:
            if not window.expired():  # the provider's own (a socket's ETIMEDOUT): a failed call, not slowness
                raise TransportError(words.judge_call_failed(type(exc).__name__, call_failure.reason(exc))) from None
            waited = time.monotonic() - started
            if had_its_time(allowed, settings):
                raise TooSlow(too_slow_words(model, allowed, settings), waited) from None
            raise DeadlineExceeded(words.judge_not_in_time(allowed)) from None
        except Exception as exc:
            # A provider error, a rate limit, a missing key: its kind and what its kinds and
            # status tell (call_failure.py), never its text (it may name a URL or key).
            raise TransportError(words.judge_call_failed(type(exc).__name__, call_failure.reason(exc))) from None
        self._remember(model, (time.monotonic() - started) * 1000)
        return judge.read_answer(answer, prompt.shown)

    def typical_seconds(self, model: str) -> float | None:
        """The median of this model's recent answer times, in seconds; None before any. Only
        answers count: a call cut short says how long it was waited for, not how long it
        takes (a judge that needs the whole rerank_timeout is kept out by its verdict)."""
        with self._lock:
            times = sorted(self._latencies.get(model) or ())
        return times[len(times) // 2] / 1000 if times else None

    def _remember(self, model: str, latency_ms: float) -> None:
        with self._lock:
            self._latencies.setdefault(model, collections.deque(maxlen=_LATENCIES)).append(latency_ms)

    def latency(self) -> dict[str, AnswerTimes]:
        """Per utility model: the last and the median answer time (ms) of recent calls."""
        with self._lock:
            recent = {model: list(times) for model, times in self._latencies.items() if times}
        return {
            model: AnswerTimes(round(times[-1], 1), round(sorted(times)[len(times) // 2], 1), len(times))
            for model, times in recent.items()
        }

    def forget(self) -> None:
        with self._lock:
            self._latencies.clear()


# A failed probe call, by the first kind that matches: (kind, verdict, reason).
_PROBE_FAILURES = (
    (DeadlineExceeded, "timeout", lambda exc, model: str(exc)),
    (NotConfigured, "not_configured", lambda exc, model: str(exc)),
    (MalformedResponse, "misranks", lambda exc, model: words.judge_no_numbers(model, str(exc))),
    (RerankError, "error", lambda exc, model: str(exc)),
)


def too_slow_words(model: str, waited: float, settings: Settings) -> str:
    """Why the judge is not used, in plain words with the measured seconds and what to
    change: the chat line, the status tool and Test connection all say this."""
    return words.judge_too_slow(model, waited, settings.timeout, settings.timeout < RECALL_SECONDS)


def _probe_failure(exc: RerankError, model: str) -> tuple[str, str]:
    return next((verdict, reason(exc, model)) for kind, verdict, reason in _PROBE_FAILURES if isinstance(exc, kind))


UTILITY = UtilityScorer()
