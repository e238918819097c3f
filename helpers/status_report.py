"""One status summary for the status tool, the status API and the CLI: is the plugin on for
this agent, is the wrap live, what does it talk to, and what happened recently."""

from __future__ import annotations

import time
from typing import Any

from . import mode
from .recall import wrapper
from .report.stats import STATS
from .scoring import calibration, calling_agent, probe_cache, scorers
from .scoring.breaker import BREAKER
from .settings import PLUGIN_NAME, SettingsError, shown_endpoint
from .settings_cache import load_settings


def status() -> dict[str, Any]:
    """The mode in words, counters, latency and breaker state; safe to show anywhere."""
    try:
        active = mode.as_dict(load_settings(None))
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
    if settings is not None and settings.api == "utility":
        out["judge"] = _judge(agent)
    if settings is not None:
        with calling_agent.asking(agent):  # the utility judge's verdict is kept per utility model
            verdict = probe_cache.cached(settings)
            kept_out = probe_cache.kept_failure(settings)
        if kept_out is not None and "judge" in out:
            out["judge"]["not_used"] = str(kept_out)  # too slow for recall, or misranks: in its own words
        route = verdict.route.describe() if verdict and verdict.route else None
        with calling_agent.asking(agent):
            trust = calibration.known(settings)
        if trust is not None:
            out["trust"] = trust.as_dict()
            out["trust_text"] = calibration.words(trust, mode.judge_name(settings, verdict.route if verdict else None))
        out.update(
            setting_enabled=settings.enabled,
            **mode.as_dict(settings, route),
            api_setting=settings.api,
            endpoint=shown_endpoint(settings.endpoint) or None,
            model=settings.model or None,
            has_reranker=settings.has_reranker,
            api_key_set=bool(settings.api_key),
            api_key_saved_for=settings.key_saved_for or None,  # stored for another server: not sent
            detected=({"route": route or settings.api, "api": verdict.route.api if verdict.route else settings.api, "scale": verdict.scale, "batch_limit": verdict.batch_limit} if verdict else None),
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


def _key_words(status: dict[str, Any]) -> str:
    if status.get("api_key_set"):
        return "set"
    if status.get("api_key_saved_for"):
        return f"none sent (the stored key was saved for {status['api_key_saved_for']}, not this endpoint)"
    return "none"


def summary_text(status: dict[str, Any], probe: dict[str, Any] | None = None) -> str:
    """Plain text for the agent: the verdict first, then the details."""
    lines = []
    enabled = status.get("enabled_for_agent") and status.get("setting_enabled", False)
    totals = status["stats"]["totals"]
    if status.get("settings_error"):
        verdict = f"NOT WORKING: a setting is invalid: {status['settings_error']}"
    elif not enabled:
        verdict = "OFF: the plugin is disabled for this agent; recall is stock Agent Zero"
    elif not status.get("wrap_live"):
        verdict = "NOT WORKING: the memory search is not wrapped (restart Agent Zero)"
    elif probe is not None and status.get("has_reranker"):
        verdict = ("WORKING: " if probe.get("ok") else "RERANKER NOT WORKING (recall uses built-in fusion meanwhile): ") + str(probe.get("reason"))
    elif not status.get("has_reranker"):
        verdict = f"WORKING: {status.get('mode_text')}; nothing to probe"
    else:
        verdict = f"ON: {status.get('mode_text')}"
    lines.append(verdict)
    if enabled and not status.get("settings_error"):
        if verdict.startswith(("WORKING: ", "RERANKER NOT WORKING")) and status.get("has_reranker"):
            lines.append(f"mode: {status.get('mode_text')}")
        lines.append(f"so far: {totals.get('reranked', 0)} reranked, {totals.get('fused', 0)} fused, {totals.get('shadow', 0)} shadow, "
                     f"{totals.get('reranker_unavailable', 0)} with the reranker unavailable, {totals.get('fallback', 0)} fallbacks to Agent Zero's own order")
    lines.append(f"endpoint: {status.get('endpoint') or '-'}  model: {status.get('model') or '-'}  api setting: {status.get('api_setting', '-')}  api key: {_key_words(status)}")
    judge = status.get("judge")
    if judge:
        lat = judge.get("latency")
        timing = f"last answer {lat['last_ms']} ms, median {lat['median_ms']} ms over {lat['calls']} calls" if lat else "not asked yet"
        lines.append(f"judge: Agent Zero's utility model {judge.get('utility_model') or '-'}; {timing}")
        if judge.get("not_used"):
            lines.append(f"judge not used: {judge['not_used']}")
        if judge.get("post_filter"):
            lines.append("note: Agent Zero's memory post-filter is on too, so the utility model judges each recall twice; turn the post-filter off")
    trust_text = (probe or {}).get("trust_text") or status.get("trust_text")
    if trust_text and status.get("has_reranker"):
        lines.append(f"say in recall: {trust_text}")
    detected = (probe or {}).get("route") or (status.get("detected") or {}).get("route")
    lines.append(f"detected: {detected or 'not probed yet'}; wrap live: {status.get('wrap_live')}")
    stats = status["stats"]
    lat = stats["latency_ms"]
    lines.append(f"latency p50 {lat['p50']} ms, p95 {lat['p95']} ms over {lat['samples']} calls; fallbacks by reason: {stats['fallback_reasons'] or 'none'}; reranker unavailable by reason: {stats.get('unavailable_reasons') or 'none'}")
    if stats.get("last_error"):
        lines.append(f"last error: {stats['last_error']['reason']}")
    answered = [r for r in stats["recent"] if r["outcome"] in ("reranked", "fused", "shadow")]
    if answered and answered[-1]["reason"]:  # only the latest search's note: older ones are history
        lines.append(f"note: {answered[-1]['reason']}")
    if stats.get("shadow"):
        s = stats["shadow"]
        lines.append(f"shadow: top result would change in {s['top_changed']}/{s['searches']} searches; mean overlap@k {s['mean_overlap_at_k']}; {s['promoted_from_below_cut']} memories from below the host's cut")
    for name, state in status.get("breaker", {}).items():
        if state["open_for_s"]:
            lines.append(f"circuit breaker open for {state['open_for_s']} s more: {name.split('|')[0]}")
    if probe is not None:
        for attempt in probe.get("attempts", []):
            lines.append(f"  tried {attempt['route']}: {attempt['verdict']} ({attempt['reason'][:120]})")
    return "\n".join(lines)
