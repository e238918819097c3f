"""The host's own LiteLLM call path for a utility model on loopback, shared by the tests that
call a model through it (an OpenAI-compatible stand-in, or the real SmolLM2 lane)."""

import pytest

KEY = "sk-judge-0123456789abcdefXYZ"


@pytest.fixture
def litellm_logging_dropped(monkeypatch):
    """LiteLLM queues a logging coroutine per call on a background task of the running loop.
    Agent Zero runs one loop for its whole life; a test's asyncio.run ends its loop after
    each step, and cancelling that task then replays the queue (up to 20 s a log). The log
    is not what is tested: drop it."""
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    monkeypatch.setattr(
        GLOBAL_LOGGING_WORKER, "ensure_initialized_and_enqueue", lambda async_coroutine: async_coroutine.close()
    )


def litellm_utility_model(api_base: str, *, stream: bool, model: str = "judge-model"):
    """What Agent.call_utility_model does with the host's model: unified_call on the
    LiteLLM wrapper, returning the response text."""
    import models

    wrapper = models.get_chat_model("openai", model, api_base=api_base, api_key=KEY)

    async def call(system: str, message: str) -> str:
        response, _reasoning = await wrapper.unified_call(system_message=system, user_message=message, stream=stream)
        return response

    return call
