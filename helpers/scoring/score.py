"""Scores for documents by the configured scorer, with what that scorer needs around it:
the privacy guard, the probe's verdict (probing.py), the score cache and the circuit
breaker."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..deadline import Deadline
from ..errors import BreakerOpen, DeadlineExceeded, QueryCut, Refused, TooSlow
from ..settings import Settings, shown_endpoint
from .. import vocabulary
from ..vocabulary import scorer_words
from . import calibration, endpoint_guard, probing, query_budget, redaction, scorers
from .breaker import BREAKER, TRIAL
from .cache import CACHE
from .scorers import Choice
from .verdicts import Verdict

log = logging.getLogger("a0_reranker")


@dataclass
class Scored:
    """Scores in input order, and what they mean."""

    scores: list[float]
    scale: str
    verdict: Verdict | None
    latency_ms: float | None = None  # the scorer's own time, when it was asked (not a cache hit)
    same_call: bool = False  # scored by the call another search of the recall made (the utility judge's solutions)


def close_breakers(*settings: Settings | None) -> None:
    """Close the breakers of each of these settings (a Save changed the endpoint, key, model
    or API): the next recall asks at once instead of waiting out the old settings' cool-down.
    Which breakers are the scorer's to say (the utility judge's: one per utility model)."""
    for one in settings:
        scorer = scorers.for_settings(one) if one is not None else None
        if scorer is not None and scorer.may_go_down:
            BREAKER.close(functools.partial(scorer.owns_breaker, one))


def may_be_asked(choice: Choice | None) -> bool:
    """A recall may ask this scorer: no kept verdict keeps it out of recall (probing.py), and
    no kept say leaves it none in every search (calibration.has_no_say_anywhere). Whether it
    has a say in one search is the score stage's to decide: a store whose words lead may give
    it some."""
    return (
        choice is not None
        and not probing.keeps_out(choice)
        and not calibration.has_no_say_anywhere(calibration.known(choice))
    )


async def score_documents(
    choice: Choice, query: str, documents: Sequence[str], deadline: Deadline | None = None
) -> Scored:
    """Scores for ``documents`` in input order, by the chosen scorer (scorers.choose: the
    caller decides it once), with what that scorer declares it needs around it. Raises
    ``RerankError``; callers fall back."""
    settings, scorer = choice.settings, choice.scorer
    deadline = deadline or Deadline.after(settings.timeout)
    # A judge kept out by its verdict (too slow for recall, misranks the probe) is not
    # asked and costs neither time nor the breaker: the verdict says why, the search goes
    # on fused.
    kept_out = probing.known_failure(choice)
    if kept_out is not None:
        raise kept_out
    if scorer.sends_text:
        refusal = await endpoint_guard.check(settings, scorer)
        if refusal:
            raise Refused(refusal)
        if settings.redact:
            query, documents = await redaction.redact_for_sending(query, documents, settings.max_doc_chars)
    # Scores already paid for need neither the scorer nor the breaker's permission.
    verdict = probing.cached(choice)
    hits = _cache_lookup(choice, verdict, query, documents) if verdict and scorer.caches_scores else None
    if hits is not None and all(s is not None for s in hits[1]):
        return Scored(hits[1], verdict.scale, verdict)  # type: ignore[union-attr, arg-type]
    key = scorer.breaker_key(settings) if scorer.may_go_down else ""
    admitted = BREAKER.allow(key, settings.breaker_failures, settings.breaker_cooldown) if scorer.may_go_down else None
    if scorer.may_go_down and not admitted:
        raise BreakerOpen(vocabulary.skipped(settings, scorer))
    allowed: float | None = None  # the scoring call's time, once the probe is done
    try:
        # The probe (once per endpoint or model) gives the scale and the floor's calibration,
        # and keeps a scorer that ranks the probe wrongly out of recall.
        fresh_verdict = await probing.resolve(choice, deadline)
        if scorer.caches_scores and fresh_verdict is not verdict:  # a new probe: earlier lookups named another route
            hits = _cache_lookup(choice, fresh_verdict, query, documents)
        asked, allowed = time.monotonic(), deadline.remaining()
        scores = await _score_missing(choice, fresh_verdict, query, documents, deadline, hits)
        latency_ms = (time.monotonic() - asked) * 1000
        if scorer.may_go_down:
            BREAKER.record_success(key)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        if isinstance(exc, TooSlow) and scorer.probes_once:  # learned from this call: kept like a verdict
            probing.keep_failure(choice, "too_slow", str(exc))
        # Probed, asked with its whole time and no answer to a long query: a shorter one from now on.
        cut = (
            isinstance(exc, DeadlineExceeded)
            and allowed is not None
            and query_budget.ran_out(choice, len(query), allowed)
        )
        if scorer.may_go_down:
            # The endpoint may have changed (a restart with another model, a new version):
            # probe again once it recovers, and count the failure toward the breaker.
            if not scorer.probes_once:
                probing.forget(choice)
            if BREAKER.record_failure(key, settings.breaker_failures, settings.breaker_cooldown):
                log.warning(
                    "a0_reranker: %s failing; circuit breaker open for %g s",
                    shown_endpoint(settings.endpoint) or key,
                    settings.breaker_cooldown,
                )
        if cut:
            now = query_budget.chars(choice)
            raise QueryCut(f"{exc}; {vocabulary.query_cut(len(query), now)}", len(query), now) from exc
        raise
    finally:
        if admitted == TRIAL:  # settled above, unless cancelled: then the next caller may try
            BREAKER.release_trial(key)
    return Scored(scores, fresh_verdict.scale, fresh_verdict, latency_ms)


async def earned_say(choice: Choice, deadline: Deadline, embedder: Any = None) -> calibration.Trust:
    """The say the chosen scorer earned on the calibration set (calibration.py): kept, or
    measured now within ``deadline``, once its probe has passed. The calibration's text is
    the plugin's own, so the scorer is asked directly: its calls neither count toward the
    breaker nor fill the score cache."""
    verdict = probing.cached(choice)
    if verdict is None:
        return calibration.Trust(calibration.UNMEASURED, reason=scorer_words.NOT_PROBED)

    async def score(query: str, documents: Sequence[str], within: Deadline) -> list[float]:
        return await choice.scorer.score(choice.settings, verdict, query, list(documents), within)

    return await calibration.trust(choice, score, deadline, embedder, verdict.scale)


def _cache_lookup(choice: Choice, verdict: Verdict, query: str, documents: Sequence[str]):
    """(keys, cached scores or None per document), or None when the cache is off."""
    if not choice.settings.cache:
        return None
    keys = CACHE.keys((choice.key, verdict.route), query, documents)
    return keys, CACHE.lookup(keys)


async def _score_missing(
    choice: Choice, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline, hits
) -> list[float]:
    """Ask the scorer only for the documents the cache does not hold; remember its answer."""
    settings = choice.settings
    if hits is None:
        return await choice.scorer.score(settings, verdict, query, documents, deadline)
    keys, known = hits
    missing = [i for i, s in enumerate(known) if s is None]
    fresh = await choice.scorer.score(settings, verdict, query, [documents[i] for i in missing], deadline)
    CACHE.store([keys[i] for i in missing], fresh, settings.cache_ttl, settings.cache_entries)
    answers = iter(fresh)
    return [next(answers) if s is None else s for s in known]
