"""Test connection: probe the form's values, say what differs from the saved settings."""

from __future__ import annotations

from typing import Any, Mapping

from . import settings_cache, stored_key, vocabulary
from .scoring import async_api, calling_agent, scorers, verdicts
from .scoring.verdicts import ProbeReport
from .settings import API_KEY_PLACEHOLDER, LIMITS, SettingsError, coerce, key_input, shown_endpoint, stored_value


def unsaved_keys(form: Mapping[str, Any], saved: Mapping[str, Any]) -> list[str]:
    """Settings whose form value differs from the saved one (compared after coercion)."""
    changed = []
    for key in LIMITS:
        if key not in form:
            continue
        if key == "rerank_api_key":
            if str(form.get(key) or "") not in ("", API_KEY_PLACEHOLDER) or bool(form.get(key)) != bool(saved.get(key)):
                changed.append(key)
            continue
        try:
            if coerce(key, form[key]) != coerce(key, saved.get(key)):
                changed.append(key)
        except ValueError:
            changed.append(key)
    return changed


def judge_agent(context_id: Any) -> tuple[Any, str]:
    """Whom Test connection asks for Agent Zero's utility model, and that in words: the agent
    of the chat the panel was opened from, else the model built from Agent Zero's model
    settings the way the host builds it (no chat), else nobody (the probe says why)."""
    if isinstance(context_id, str) and context_id:
        try:
            from agent import AgentContext  # the host's, only inside Agent Zero

            context = AgentContext.get(context_id)
            if context is not None:
                agent = context.get_agent()
                return agent, vocabulary.asked_chat_model(calling_agent.model_name(agent))
        except Exception:
            pass
    try:
        model = calling_agent.HostUtilityModel.from_host_settings()
        return model, vocabulary.asked_settings_model(model.utility_model_name)
    except Exception as exc:
        return None, vocabulary.asked_nobody(exc)


def post_filter_on(agent: Any) -> bool:
    """Agent Zero's own memory post-filter (the _memory plugin's memory_recall_post_filter)."""
    try:
        from helpers import plugins  # the host's

        config = plugins.get_plugin_config("_memory", agent=agent if hasattr(agent, "context") else None) or {}
        return bool(config.get("memory_recall_post_filter"))
    except Exception:
        return False


def with_saved_key(form: Mapping[str, Any], saved: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The form to probe, its placeholder meaning the saved settings' key (never a variable
    the form names), and "" or why that key is not sent to the form's endpoint: it was saved
    for another origin. A key stored before origins were recorded goes with the saved
    endpoint, as it did at recall."""
    probed = {k: v for k, v in form.items() if k != stored_key.VARIABLE_FIELD}
    variable = stored_key.variable_named(saved) or stored_key.API_KEY_ENV
    if variable != stored_key.API_KEY_ENV:
        probed[stored_key.VARIABLE_FIELD] = variable
    try:
        if key_input(form.get("rerank_api_key")) != API_KEY_PLACEHOLDER or not stored_value(variable):
            return probed, ""
        endpoint = coerce("rerank_endpoint", form.get("rerank_endpoint")).rstrip("/")
    except (SettingsError, ValueError):
        return probed, ""  # the probe names the bad setting
    bound = stored_key.recorded().get(variable)
    if bound is None:
        bound = stored_key.origin(saved.get("rerank_endpoint"))
    here = stored_key.origin(endpoint)
    return probed, "" if bound == here else vocabulary.key_elsewhere(bound, here or shown_endpoint(endpoint))


async def _probe(form: Mapping[str, Any], context_id: Any) -> ProbeReport:
    """The form's scorer, picked once, probed: Agent Zero's utility model as the open chat's
    agent has it (judge_agent), whose model its verdict is kept under; any other as is."""
    try:
        settings = settings_cache.load_settings(dict(form))
    except SettingsError as exc:
        return async_api.bad_setting_report(exc)
    scorer = scorers.for_settings(settings)
    if scorer is None or not scorer.asks_utility_model:
        return await async_api.probe_report(settings, scorers.choice_of(settings, scorer))
    agent, asked = judge_agent(context_id)
    with calling_agent.asking(agent):
        report = await async_api.probe_report(settings, scorers.choice_of(settings, scorer))
    report.notes = [vocabulary.asked_note(asked), *report.notes]
    if post_filter_on(agent):
        report.notes.append(f"{vocabulary.POST_FILTER} {vocabulary.POST_FILTER_WHY}")
    return report


async def run(form: Mapping[str, Any] | None, context_id: Any = None) -> dict[str, Any]:
    if not isinstance(form, Mapping):
        return {
            "ok": False,
            "report": verdicts.failed_report("bad_setting", vocabulary.NO_FORM),
            "unsaved": [],
            "note": "",
        }
    saved = settings_cache.configured_mapping(None)
    form, elsewhere = with_saved_key(form, saved)
    if elsewhere:
        # The stored key is not this server's: the placeholder means no key here, so the
        # server is tested without one (a server that needs none works as it will after Save).
        form = {**form, "rerank_api_key": ""}
    report = await _probe(form, context_id)
    if elsewhere:
        if report.ok:
            report.notes = [vocabulary.key_not_sent(elsewhere, True), *report.notes]
        else:
            report.reason = vocabulary.key_not_sent(elsewhere, False, report.reason)
    unsaved = unsaved_keys(form, saved)
    return {
        "ok": report.ok,
        "report": report.as_dict(),
        "unsaved": unsaved,
        "note": vocabulary.UNSAVED_NOTE if unsaved else "",
    }
