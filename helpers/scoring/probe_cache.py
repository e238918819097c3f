"""Which scorer judges the pool, and does it rank correctly? Probed once, then cached.

``probe`` asks the settings' scorer (scoring/scorers/) to judge the three probe documents
and fill a report (scoring/verdicts.py); a good verdict is cached per (endpoint, model, api,
instruction, document budget, key fingerprint, and what the scorer adds) and dropped when
that endpoint starts failing. With no scorer at all the plugin runs its built-in fusion,
which the report says in words.
"""

from __future__ import annotations

import asyncio
import threading
import time

from .. import mode
from ..errors import DeadlineExceeded, NotConfigured, ProbeFailed, RerankError
from ..settings import Settings
from . import client, scorers
from .verdicts import ProbeReport, Verdict

_cache: dict[tuple, Verdict] = {}
_cache_lock = threading.Lock()


def cache_key(settings: Settings) -> tuple:
    scorer = scorers.for_settings(settings)
    own = scorer.verdict_key(settings) if scorer is not None else ()
    return (settings.endpoint, settings.model, settings.api, settings.instruction, settings.max_doc_chars, settings.key_fingerprint, *own)


def cached(settings: Settings) -> Verdict | None:
    with _cache_lock:
        return _cache.get(cache_key(settings))


def forget(settings: Settings | None = None) -> None:
    """Drop the verdict for ``settings`` (all verdicts when None): the endpoint is failing."""
    with _cache_lock:
        for key in list(_cache) if settings is None else [cache_key(settings)]:
            _cache.pop(key, None)


async def resolve(settings: Settings, deadline: client.Deadline) -> Verdict:
    """The cached verdict, or a fresh probe; raises ``RerankError`` when nothing usable answers."""
    verdict = cached(settings)
    if verdict is not None:
        return verdict
    report = await probe(settings, deadline)
    if not report.ok or report.result is None:
        if report.verdict == "not_configured":
            raise NotConfigured(report.reason)
        # The deepest a route got: an answer that could not be read, else an error status.
        malformed = any(a.malformed for a in report.attempts)
        answered = [a.status for a in report.attempts if a.status not in (None, 404, 405)]
        raise ProbeFailed(report.verdict, report.reason, None if malformed or not answered else answered[-1], malformed)
    return report.result


async def probe(settings: Settings, deadline: client.Deadline | None = None, *, fresh: bool = False) -> ProbeReport:
    """Probe the settings' scorer live; cache and return what was found. Never raises.
    ``fresh``: asked for by a person (Test connection), so nothing remembered holds it back."""
    started = time.monotonic()
    deadline = deadline or client.Deadline.after(settings.timeout)
    report = ProbeReport(False, "error", "", settings.endpoint, settings.model, settings.api)
    scorer = scorers.for_settings(settings)
    try:
        if scorer is None:
            _no_reranker(settings, report)
        else:
            await scorer.probe(settings, deadline, report, fresh=fresh)
    except RerankError as exc:  # the deadline, typically
        report.verdict, report.reason = ("timeout" if isinstance(exc, DeadlineExceeded) else "error"), str(exc)
    report.latency_ms = (time.monotonic() - started) * 1000
    if report.ok and report.result is not None:
        with _cache_lock:
            _cache[cache_key(settings)] = report.result
    return report


def _no_reranker(settings: Settings, report: ProbeReport) -> None:
    if settings.api == "auto":  # the built-in default: nothing to connect to, nothing wrong
        report.ok, report.verdict = True, "fusion"
        report.reason = (f"{mode.describe(settings)}: recall fuses the plugin's searches by rank; "
                         "set 'rerank_endpoint' to add a reranker server")
    else:
        report.verdict = "not_configured"
        report.reason = f"rerank_api is '{settings.api}' but no endpoint is set (setting 'rerank_endpoint'); recall uses built-in fusion meanwhile"


def warm_in_background(settings: Settings) -> threading.Thread:
    """At start: let the scorer load what its first call would wait for (the local model),
    then probe, in a daemon thread, so the first recall finds the verdict cached."""

    def warm() -> None:
        scorer = scorers.for_settings(settings)
        try:
            if scorer is not None:
                scorer.warm(settings)  # however long it takes: nobody is waiting on it
                asyncio.run(probe(settings))
        except Exception:  # the probe reports; a warm-up never raises
            pass

    thread = threading.Thread(target=warm, name="a0_reranker-warm", daemon=True)
    thread.start()
    return thread
