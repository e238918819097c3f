import asyncio

from helpers.api import ApiHandler, Request


class TestConnection(ApiHandler):
    """Probe the settings form's current, unsaved values. Always answers JSON (never a
    500 carrying server text or a secret); the key placeholder means "the stored key"."""

    async def process(self, input: dict, request: Request) -> dict:
        try:
            from usr.plugins.a0_reranker.helpers import connection_test, vocabulary
            from usr.plugins.a0_reranker.helpers.scoring import async_api

            form = input.get("config") if isinstance(input, dict) else None
            # The chat the panel was opened from: its agent's utility model judges (rerank_api: utility).
            context = input.get("context") if isinstance(input, dict) else None
            # The probe has its own deadline (rerank_timeout); this caps the whole answer regardless.
            return await asyncio.wait_for(connection_test.run(form, context), timeout=async_api.ASKED_WAIT_S)
        except asyncio.TimeoutError:
            return _failed(input, vocabulary.took_longer_than(async_api.ASKED_WAIT_S))
        except Exception as exc:
            return _failed(input, f"the test failed: {type(exc).__name__}")


def _failed(input, reason: str) -> dict:
    """The same shape as a normal answer, so the panel renders it the same way."""
    from usr.plugins.a0_reranker.helpers.scoring import verdicts

    form = input.get("config") if isinstance(input, dict) and isinstance(input.get("config"), dict) else {}
    report = verdicts.failed_report("error", reason, str(form.get("rerank_endpoint") or ""))
    return {"ok": False, "report": report, "unsaved": [], "note": ""}
