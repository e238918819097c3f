"""Probing a scorer, and keeping its verdict: does it rank correctly, and on what scale?

``probe`` asks the settings' scorer (scoring/scorers/) to judge the three probe documents
and fill a report (scoring/verdicts.py); a good verdict is kept under the choice's verdict
key (scorers.verdict_key: endpoint, model, api, instruction, document budget, key
fingerprint, and what the scorer adds) and dropped when that endpoint starts failing. With
no scorer at all the plugin runs its built-in fusion, which the report says in words.

A scorer whose probe is costly (``probes_once``: the utility judge, three LLM calls) keeps
its failed verdict too: a judge too slow for recall, or one that misranks the probe, is
kept like a passed one, so no search waits for it or probes it again. It is tried again
rarely and off the recall path: once its cool-down (5 minutes, doubling each time it fails
again, at most 6 hours) is over, the next search starts a trial in the background and
goes on with the fused order; a trial that passes puts the judge back.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from .. import vocabulary
from ..deadline import GRACE_S, Deadline
from ..errors import DeadlineExceeded, NotConfigured, ProbeFailed, RerankError
from ..settings import Settings
from .scorers import Choice
from .single_flight import SingleFlight
from .verdicts import ProbeReport, Verdict

_cache: dict[tuple, Verdict] = {}
_cache_lock = threading.Lock()
_probing = SingleFlight()  # a search's probe: the searches that come meanwhile wait for it

# The failed verdicts kept for a probes_once scorer, and when each is tried again.
KEPT_VERDICTS = ("too_slow", "misranks")
FIRST_RETRY_S = 300.0
MAX_RETRY_S = 6 * 3600.0
_clock = time.monotonic  # the tests' switch for the cool-down


@dataclass
class _Kept:
    error: ProbeFailed
    retry_at: float
    cooldown: float
    trying: bool = False


_kept: dict[tuple, _Kept] = {}
_trials: set = set()  # the background trials running, so none is collected half-way


def cached(choice: Choice | None) -> Verdict | None:
    """The passed verdict kept for ``choice``, or None (None too when there is no reranker)."""
    if choice is None:
        return None
    with _cache_lock:
        return _cache.get(choice.key)


def forget(choice: Choice | None = None) -> None:
    """Drop the verdict for ``choice`` (all verdicts when None), passed or kept failed:
    the endpoint is failing, or a person asks again (Test connection)."""
    with _cache_lock:
        for key in list(_cache) + list(_kept) if choice is None else [choice.key]:
            _cache.pop(key, None)
            _kept.pop(key, None)


def known_failure(choice: Choice) -> ProbeFailed | None:
    """The failed verdict kept for ``choice``, or None. Past its cool-down, a trial
    starts in the background (on the running event loop) while this one still stands."""
    with _cache_lock:
        kept = _kept.get(choice.key)
        due = kept is not None and not kept.trying and _clock() >= kept.retry_at
        if due:
            kept.trying = True
    if kept is None:
        return None
    if due:
        _try_again(choice, kept)
    return kept.error


def kept_failure(choice: Choice | None) -> ProbeFailed | None:
    """The failed verdict kept for ``choice``, without starting a trial (the status views)."""
    if choice is None:
        return None
    with _cache_lock:
        kept = _kept.get(choice.key)
    return kept.error if kept is not None else None


def keeps_out(choice: Choice | None) -> bool:
    """A kept failed verdict keeps this scorer out of recall (a probes_once scorer too slow
    for recall, or misranking the probe): the search gathers and costs what fusion alone does."""
    return choice is not None and kept_failure(choice) is not None


def keep_failure(choice: Choice, verdict: str, reason: str) -> None:
    """Keep a failed verdict for ``choice`` (a probes_once scorer's), dropping a passed
    one; each failure in a row doubles the wait before the next trial."""
    key = choice.key
    with _cache_lock:
        previous = _kept.get(key)
        cooldown = FIRST_RETRY_S if previous is None else min(MAX_RETRY_S, previous.cooldown * 2)
        _kept[key] = _Kept(ProbeFailed(verdict, reason), _clock() + cooldown, cooldown)
        _cache.pop(key, None)


def _try_again(choice: Choice, kept: _Kept) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop to run a trial on: the next search with one starts it
        kept.trying = False
        return

    async def trial() -> None:
        try:
            # The whole rerank_timeout, as a recall's first search gives it: the trial
            # tells whether the judge now answers within what recall can give.
            await _probe(choice.settings, choice, Deadline.after(choice.settings.timeout))
        finally:
            kept.trying = False

    task = loop.create_task(trial())
    _trials.add(task)
    task.add_done_callback(_trials.discard)


def background_trials() -> list:
    """The background trials still running (for the tests and the bench to await)."""
    return list(_trials)


async def resolve(choice: Choice, deadline: Deadline) -> Verdict:
    """The cached verdict, or a fresh probe; raises ``RerankError`` when nothing usable
    answers, or when a kept failed verdict stands (``known_failure``)."""
    verdict = cached(choice)
    if verdict is not None:
        return verdict
    failed = known_failure(choice)
    if failed is not None:
        raise failed
    try:
        # The probe ends at its deadline with its own report (too slow, timeout): the grace
        # lets that report, not this wait's timeout, answer the search that started it.
        within = deadline.remaining() + GRACE_S
        report = await _probing.run(choice.key, lambda: _probe(choice.settings, choice, deadline), within)
    except TimeoutError:  # another search's probe of it, still under way when this one's time ran out
        raise DeadlineExceeded(vocabulary.PROBE_NOT_IN_TIME) from None
    if not report.ok or report.result is None:
        if report.verdict == "not_configured":
            raise NotConfigured(report.reason)
        # The deepest a route got: an answer that could not be read, else an error status.
        malformed = any(a.malformed for a in report.attempts)
        answered = [a.status for a in report.attempts if a.status not in (None, 404, 405)]
        raise ProbeFailed(report.verdict, report.reason, None if malformed or not answered else answered[-1], malformed)
    return report.result


async def probe(
    settings: Settings, choice: Choice | None, deadline: Deadline | None = None, *, fresh: bool = False
) -> ProbeReport:
    """Probe ``choice`` (the caller's scorers.choose of ``settings``; None: they name no
    reranker) live; keep and return what was found. Never raises. ``fresh``: asked for by a
    person (Test connection), so nothing remembered holds it back."""
    return await _probe(settings, choice, deadline or Deadline.after(settings.timeout), fresh=fresh)


async def _probe(settings: Settings, choice: Choice | None, deadline: Deadline, *, fresh: bool = False) -> ProbeReport:
    started = time.monotonic()
    report = ProbeReport(False, "error", "", settings.endpoint, settings.model, settings.api)
    try:
        if choice is None:
            _no_reranker(settings, report)
        else:
            await choice.scorer.probe(settings, deadline, report, fresh=fresh)
    except RerankError as exc:  # the deadline, typically
        report.verdict, report.reason = ("timeout" if isinstance(exc, DeadlineExceeded) else "error"), str(exc)
    report.latency_ms = (time.monotonic() - started) * 1000
    if choice is None:
        return report
    if report.ok and report.result is not None:
        with _cache_lock:
            _cache[choice.key] = report.result
            _kept.pop(choice.key, None)
    elif report.verdict in KEPT_VERDICTS and choice.scorer.probes_once:
        keep_failure(choice, report.verdict, report.reason)
    return report


def _no_reranker(settings: Settings, report: ProbeReport) -> None:
    if settings.api == "auto":  # the built-in default: nothing to connect to, nothing wrong
        report.ok, report.verdict = True, "fusion"
        report.reason = vocabulary.fusion_alone(settings)
    else:
        report.verdict = "not_configured"
        report.reason = vocabulary.api_without_endpoint(settings)


def warm_in_background(choice: Choice) -> threading.Thread:
    """At start: let the chosen scorer load what its first call would wait for (the local
    model), then probe, in a daemon thread, so the first recall finds the verdict cached."""

    def warm() -> None:
        try:
            choice.scorer.warm(choice.settings)  # however long it takes: nobody is waiting on it
            asyncio.run(probe(choice.settings, choice))
        except Exception:  # the probe reports; a warm-up never raises
            pass

    thread = threading.Thread(target=warm, name="a0_reranker-warm", daemon=True)
    thread.start()
    return thread
