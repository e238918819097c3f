"""The wrapper around Agent Zero's ``Memory.search_similarity_threshold``.

Only the prompt-feeding callers are reranked: the recall extension's ``search_memories``
and the ``memory_load`` tool. Every other caller (delete-by-query, consolidation, the
dashboard) gets the original method's own result, object for object.

Any failure, in any step, returns exactly what the unwrapped method returns for the same
call. Only ``asyncio.CancelledError`` propagates: it is how Agent Zero stops a chat.

Nothing happens at import time. ``ensure_wrapped()`` keeps its marker and the original
function on the host's ``Memory`` class itself, so a purge and re-import of this module
never stacks a second layer, and a fresh ``Memory`` class (after the host purges
``plugins``) is simply wrapped again.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import os
import sys
import threading
import time
from typing import Any, Callable

from . import pipeline
from .pipeline import Call
from .reranker import PLUGIN_NAME
from .settings import Settings, SettingsError
from .stats import STATS, CallRecord

log = logging.getLogger("a0_reranker")

MEMORY_MODULE = "plugins._memory.helpers.memory"
METHOD = "search_similarity_threshold"
MARKER = "__a0_reranker_wrapper__"
IMPL = "__a0_reranker_impl__"  # which copy of this module made the wrapper

# (function name, file name) of the callers whose results feed the prompt.
RERANKED_CALLERS: dict[tuple[str, str], str] = {
    ("search_memories", "_50_recall_memories.py"): "recall",
    ("execute", "memory_load.py"): "memory_load",
}


def _memory_class() -> type:
    module = sys.modules.get(MEMORY_MODULE)
    if module is None:
        import importlib

        module = importlib.import_module(MEMORY_MODULE)
    return module.Memory


def _installed(cls: type) -> Callable | None:
    current = cls.__dict__.get(METHOD)
    return current if getattr(current, MARKER, False) else None


def ensure_wrapped() -> bool:
    """Wrap the host's search once. Idempotent; never raises. True when the wrap is live."""
    try:
        cls = _memory_class()
        current = _installed(cls)
        if current is not None and getattr(current, IMPL, None) is search_similarity_threshold:
            return True
        # Unwrapped, or wrapped by an older copy of this module (after a purge): wrap the
        # original, never the old wrapper, so there is always exactly one layer.
        original = current.__wrapped__ if current is not None else cls.__dict__[METHOD]
        setattr(cls, METHOD, _make_wrapper(original))
        return True
    except Exception as exc:
        log.warning("a0_reranker: could not wrap the memory search: %s", exc)
        return False


def unwrap() -> bool:
    """Restore the original function object. Never raises. True when something was undone."""
    try:
        cls = _memory_class()
        current = _installed(cls)
        if current is None:
            return False
        setattr(cls, METHOD, current.__wrapped__)
        return True
    except Exception as exc:
        log.warning("a0_reranker: could not unwrap the memory search: %s", exc)
        return False


def is_wrapped() -> bool:
    try:
        return _installed(_memory_class()) is not None
    except Exception:
        return False


def _make_wrapper(original: Callable) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)  # sets __wrapped__ = original: that is how unwrap finds it
    async def wrapper(self, *args, **kwargs):
        # Frame 1 is the awaiting caller, before and after our first await, also inside
        # create_task(wait_for(...)) as recall runs it.
        return await search_similarity_threshold(original, signature, sys._getframe(1), self, args, kwargs)

    setattr(wrapper, MARKER, True)
    setattr(wrapper, IMPL, search_similarity_threshold)
    return wrapper


# ---------------------------------------------------------------------------------------
def identify_caller(frame: Any) -> Call | None:
    """The reranked caller behind ``frame``, or None for every other caller."""
    if frame is None:
        return None
    code = frame.f_code
    kind = RERANKED_CALLERS.get((code.co_name, os.path.basename(code.co_filename)))
    if kind is None:
        return None
    local_vars = frame.f_locals
    call = Call(kind, getattr(local_vars.get("self"), "agent", None))
    if kind == "recall":
        # The recall extension keeps the user's message, the history it used and its own
        # settings as locals.
        rendered, history = local_vars.get("user_instruction"), local_vars.get("history")
        if isinstance(rendered, str) and rendered != "None":  # "None": the host had no message
            call.message = message_text(rendered)
            if isinstance(history, str):
                # The message is already the history's last entry; keep only what came before.
                call.history = history[: -len(rendered)].rstrip() if history.endswith(rendered) else history
        call.slots = _prompt_slots(local_vars.get("set"))
    return call


def _prompt_slots(memory_settings: Any) -> dict[str, int]:
    """How many memories and solutions the host puts into the prompt (its max_result)."""
    slots = {}
    if isinstance(memory_settings, dict):
        for area in ("memories", "solutions"):
            try:
                slots[area] = int(memory_settings[f"memory_recall_{area}_max_result"])
            except (KeyError, TypeError, ValueError):
                pass
    return slots


def message_text(rendered: str) -> str:
    """The user's own words from the recall extension's ``user_instruction``.

    The host renders the message as ``user: {"user_message": "...", ...}`` (history label
    plus the JSON of prompts/fw.user_message.md, empty parts removed). Decode that format;
    anything else is returned as it is."""
    text = rendered.strip()
    if text.startswith("user:"):
        text = text[len("user:") :].strip()
    try:
        content = json.loads(text)
    except ValueError:
        return text
    if isinstance(content, dict) and isinstance(content.get("user_message"), str):
        return content["user_message"]
    return text


_SETTINGS_TTL_S = 5.0
_settings_cache: dict[tuple, tuple[float, Settings]] = {}
_settings_lock = threading.Lock()


def agent_settings(agent: Any) -> Settings | None:
    """The agent's settings when the plugin is enabled for it, else None. The enabled check
    is the host's own (cached by the host, cleared on every toggle); the config file is
    read at most every few seconds, and at once after a save. Raises ``SettingsError``."""
    from helpers import plugins  # the host's module

    if PLUGIN_NAME not in plugins.get_enabled_plugins(agent):
        return None
    config = getattr(agent, "config", None)
    key = (getattr(config, "profile", ""), id(getattr(agent, "context", None)))
    now = time.monotonic()
    with _settings_lock:
        hit = _settings_cache.get(key)
    if hit and hit[0] > now:
        return hit[1]
    settings = Settings.from_mapping(plugins.get_plugin_config(PLUGIN_NAME, agent=agent) or {})
    with _settings_lock:
        if len(_settings_cache) > 256:
            _settings_cache.clear()
        _settings_cache[key] = (now + _SETTINGS_TTL_S, settings)
    return settings


def forget_settings() -> None:
    with _settings_lock:
        _settings_cache.clear()


async def search_similarity_threshold(original, signature, frame, memory, args, kwargs):
    call = identify_caller(frame)
    del frame  # no frame references kept past this point
    if call is None:
        return await original(memory, *args, **kwargs)
    started = time.monotonic()
    host_result = None
    try:
        settings = agent_settings(call.agent)
        if settings is None or not settings.enabled:
            return await original(memory, *args, **kwargs)
        arguments = signature.bind(memory, *args, **kwargs)
        arguments.apply_defaults()
        params = arguments.arguments
        # memory_load's limit and threshold come from the LLM's JSON and may be strings.
        query, limit, threshold = str(params["query"]), int(float(params["limit"])), float(params["threshold"])
        filter_ = params.get("filter") or ""
        if limit <= 0 or not query.strip():
            return await original(memory, *args, **kwargs)
        if not settings.apply:
            host_result = await original(memory, *args, **kwargs)
        search = await pipeline.run(memory, pipeline.Search(call, settings, query, limit, threshold, filter_))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a failure of the plugin's own steps: the host's own answer
        reason = _reason(exc)
        STATS.record(CallRecord("fallback", reason, call.kind, latency_ms=_ms(started)))
        log.info("a0_reranker: %s search falls back to the host's order: %s", call.kind, reason)
        return host_result if host_result is not None else await original(memory, *args, **kwargs)
    try:
        pipeline.record(search, host_result, _ms(started))
    except Exception as exc:  # bookkeeping must never cost a recall
        log.info("a0_reranker: could not record a search: %s", exc)
    return search.docs if settings.apply else host_result


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SettingsError):
        return f"bad setting: {exc}"
    return pipeline.unavailable_reason(exc)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
