"""The asynchronous side of the public API (reranker.py; sync.py is the synchronous one):
``arerank`` for other plugins, ``aprobe`` for Test connection and the status tool, and
``warm_up`` at Agent Zero's start. Each turns every failure into its documented answer
(None, a failed report, a log line): nothing raises into the caller's code."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Set as AbstractSet
from typing import Any, Mapping, Sequence

from .. import vocabulary
from ..deadline import GRACE_S, Deadline
from ..errors import RerankError
from ..settings import Settings, SettingsError
from ..settings_cache import load_settings
from . import calibration, endpoint_guard, probing, scorers
from .score import earned_say, score_documents
from .scorers import Choice
from .verdicts import ProbeReport, failed

log = logging.getLogger("a0_reranker")

Ranking = list[tuple[int, float]]


def ranking(scores: Sequence[float]) -> Ranking:
    """Best first; ties keep the input order, so equal scores never shuffle documents."""
    return sorted(((i, s) for i, s in enumerate(scores)), key=lambda pair: (-pair[1], pair[0]))


def documents_list(documents: Any) -> list:
    """The documents as a list, read once (a generator can be read only once). A string, a
    mapping or a set is no list of documents: it would be ranked by character, by key, or
    in hash order. Raises ``TypeError``."""
    if isinstance(documents, (str, bytes, bytearray, Mapping, AbstractSet)):
        raise TypeError(vocabulary.NOT_A_LIST)
    return list(documents)


async def arerank(query: str, documents: Sequence[str], *, config: Mapping[str, Any] | None = None) -> Ranking | None:
    try:
        documents = documents_list(documents)
        if not documents:
            return []
        if not isinstance(query, str) or not all(isinstance(d, str) for d in documents):
            raise TypeError(vocabulary.NOT_STRINGS)
        if not query.strip():  # nothing to rank by; sent, a server's 400 would count toward the breaker recall shares
            raise TypeError(vocabulary.BLANK_QUERY)
        settings = load_settings(config)
        choice = scorers.choose(settings) if settings.enabled else None
        if choice is None:
            return None
        # The scorer's own deadline is rerank_timeout; one that cannot be interrupted (BM25
        # over a huge list, in a thread) is not waited for past it.
        async with asyncio.timeout(settings.timeout + GRACE_S):
            scored = await score_documents(choice, query, documents)
        return ranking(scored.scores)
    except asyncio.CancelledError:
        raise
    except TimeoutError:  # the cap above (or a caller's generator timing out while read)
        log.info("a0_reranker: rerank unavailable: %s", vocabulary.RERANK_NOT_IN_TIME)
        return None
    except (RerankError, SettingsError, TypeError) as exc:
        log.info("a0_reranker: rerank unavailable: %s", exc)
        return None
    except Exception:  # never into the caller's code
        log.exception("a0_reranker: unexpected error in arerank")
        return None


async def aprobe(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A live correctness probe; the report as a dict (no secrets). Never raises."""
    return (await probe_of(config)).as_dict()


async def probe_of(config: Mapping[str, Any] | None = None) -> ProbeReport:
    """aprobe's report, typed (the CLI words it). Never raises."""
    try:
        settings = load_settings(config)
    except SettingsError as exc:
        return bad_setting_report(exc)
    return await probe_report(settings, scorers.choose(settings))


def bad_setting_report(exc: SettingsError) -> ProbeReport:
    """The probe's report on settings that do not load: the setting named."""
    return dataclasses.replace(failed("bad_setting", str(exc)), setting=exc.key)


async def probe_report(settings: Settings, choice: Choice | None) -> ProbeReport:
    """aprobe's report on ``choice``, the entry point's one scorers.choose of ``settings``
    (None: they name no reranker): probed fresh, with its say measured again. Never raises."""
    scorer = choice.scorer if choice is not None else None
    refusal = await endpoint_guard.check(settings, scorer) if scorer is not None and scorer.sends_text else ""
    if refusal:
        return failed("refused", refusal, settings.endpoint, vocabulary.privacy_notes(settings, scorer))
    if choice is not None:
        probing.forget(choice)  # a person asks: what was kept holds nothing back
    report = await probing.probe(settings, choice, fresh=True)
    report.notes += vocabulary.privacy_notes(settings, scorer)
    report.mode_text = vocabulary.describe(settings, scorer, report.route)
    if report.ok and report.result is not None and choice is not None:
        # How much say it earns in recall: measured again, as a person asked.
        calibration.forget(choice)
        trust = await earned_say(choice, Deadline.after(CALIBRATION_S))
        report.trust = trust.as_dict()
        report.trust_text = vocabulary.say_words(trust, vocabulary.judge_name(scorer, report.result.route))
    return report


CALIBRATION_S = 30.0  # Test connection's calibration: a person waits, but not for ever
# The most a person waits for a probe they asked for (Test connection, the status tool's
# probe=true): the probe's own deadline is rerank_timeout (up to 120 s), its say's CALIBRATION_S.
ASKED_WAIT_S = 30.0


def warm_up() -> None:
    """At start: let the scorer load what its first recall would wait for (the in-process
    cross-encoder), in the background, and probe it."""
    try:
        settings = load_settings(None)
        choice = scorers.choose(settings) if settings.enabled else None
        if choice is not None and choice.scorer.needs_warm_up:
            probing.warm_in_background(choice)
    except Exception as exc:
        log.info("a0_reranker: warm-up skipped: %s", exc)
