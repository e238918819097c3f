"""One status summary for the status tool, the status API and the CLI: is the plugin on for
this agent, is the wrap live, what does it talk to, and what happened recently. The same in
plain text for the agent is vocabulary.status_text."""

from __future__ import annotations

import time
from typing import Any

from . import vocabulary
from .recall import wrapper
from .report.stats import STATS
from .scoring import async_api, calibration, calling_agent, probing, scorers
from .scoring.breaker import BREAKER
from .scoring.scorers import Choice
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


def collect(agent: Any = None) -> dict[str, Any]:
    """The status summary for ``agent`` (None: the plugin's own settings)."""
    return _summary(agent, *_chosen(agent))


async def collect_probed(agent: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The status tool's ``probe=true``: the one choice of ``agent``'s settings probed
    live (async_api.probe_report), then the summary of what the probe found."""
    settings, choice, error = _chosen(agent)
    if settings is None:
        report = async_api.bad_setting_report(error)
    else:
        with calling_agent.asking(agent):  # rerank_api utility: this agent's utility model is probed
            report = await async_api.probe_report(settings, choice)
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


def _summary(agent: Any, settings: Settings | None, choice: Choice | None, error: SettingsError | None = None):
    out: dict[str, Any] = {"plugin": PLUGIN_NAME, "wrap_live": wrapper.is_wrapped()}
    try:
        from helpers import plugins

        out["enabled_for_agent"] = PLUGIN_NAME in plugins.get_enabled_plugins(agent)
    except Exception:
        out["enabled_for_agent"] = None
    if error is not None:
        out["settings_error"] = str(error)
    if settings is not None:
        with calling_agent.asking(agent):  # the utility judge's verdict is kept per utility model
            verdict = probing.cached(choice)
            kept_out = probing.kept_failure(choice)
            trust = calibration.known(choice)
        scorer = choice.scorer if choice is not None else None
        if scorer is not None and scorer.asks_utility_model:
            out["judge"] = _judge(agent)
            if kept_out is not None:
                out["judge"]["not_used"] = str(kept_out)  # too slow for recall, or misranks: in its own words
        route = verdict.route.describe() if verdict and verdict.route else None
        if trust is not None:
            out["trust"] = trust.as_dict()
            out["trust_text"] = vocabulary.say_words(
                trust, vocabulary.judge_name(scorer, verdict.route if verdict else None)
            )
        out.update(
            setting_enabled=settings.enabled,
            **vocabulary.as_dict(settings, scorer, route),
            api_setting=settings.api,
            endpoint=shown_endpoint(settings.endpoint) or None,
            model=settings.model or None,
            has_reranker=scorer is not None,
            api_key_set=bool(settings.api_key),
            api_key_saved_for=settings.key_saved_for or None,  # stored for another server: not sent
            detected=(
                {
                    "route": route or settings.api,
                    "api": verdict.route.api if verdict.route else settings.api,
                    "scale": verdict.scale,
                    "batch_limit": verdict.batch_limit,
                }
                if verdict
                else None
            ),
        )
    out["stats"] = STATS.snapshot(last=5)
    out["breaker"] = BREAKER.snapshot()
    return out


def _judge(agent: Any) -> dict[str, Any]:
    """Agent Zero's utility model as the judge: which model, its recent answer times, and
    whether the host's own post-filter asks it as well."""
    from .connection_test import post_filter_on

    name = calling_agent.model_name(agent)
    return {"utility_model": name, "latency": scorers.UTILITY.latency().get(name), "post_filter": post_filter_on(agent)}
