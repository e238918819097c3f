"""Test connection: probe the form's values, say what differs from the saved settings."""

from __future__ import annotations

from typing import Any, Mapping

from . import reranker, verdicts
from .settings import API_KEY_PLACEHOLDER, LIMITS, coerce


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


async def run(form: Mapping[str, Any] | None) -> dict[str, Any]:
    if not isinstance(form, Mapping):
        return {"ok": False, "report": verdicts.failed_report("bad_setting", "no settings were sent"), "unsaved": [], "note": ""}
    report = await reranker.aprobe(dict(form))
    unsaved = unsaved_keys(form, reranker.configured_mapping(None))
    return {
        "ok": bool(report.get("ok")),
        "report": report,
        "unsaved": unsaved,
        "note": "Test checks the values shown; press Save to keep them." if unsaved else "",
    }
