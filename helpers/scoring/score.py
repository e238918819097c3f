"""Scores for documents by the configured scorer, with what that scorer needs around it:
the privacy guard, the probe's verdict (probe_cache.py), the score cache and the circuit
breaker. The async side of the public API (reranker.py) is here too."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .. import mode
from ..errors import BreakerOpen, NotConfigured, Refused, RerankError, TooSlow
from ..settings import Settings, SettingsError, shown_endpoint
from ..settings_cache import load_settings
from . import calibration, calling_agent, client, privacy, probe_cache, scorers
from .breaker import BREAKER, TRIAL
from .cache import CACHE
from .verdicts import Verdict, failed_report

log = logging.getLogger("a0_reranker")

Ranking = list[tuple[int, float]]


@dataclass
class Scored:
    """Scores in input order, and what they mean."""

    scores: list[float]
    scale: str
    verdict: Verdict | None
    latency_ms: float | None = None  # the scorer's own time, when it was asked (not a cache hit)
    same_call: bool = False  # scored by the call another search of the recall made (the utility judge's solutions)


def _breaker_key(settings: Settings) -> str:
    if settings.api == "utility":  # no endpoint: what fails is the utility model of the agent asking
        return f"{calling_agent.model_name(calling_agent.current())}|utility"
    return f"{shown_endpoint(settings.endpoint)}|{settings.model}|{settings.api}"  # the status views list these keys


def close_breakers(*settings: Settings | None) -> None:
    """Close the breaker of each of these settings (a Save changed the endpoint, key, model or
    API): the next recall asks at once instead of waiting out the old settings' cool-down.
    The utility judge's breakers are per utility model, and no agent is asking at a Save:
    all of them."""
    for one in settings:
        if one is None:
            continue
        key = None if one.api == "utility" else _breaker_key(one)
        BREAKER.close(lambda k: k.endswith("|utility") if key is None else k == key)


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
    # A judge kept out by its verdict (too slow for recall, misranks the probe) is not
    # asked and costs neither time nor the breaker: the verdict says why, the search goes
    # on fused.
    kept_out = probe_cache.known_failure(settings)
    if kept_out is not None:
        raise kept_out
    if scorer.sends_text:
        refusal = await privacy.check(settings)
        if refusal:
            raise Refused(refusal)
        if settings.redact:
            query, documents = await privacy.redact_for_sending(query, documents, settings.max_doc_chars)
    # Scores already paid for need neither the scorer nor the breaker's permission.
    verdict = probe_cache.cached(settings)
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
        fresh_verdict = await probe_cache.resolve(settings, deadline)
        if scorer.caches_scores and fresh_verdict is not verdict:  # a new probe: earlier lookups named another route
            hits = _cache_lookup(settings, fresh_verdict, query, documents)
        asked = time.monotonic()
        scores = await _score_missing(scorer, settings, fresh_verdict, query, documents, deadline, hits)
        latency_ms = (time.monotonic() - asked) * 1000
        if scorer.may_go_down:
            BREAKER.record_success(key)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        if isinstance(exc, TooSlow) and scorer.probes_once:  # learned from this call: kept like a verdict
            probe_cache.keep_failure(settings, "too_slow", str(exc))
        if scorer.may_go_down:
            # The endpoint may have changed (a restart with another model, a new version):
            # probe again once it recovers, and count the failure toward the breaker.
            if not scorer.probes_once:
                probe_cache.forget(settings)
            if BREAKER.record_failure(key, settings.breaker_failures, settings.breaker_cooldown):
                log.warning("a0_reranker: %s failing; circuit breaker open for %g s", shown_endpoint(settings.endpoint) or key, settings.breaker_cooldown)
        raise
    finally:
        if admitted == TRIAL:  # settled above, unless cancelled: then the next caller may try
            BREAKER.release_trial(key)
    return Scored(scores, fresh_verdict.scale, fresh_verdict, latency_ms)


async def earned_say(settings: Settings, deadline: client.Deadline, embedder: Any = None) -> calibration.Trust:
    """The say the settings' scorer earned on the calibration set (calibration.py): kept,
    or measured now within ``deadline``, once its probe has passed. The calibration's text
    is the plugin's own, so the scorer is asked directly: its calls neither count toward
    the breaker nor fill the score cache."""
    scorer = scorers.for_settings(settings)
    verdict = probe_cache.cached(settings)
    if scorer is None or verdict is None:
        return calibration.Trust(calibration.UNMEASURED, reason="it has not passed its probe")

    async def score(query: str, documents: Sequence[str], within: client.Deadline) -> list[float]:
        return await scorer.score(settings, verdict, query, list(documents), within)

    return await calibration.trust(settings, score, deadline, embedder)


def _cache_lookup(settings: Settings, verdict: Verdict, query: str, documents: Sequence[str]):
    """(keys, cached scores or None per document), or None when the cache is off."""
    if not settings.cache:
        return None
    keys = CACHE.keys((probe_cache.cache_key(settings), verdict.route), query, documents)
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
    probe_cache.forget(settings)
    report = await probe_cache.probe(settings, fresh=True)
    out = report.as_dict()
    out["notes"] += privacy.notes(settings, sends_text)
    out["mode_text"] = mode.describe(settings, out.get("route"))
    if report.ok and report.result is not None and scorer is not None:
        # How much say it earns in recall: measured again, as a person asked.
        calibration.forget(settings)
        trust = await earned_say(settings, client.Deadline.after(CALIBRATION_S))
        out["trust"] = trust.as_dict()
        out["trust_text"] = calibration.words(trust, mode.judge_name(settings, report.result.route))
    return out


CALIBRATION_S = 30.0  # Test connection's calibration: a person waits, but not for ever


def warm_up() -> None:
    """At start: let the scorer load what its first recall would wait for (the in-process
    cross-encoder), in the background, and probe it."""
    try:
        settings = load_settings(None)
        scorer = scorers.for_settings(settings)
        if settings.enabled and scorer is not None and scorer.needs_warm_up:
            probe_cache.warm_in_background(settings)
    except Exception as exc:
        log.info("a0_reranker: warm-up skipped: %s", exc)
