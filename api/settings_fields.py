import json

from helpers.api import ApiHandler, Request

FIELDS_FILE = ("webui", "a0-reranker-fields.json")


class SettingsFields(ApiHandler):
    """The settings panel's form: the field schema (webui/a0-reranker-fields.json) with
    each field's limits from helpers/settings.py LIMITS, so the browser checks exactly
    what Save enforces and no number is written down twice; and the plugin's vocabulary
    (helpers/vocabulary/), so the panel says what the chat and the status tool say.
    Read-only; no secrets."""

    async def process(self, input: dict, request: Request) -> dict:
        try:
            from usr.plugins.a0_reranker.helpers import settings, vocabulary

            path = settings.PLUGIN_DIR.joinpath(*FIELDS_FILE)
            schema = json.loads(path.read_text(encoding="utf-8"))
            groups = [
                {**group, "fields": [_with_limit(field, settings.LIMITS[field["key"]]) for field in group["fields"]]}
                for group in schema["groups"]
            ]
            return {"ok": True, "groups": groups, "words": vocabulary.panel_words()}
        except Exception as exc:
            return {"ok": False, "error": f"settings form unavailable: {type(exc).__name__}"}


def _with_limit(field: dict, limit) -> dict:
    """One schema field plus what LIMITS says it accepts; a choice's options come in
    LIMITS order, labelled by the schema (a value without a label shows as itself)."""
    out = {name: value for name, value in field.items() if name != "option_labels"}
    out["limit"] = {
        "kind": limit.kind,
        "min": limit.low,
        "max": limit.high,
        "nullable": limit.nullable,
        # the server takes any number in range, so the form asks no finer step of floats
        "step": "1" if limit.kind == "int" else "any",
        "accepts": limit.describe(),
    }
    if limit.kind == "choice":
        labels = field.get("option_labels") or {}
        out["options"] = [{"value": choice, "label": labels.get(choice, choice)} for choice in limit.choices]
    return out
