"""Which Agent Zero agent a reranker call is made for: what the utility-model judge asks.

The scorer interface (scorers/base.py) has no agent parameter, and only one scorer needs
one, so the agent travels beside the call instead: the recall wrapper (recall/wrapper.py), the
status tool and Test connection set it around the work they start, and the judge
(scorers/utility.py) reads it. A ContextVar follows the call into every task it creates
and never leaks between concurrent recalls of different chats.

"An agent" here is anything with Agent Zero's ``call_utility_model(system, message)``:
the host's ``Agent``, or ``HostUtilityModel`` below when Test connection has no chat.
Nothing here imports the host at import time.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

_agent: contextvars.ContextVar[Any] = contextvars.ContextVar("a0_reranker_calling_agent", default=None)


def current() -> Any:
    """The agent the running call is made for, or None (the public API, a script)."""
    return _agent.get()


@contextlib.contextmanager
def asking(agent: Any) -> Iterator[None]:
    """Make ``agent`` the one asked inside this block (and the tasks it starts)."""
    token = _agent.set(agent)
    try:
        yield
    finally:
        _agent.reset(token)


def model_name(agent: Any) -> str:
    """The name of the utility model ``agent`` would call, for cache and breaker keys and the
    reports: the host's own model config ("provider/name"), read as the host reads it."""
    if agent is None:
        return ""
    own = getattr(agent, "utility_model_name", None)  # HostUtilityModel, below
    if isinstance(own, str):
        return own
    try:
        from plugins._model_config.helpers import model_config  # the host's, only inside Agent Zero

        config = model_config.get_utility_model_config(agent) or {}
        provider, name = str(config.get("provider") or ""), str(config.get("name") or "")
        if provider or name:
            return f"{provider}/{name}" if provider else name
    except Exception:  # an older host, or the stand-in: fall back to the model object
        pass
    try:
        model = agent.get_utility_model()
    except Exception:
        return "utility model"
    name = getattr(model, "model_name", None) or getattr(model, "__name__", None)
    return str(name) if name else "utility model"


def utility_endpoint(agent: Any) -> str | None:
    """Where the utility model ``agent`` would call runs, as the host's LiteLLM call is told:
    the model's api_base (its kwargs' first, then the model config's, then its provider's
    default, e.g. Ollama's), "" when there is none (a provider's hosted service: OpenAI,
    Anthropic), None when it cannot be read (no model config in this host)."""
    if agent is None:
        return None
    own = getattr(agent, "utility_model_endpoint", None)  # HostUtilityModel, below
    if isinstance(own, str):
        return own
    try:
        from plugins._model_config.helpers import model_config  # the host's, only inside Agent Zero

        config = model_config.get_utility_model_config(agent)
    except Exception:
        return None
    return endpoint_of(config) if isinstance(config, dict) else None


def endpoint_of(config: dict) -> str:
    """A model config's api_base, in the order the host's model building applies them."""
    kwargs = config.get("kwargs")
    provider = config.get("provider")
    for base in (
        kwargs.get("api_base") if isinstance(kwargs, dict) else None,
        config.get("api_base"),
        _provider_default(provider) if isinstance(provider, str) and provider else None,
    ):
        if isinstance(base, str) and base.strip():
            return base.strip()
    return ""


def _provider_default(provider: str) -> Any:
    """The api_base the host's provider list (conf/model_providers.yaml) gives ``provider``."""
    try:
        from helpers.providers import get_provider_config  # the host's

        kwargs = (get_provider_config("chat", provider) or {}).get("kwargs")
        return kwargs.get("api_base") if isinstance(kwargs, dict) else None
    except Exception:  # an older host, the stand-in: no provider defaults to read
        return None


class HostUtilityModel:
    """Agent Zero's utility model without a chat: built from the host's model settings the
    way the host builds it for an agent (plugins/_model_config build_utility_model), and
    called the way ``Agent.call_utility_model`` calls it (``unified_call``). Test
    connection uses it when the panel names no open chat."""

    def __init__(self, model: Any, name: str, endpoint: str | None = None):
        self.model = model
        self.utility_model_name = name
        self.utility_model_endpoint = endpoint  # its api_base ("" hosted), for the privacy guard

    @classmethod
    def from_host_settings(cls) -> "HostUtilityModel":
        """Raises when the host has no model config to build from (caught by the caller)."""
        from plugins._model_config.helpers import model_config  # the host's, only inside Agent Zero

        config = model_config.get_utility_model_config(None) or {}
        provider, name = str(config.get("provider") or ""), str(config.get("name") or "")
        return cls(
            model_config.build_utility_model(None), f"{provider}/{name}" if provider else name, endpoint_of(config)
        )

    async def call_utility_model(self, system: str, message: str) -> str:
        response, _reasoning = await self.model.unified_call(system_message=system, user_message=message)
        return response
