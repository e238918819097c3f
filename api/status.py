from helpers.api import ApiHandler, Request


class Status(ApiHandler):
    """The status view of the settings panel: enabled, wrap live, recent calls, fallbacks
    and the last error. No secrets: the key is reported only as set / not set."""

    async def process(self, input: dict, request: Request) -> dict:
        try:
            from usr.plugins.a0_reranker.helpers import status_report

            return {"ok": True, "status": status_report.collect(None).as_dict()}
        except Exception as exc:
            return {"ok": False, "error": f"status unavailable: {type(exc).__name__}"}
