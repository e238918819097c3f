from helpers.api import ApiHandler, Request


class SettingsCheck(ApiHandler):
    """What Save would refuse in the settings form's current values, asked by the panel as
    the user types, so an endpoint, a path or a key Save refuses is named under its field
    before Save is pressed rather than after. The very checks Save runs
    (helpers/config_store.py ``refusal``), on a dry run that stores nothing. Its answer names
    the setting and never quotes a key."""

    async def process(self, input: dict, request: Request) -> dict:
        try:
            from usr.plugins.a0_reranker.helpers import config_store

            form = input.get("config") if isinstance(input, dict) else None
            refused = config_store.refusal(form)
            if refused is None:
                return {"ok": True}
            return {"ok": False, "setting": refused.key, "error": str(refused)}
        except Exception as exc:  # the check is a courtesy: Save still checks everything
            return {"ok": True, "unchecked": f"settings check unavailable: {type(exc).__name__}"}
