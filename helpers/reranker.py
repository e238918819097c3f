"""The public API other plugins import.

    from usr.plugins.a0_reranker.helpers import reranker
    pairs = reranker.rerank(query, documents)   # [(orig_index, score), ...] best first, or None

``rerank`` and ``arerank`` never raise: ``None`` means "reranker unavailable, keep your
order". ``rerank`` is synchronous and blocking, and safe to call from a thread whose event
loop is running; ``arerank`` is its async twin. ``config`` is a mapping of this plugin's
setting keys; ``None`` means the plugin's configured settings.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from . import calling_agent, client, detect, lifecycle, mode, privacy, scorers, settings_cache
from .breaker import BREAKER, TRIAL
from .cache import CACHE
from .errors import BreakerOpen, NotConfigured, Refused, RerankError
from .process_state import reset_state  # noqa: F401  (the testing switch, public)
from .settings import API_KEY_ENV, Settings, SettingsError, default_mapping
from .verdicts import Verdict, failed_report

__all__ = ["rerank", "arerank", "probe", "aprobe", "status", "warm_up", "reset_state", "PLUGIN_NAME", "load_settings"]

log = logging.getLogger("a0_reranker")
PLUGIN_NAME = "a0_reranker"

Ranking = list[tuple[int, float]]


def configured_mapping(agent: Any = None) -> Mapping[str, Any]:
    """The host's saved config when running inside Agent Zero, else ``default_config.yaml``."""
    if __package__ and __package__.startswith("usr.plugins."):
        try:
            from helpers import plugins  # the host's module, only present inside Agent Zero

            return plugins.get_plugin_config(PLUGIN_NAME, agent=agent) or default_mapping()
        except Exception as exc:  # a broken host config must not break a caller
            log.warning("a0_reranker: reading the plugin config failed (%s); using defaults", type(exc).__name__)
    return default_mapping()


def load_settings(config: Mapping[str, Any] | None = None, agent: Any = None) -> Settings:
    mapping = configured_mapping(agent) if config is None else config
    try:
        # The stored key is part of the key, since the placeholder resolves to it.
        key = ("mapping", tuple(sorted(mapping.items())), os.environ.get(API_KEY_ENV))
        hash(key)
    except (TypeError, AttributeError):  # unhashable values, or not a mapping: not remembered
        return Settings.from_mapping(mapping)
    return settings_cache.remembered(key, lambda: Settings.from_mapping(mapping))


@dataclass
class Scored:
    """Scores in input order, and what they mean."""

    scores: list[float]
    scale: str
    verdict: Verdict | None
    latency_ms: float | None = None  # the scorer's own time, when it was asked (not a cache hit)


def _breaker_key(settings: Settings) -> str:
    if settings.api == "utility":  # no endpoint: what fails is the utility model of the agent asking
        return f"{calling_agent.model_name(calling_agent.current())}|utility"
    return f"{settings.endpoint}|{settings.model}|{settings.api}"


def _skipped(settings: Settings) -> BreakerOpen:
    what = "Agent Zero's utility model" if settings.api == "utility" else "endpoint"
    return BreakerOpen(f"{what} failing; skipped for up to {settings.breaker_cooldown:g} s")


async def score_documents(settings: Settings, query: str, documents: Sequence[str], deadline: client.Deadline | None = None) -> Scored:
    """Scores for ``documents`` in input order, by the settings' scorer, with what that
    scorer declares it needs around it. Raises ``RerankError``; callers fall back."""
    deadline = deadline or client.Deadline.after(settings.timeout)
    scorer = scorers.for_settings(settings)
    if scorer is None:
        raise NotConfigured("no reranker: no endpoint set (setting 'rerank_endpoint')")
    if scorer.sends_text:
        refusal = await privacy.check(settings)
        if refusal:
            raise Refused(refusal)
        if settings.redact:
            query, documents = await privacy.redact_for_sending(query, documents, settings.max_doc_chars)
    # Scores already paid for need neither the scorer nor the breaker's permission.
    verdict = detect.cached(settings)
    hits = _cache_lookup(settings, verdict, query, documents) if verdict and scorer.caches_scores else None
    if hits is not None and all(s is not None for s in hits[1]):
        return Scored(hits[1], verdict.scale, verdict)  # type: ignore[union-attr, arg-type]
    key = _breaker_key(settings)
    admitted = BREAKER.allow(key, settings.breaker_failures, settings.breaker_cooldown) if scorer.may_go_down else None
    if scorer.may_go_down and not admitted:
        raise _skipped(settings)
    try:
        # The probe (once per endpoint or model) gives the scale and the floor's calibration,
        # and keeps a scorer that ranks the probe wrongly out of recall.
        fresh_verdict = await detect.resolve(settings, deadline)
        if scorer.caches_scores and fresh_verdict is not verdict:  # a new probe: earlier lookups named another route
            hits = _cache_lookup(settings, fresh_verdict, query, documents)
        asked = time.monotonic()
        scores = await _score_missing(scorer, settings, fresh_verdict, query, documents, deadline, hits)
        latency_ms = (time.monotonic() - asked) * 1000
        if scorer.may_go_down:
            BREAKER.record_success(key)
    except asyncio.CancelledError:
        raise
    except BaseException:
        if scorer.may_go_down:
            # The endpoint may have changed (a restart with another model, a new version):
            # probe again once it recovers, and count the failure toward the breaker.
            detect.forget(settings)
            if BREAKER.record_failure(key, settings.breaker_failures, settings.breaker_cooldown):
                log.warning("a0_reranker: %s failing; circuit breaker open for %g s", settings.endpoint or key, settings.breaker_cooldown)
        raise
    finally:
        if admitted == TRIAL:  # settled above, unless cancelled: then the next caller may try
            BREAKER.release_trial(key)
    return Scored(scores, fresh_verdict.scale, fresh_verdict, latency_ms)


def _cache_lookup(settings: Settings, verdict: Verdict, query: str, documents: Sequence[str]):
    """(keys, cached scores or None per document), or None when the cache is off."""
    if not settings.cache:
        return None
    keys = CACHE.keys((detect.cache_key(settings), verdict.route), query, documents)
    return keys, CACHE.lookup(keys)


async def _score_missing(scorer, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline, hits) -> list[float]:
    """Ask the scorer only for the documents the cache does not hold; remember its answer."""
    if hits is None:
        return await scorer.score(settings, verdict, query, documents, deadline)
    keys, known = hits
    missing = [i for i, s in enumerate(known) if s is None]
    fresh = await scorer.score(settings, verdict, query, [documents[i] for i in missing], deadline)
    CACHE.store([keys[i] for i in missing], fresh, settings.cache_ttl, settings.cache_entries)
    answers = iter(fresh)
    return [next(answers) if s is None else s for s in known]


def ranking(scores: Sequence[float]) -> Ranking:
    """Best first; ties keep the input order, so equal scores never shuffle documents."""
    return sorted(((i, s) for i, s in enumerate(scores)), key=lambda pair: (-pair[1], pair[0]))


async def arerank(query: str, documents: Sequence[str], *, config: Mapping[str, Any] | None = None) -> Ranking | None:
    try:
        documents = list(documents)
        if not documents:
            return []
        if not isinstance(query, str) or not all(isinstance(d, str) for d in documents):
            raise TypeError("query and documents must be strings")
        settings = load_settings(config)
        if not settings.enabled or not settings.has_reranker:
            return None
        return ranking((await score_documents(settings, query, documents)).scores)
    except asyncio.CancelledError:
        raise
    except (RerankError, SettingsError, TypeError) as exc:
        log.info("a0_reranker: rerank unavailable: %s", exc)
        return None
    except Exception:  # never into the caller's code
        log.exception("a0_reranker: unexpected error in arerank")
        return None


# ---------------------------------------------------------------------------------------
# The synchronous bridge: one private event loop in a daemon thread. Running the coroutine
# there (not with asyncio.run in the caller's thread) works whether or not the caller's
# thread has a running loop, and keeps one pooled HTTP client across calls.
_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None


def _bridge_loop() -> asyncio.AbstractEventLoop:
    global _loop, _loop_thread
    with _loop_lock:
        if _loop is None or not _loop_thread or not _loop_thread.is_alive():
            loop = asyncio.new_event_loop()
            # uninstall stops it (lifecycle); the next synchronous call starts a new one
            _loop_thread = lifecycle.start_thread(_serve, args=(loop,), name="sync", stop=lambda: loop.call_soon_threadsafe(loop.stop))
            _loop = loop
        return _loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:  # stopped: end what still runs on it (its callers get their default), then close
        try:
            loop.run_until_complete(_wind_down())
        finally:
            loop.close()


async def _wind_down() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await client.close_client()


def _run_sync(coro_factory, timeout: float, default: Any) -> Any:
    if threading.current_thread() is _loop_thread:  # called from our own loop: it would deadlock
        log.warning("a0_reranker: the synchronous API was called from its own worker loop; use arerank")
        return default
    coro = coro_factory()
    try:
        future = asyncio.run_coroutine_threadsafe(coro, _bridge_loop())
    except RuntimeError:  # the loop was closed by uninstall (lifecycle) just now
        coro.close()
        return default
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        return default
    except Exception:
        return default


def rerank(query: str, documents: Sequence[str], *, config: Mapping[str, Any] | None = None) -> Ranking | None:
    """Synchronous ``arerank``. Blocks the calling thread for at most the configured timeout."""
    try:
        documents = list(documents)  # once: a generator can be read only once
        if not documents:
            return []
        timeout = load_settings(config).timeout + 1.0
    except Exception:
        return None
    return _run_sync(lambda: arerank(query, documents, config=config), timeout, None)


async def aprobe(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A live correctness probe; the report as a dict (no secrets). Never raises."""
    try:
        settings = load_settings(config)
    except SettingsError as exc:
        return {**failed_report("bad_setting", str(exc)), "setting": exc.key}
    scorer = scorers.for_settings(settings)
    sends_text = scorer is not None and scorer.sends_text
    refusal = await privacy.check(settings) if sends_text else ""
    if refusal:
        return failed_report("refused", refusal, settings.endpoint, privacy.notes(settings, sends_text))
    detect.forget(settings)
    report = await detect.probe(settings, fresh=True)
    out = report.as_dict()
    out["notes"] += privacy.notes(settings, sends_text)
    out["mode_text"] = mode.describe(settings, out.get("route"))
    return out


def probe(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    try:
        timeout = load_settings(config).timeout + 1.0
    except Exception:
        timeout = 10.0
    fail = failed_report("error", "the probe did not finish in time")
    return _run_sync(lambda: aprobe(config), timeout, fail)


def status() -> dict[str, Any]:
    """The mode in words, counters, latency and breaker state; safe to show anywhere."""
    from .stats import STATS

    try:
        active = mode.as_dict(load_settings(None))
    except SettingsError as exc:
        active = {"mode": None, "mode_text": f"a setting is invalid: {exc}"}
    return {**active, "stats": STATS.snapshot(), "breaker": BREAKER.snapshot(), "checked_at": time.time()}


def warm_up() -> None:
    """At start: let the scorer load what its first recall would wait for (the in-process
    cross-encoder), in the background, and probe it."""
    try:
        settings = load_settings(None)
        scorer = scorers.for_settings(settings)
        if settings.enabled and scorer is not None and scorer.needs_warm_up:
            detect.warm_in_background(settings)
    except Exception as exc:
        log.info("a0_reranker: warm-up skipped: %s", exc)
