"""One status summary for the status tool, the status API and the CLI: is the plugin on for
this agent, is the wrap live, what does it talk to, and what happened recently. The same in
plain text for the agent is vocabulary.status_text."""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass
from typing import Any

from . import vocabulary
from .recall import wrapper
from .report.stats import STATS, Summary
from .scoring import async_api, calibration, calling_agent, probing, query_budget, scorers
from .scoring.breaker import BREAKER, Shown
from .scoring.scorers import Choice
from .scoring.scorers.utility import AnswerTimes
from .scoring.verdicts import ProbeReport, failed
from .settings import PLUGIN_NAME, Settings, SettingsError, shown_endpoint
from .settings_cache import load_settings


def status() -> dict[str, Any]:
    """The mode in words, counters, latency and breaker state; safe to show anywhere."""
    try:
        settings = load_settings(None)
        active = vocabulary.as_dict(settings, scorers.for_settings(settings))
    except SettingsError as exc:
        active = {"mode": None, "mode_text": vocabulary.setting_invalid_text(exc)}
    return {**active, "stats": STATS.snapshot(), "breaker": BREAKER.snapshot(), "checked_at": time.time()}


def collect(agent: Any = None) -> StatusSummary:
    """The status summary for ``agent`` (None: the plugin's own settings)."""
    return _summary(agent, *_chosen(agent))


async def collect_probed(agent: Any = None) -> tuple[StatusSummary, ProbeReport]:
    """The status tool's ``probe=true``: the one choice of ``agent``'s settings probed
    live (async_api.probe_report), then the summary of what the probe found."""
    settings, choice, error = _chosen(agent)
    if settings is None:
        report = async_api.bad_setting_report(error)
    else:
        try:
            async with asyncio.timeout(async_api.ASKED_WAIT_S):  # the agent's turn waits on it
                with calling_agent.asking(agent):  # rerank_api utility: this agent's utility model is probed
                    report = await async_api.probe_report(settings, choice)
        except TimeoutError:
            report = failed("timeout", vocabulary.took_longer_than(async_api.ASKED_WAIT_S), settings.endpoint)
    return _summary(agent, settings, choice, error), report


def _chosen(agent: Any) -> tuple[Settings | None, Choice | None, SettingsError | None]:
    """``agent``'s settings and their scorer, chosen once (in the agent's context: the
    utility judge's verdict is kept per utility model); or the settings' error."""
    try:
        settings = load_settings(None, agent)
    except SettingsError as exc:
        return None, None, exc
    with calling_agent.asking(agent):
        return settings, scorers.choose(settings), None


@dataclass(frozen=True)
class JudgeSummary:
    """Agent Zero's utility model as the judge: which model, its recent answer times
    (scorers.UTILITY.latency), whether the host's own post-filter
    asks it as well, and why it is not used when a kept verdict keeps it out."""

    utility_model: str
    latency: AnswerTimes | None
    post_filter: bool
    not_used: str | None = None

    def as_dict(self) -> dict[str, Any]:
        latency = asdict(self.latency) if self.latency is not None else None
        out = {"utility_model": self.utility_model, "latency": latency, "post_filter": self.post_filter}
        return out if self.not_used is None else {**out, "not_used": self.not_used}


@dataclass(frozen=True)
class Detected:
    """What the kept verdict found of the server: its route, API, scale and batch limit."""

    route: str
    api: str
    scale: str
    batch_limit: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"route": self.route, "api": self.api, "scale": self.scale, "batch_limit": self.batch_limit}


@dataclass(frozen=True)
class StatusSummary:
    """The status summary: read by the vocabulary's status_text as typed fields, sent to the
    browser and the CLI as as_dict(). With a ``settings_error`` the settings did not load,
    and the fields after it are their defaults."""

    plugin: str
    wrap_live: bool
    enabled_for_agent: bool | None
    stats: Summary  # report/stats.Stats.summary: the counters
    breaker: dict[str, Shown]  # scoring/breaker.CircuitBreaker.states
    settings_error: str | None = None
    judge: JudgeSummary | None = None
    trust: dict[str, Any] | None = None  # calibration.Trust.as_dict
    trust_text: str | None = None
    setting_enabled: bool = False
    mode: str | None = None
    mode_text: str = ""
    applied: bool = False
    api_setting: str = "-"
    endpoint: str | None = None
    model: str | None = None
    has_reranker: bool = False
    api_key_set: bool = False
    api_key_saved_for: str | None = None  # stored for another server: not sent
    detected: Detected | None = None
    query_chars: int | None = None  # the reranker's query holds at most this (query_budget.chars)
    query_ran_out_on: int | None = None  # the longer query it ran out of time on, which cut it

    def as_dict(self) -> dict[str, Any]:
        """The JSON the status API and the CLI have always sent: keys that do not apply are
        left out (the settings' when they did not load, the judge's without one)."""
        out: dict[str, Any] = {
            "plugin": self.plugin,
            "wrap_live": self.wrap_live,
            "enabled_for_agent": self.enabled_for_agent,
        }
        if self.settings_error is not None:
            out["settings_error"] = self.settings_error
        if self.settings_error is None:  # the settings loaded
            if self.judge is not None:
                out["judge"] = self.judge.as_dict()
            if self.trust is not None:
                out.update(trust=self.trust, trust_text=self.trust_text)
            out.update(
                setting_enabled=self.setting_enabled,
                mode=self.mode,
                mode_text=self.mode_text,
                applied=self.applied,
                api_setting=self.api_setting,
                endpoint=self.endpoint,
                model=self.model,
                has_reranker=self.has_reranker,
                api_key_set=self.api_key_set,
                api_key_saved_for=self.api_key_saved_for,
                detected=self.detected.as_dict() if self.detected is not None else None,
                query_chars=self.query_chars,
                query_ran_out_on=self.query_ran_out_on,
            )
        breaker = {key: asdict(state) for key, state in self.breaker.items()}
        return {**out, "stats": self.stats.as_dict(), "breaker": breaker}


def _summary(
    agent: Any, settings: Settings | None, choice: Choice | None, error: SettingsError | None = None
) -> StatusSummary:
    try:
        from helpers import plugins

        enabled_for_agent: bool | None = PLUGIN_NAME in plugins.get_enabled_plugins(agent)
    except Exception:
        enabled_for_agent = None
    common = dict(
        plugin=PLUGIN_NAME,
        wrap_live=wrapper.is_wrapped(),
        enabled_for_agent=enabled_for_agent,
        stats=STATS.summary(last=5),
        breaker=BREAKER.states(),
        settings_error=str(error) if error is not None else None,
    )
    if settings is None:
        return StatusSummary(**common)
    with calling_agent.asking(agent):  # the utility judge's verdict is kept per utility model
        verdict = probing.cached(choice)
        kept_out = probing.kept_failure(choice)
        trust = calibration.known(choice)
    scorer = choice.scorer if choice is not None else None
    judge = None
    if scorer is not None and scorer.asks_utility_model:
        # too slow for recall, or misranks: in its own words
        judge = _judge(agent, str(kept_out) if kept_out is not None else None)
    route = verdict.route.describe() if verdict and verdict.route else None
    return StatusSummary(
        **common,
        judge=judge,
        trust=trust.as_dict() if trust is not None else None,
        trust_text=(
            vocabulary.say_words(trust, vocabulary.judge_name(scorer, verdict.route if verdict else None))
            if trust is not None
            else None
        ),
        setting_enabled=settings.enabled,
        mode=vocabulary.mode(settings, scorer),
        mode_text=vocabulary.describe(settings, scorer, route),
        applied=settings.apply,
        api_setting=settings.api,
        endpoint=shown_endpoint(settings.endpoint) or None,
        model=settings.model or None,
        has_reranker=scorer is not None,
        api_key_set=bool(settings.api_key),
        api_key_saved_for=settings.key_saved_for or None,
        detected=(
            Detected(
                route or settings.api,
                verdict.route.api if verdict.route else settings.api,
                verdict.scale,
                verdict.batch_limit,
            )
            if verdict
            else None
        ),
        query_chars=query_budget.chars(choice) if choice is not None else None,
        query_ran_out_on=query_budget.ran_out_on(choice) if choice is not None else None,
    )


def _judge(agent: Any, not_used: str | None) -> JudgeSummary:
    from .connection_test import post_filter_on

    name = calling_agent.model_name(agent)
    return JudgeSummary(name, scorers.UTILITY.latency().get(name), post_filter_on(agent), not_used)
