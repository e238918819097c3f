"""One status summary for the status tool, the status API and the CLI: is the plugin on for
this agent, is the wrap live, what does it talk to, and what happened recently. The same in
plain text for the agent is vocabulary.status_text."""

from __future__ import annotations

import time
from typing import Any

from . import vocabulary
from .recall import wrapper
from .report.stats import STATS
from .scoring import calibration, calling_agent, probing, scorers
from .scoring.breaker import BREAKER
from .settings import PLUGIN_NAME, SettingsError, shown_endpoint
from .settings_cache import load_settings


def status() -> dict[str, Any]:
    """The mode in words, counters, latency and breaker state; safe to show anywhere."""
    try:
        settings = load_settings(None)
        active = vocabulary.as_dict(settings, scorers.for_settings(settings))
    except SettingsError as exc:
        active = {"mode": None, "mode_text": f"a setting is invalid: {exc}"}
    return {**active, "stats": STATS.snapshot(), "breaker": BREAKER.snapshot(), "checked_at": time.time()}


def collect(agent: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"plugin": PLUGIN_NAME, "wrap_live": wrapper.is_wrapped()}
    try:
        from helpers import plugins

        out["enabled_for_agent"] = PLUGIN_NAME in plugins.get_enabled_plugins(agent)
    except Exception:
        out["enabled_for_agent"] = None
    try:
        settings = load_settings(None, agent)
    except SettingsError as exc:
        out["settings_error"] = str(exc)
        settings = None
    if settings is not None:
        with calling_agent.asking(agent):  # the utility judge's verdict is kept per utility model
            choice = scorers.choose(settings)
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
