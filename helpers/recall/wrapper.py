"""The wrapper around Agent Zero's ``Memory.search_similarity_threshold``.

Only the prompt-feeding callers are reranked: the recall extension's ``search_memories``
and the ``memory_load`` tool. Every other caller (delete-by-query, consolidation, the
dashboard) gets the original method's own result, object for object.

What is left here is who is calling and the last rung of the fallback ladder
(failures.py): the stages of a search (pipeline.py) leave the fused order when the reranker
fails, and any failure of the plugin's own steps returns exactly what the unwrapped method
returns for the same call (``host_answer_instead``), recorded the way every search is
(outcome.py). Only ``asyncio.CancelledError`` propagates: it is how Agent Zero stops a chat.

Nothing happens at import time. ``ensure_wrapped()`` keeps its marker and the original
function on the host's ``Memory`` class itself, so a purge and re-import of this module
never stacks a second layer, and a fresh ``Memory`` class (after the host purges
``plugins``) is simply wrapped again.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import sys
import time
from typing import Any, Callable

from .. import settings_cache
from ..deadline import GRACE_S
from ..report.stats import STATS  # noqa: F401  (the tests and the bench read the counters here)
from ..scoring import calling_agent
from ..settings import PLUGIN_NAME, Settings
from . import conversation, deadlines, failures, outcome, pipeline, shadow
from .pipeline import Call

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
        if current is not None and getattr(current, IMPL, None) is search_for_caller:
            return True
        # Unwrapped, or wrapped by an older copy of this module (after a purge): wrap the
        # original, never the old wrapper, so there is always exactly one layer.
        original = current.__wrapped__ if current is not None else cls.__dict__[METHOD]
        setattr(cls, METHOD, _make_wrapper(original))
        shadow.resume()
        return True
    except Exception as exc:
        log.warning("a0_reranker: could not wrap the memory search: %s", exc)
        return False


def unwrap() -> bool:
    """Restore the original function object. Never raises. True when something was undone."""
    try:
        cls = _memory_class()
        current = _installed(cls)
        if current is not None:
            setattr(cls, METHOD, current.__wrapped__)
        return current is not None
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
        return await search_for_caller(original, signature, sys._getframe(1), self, args, kwargs)

    setattr(wrapper, MARKER, True)
    setattr(wrapper, IMPL, search_for_caller)
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
    post_filter = kind == "recall" and _setting_on(local_vars.get("set"), "memory_recall_post_filter")
    # The recall's deadline counts from the host's own start, under the host's own timeout
    # (its recall module's SEARCH_TIMEOUT), leaving its post-filter its time.
    deadline = deadlines.for_search(kind, frame.f_globals.get("SEARCH_TIMEOUT"), post_filter)
    call = Call(kind, getattr(local_vars.get("self"), "agent", None), deadline=deadline)
    if kind == "recall":
        call.log_item = local_vars.get("log_item")
        # The recall extension keeps the user's message, the history it used and its own
        # settings as locals.
        rendered, history = local_vars.get("user_instruction"), local_vars.get("history")
        if isinstance(rendered, str) and rendered != "None":  # "None": the host had no message
            call.message = conversation.user_message(rendered)
            if isinstance(history, str):
                # The message is already the history's last entry; keep only what came before.
                call.history = history[: -len(rendered)].rstrip() if history.endswith(rendered) else history
        call.prompt_slots = _prompt_slots(local_vars.get("set"))
        call.query_prepared = _setting_on(local_vars.get("set"), "memory_recall_query_prep")
        call.post_filter = post_filter
        call.solutions_limit = _host_int(local_vars.get("set"), "memory_recall_solutions_max_search")
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


def _host_int(memory_settings: Any, key: str) -> int:
    """A number of the host's _memory settings, or 0 when it is missing or not a number."""
    try:
        return max(0, int(memory_settings[key])) if isinstance(memory_settings, dict) else 0
    except (KeyError, TypeError, ValueError):
        return 0


def _setting_on(memory_settings: Any, key: str) -> bool:
    """A switch of the host's _memory settings is on, by the host's own test: its truth."""
    return isinstance(memory_settings, dict) and bool(memory_settings.get(key))


_SETTINGS_TTL_S = 5.0


def agent_settings(agent: Any) -> Settings | None:
    """The agent's settings when the plugin is enabled for it, else None. The enabled check
    is the host's own (cached by the host, cleared on every toggle); the config file is
    read at most every few seconds, and at once after a save. Raises ``SettingsError``."""
    from helpers import plugins  # the host's module

    if PLUGIN_NAME not in plugins.get_enabled_plugins(agent):
        return None
    key = settings_cache.agent_key(agent)
    read = lambda: Settings.from_mapping(plugins.get_plugin_config(PLUGIN_NAME, agent=agent) or {})  # noqa: E731
    return settings_cache.remembered(key, read, _SETTINGS_TTL_S)


async def search_for_caller(original, signature, frame, memory, args, kwargs):
    """What the wrapped method returns to the caller behind ``frame``: for the recall
    extension and memory_load, the plugin's order (in shadow mode the host's own, measured
    afterwards); for every other caller, and when the plugin is off, the host's own."""
    call = identify_caller(frame)
    del frame  # no frame references kept past this point
    if call is None:
        return await original(memory, *args, **kwargs)
    started = time.monotonic()
    search = None
    try:
        settings = agent_settings(call.agent)
        if settings is not None and settings.enabled:
            search = _search_for(call, settings, signature, memory, args, kwargs)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bad setting, odd arguments: the host's own answer
        return await host_answer_instead(
            call, exc, started, original(memory, *args, **kwargs), _filter_of(signature, memory, args, kwargs)
        )
    if search is None:  # switched off, or nothing to search with: not ours to touch
        return await original(memory, *args, **kwargs)
    search.started = started
    if not search.settings.apply:
        # Shadow mode costs the recall nothing: the host's answer goes back at once, and
        # the plugin measures what applying would have changed afterwards.
        search.host_answer = await original(memory, *args, **kwargs)
        shadow.submit(lambda: _measure(memory, search), lambda: _still_shadow(call.agent), call.kind)
        return search.host_answer
    try:
        # The recall's deadline bounds the plugin's own steps too (a slow embedder, a huge
        # store): past it, the host's own answer, while the host still has time to use it.
        async with asyncio.timeout(max(deadlines.MIN_CALL_S, call.deadline.remaining()) + 2 * GRACE_S):
            with calling_agent.asking(call.agent):  # the utility-model judge asks this agent's model
                await pipeline.run(memory, search)  # its last stage records what the search did
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a failure of the plugin's own steps: the host's own answer
        return await host_answer_instead(call, exc, started, original(memory, *args, **kwargs), search.filter)
    return search.docs


_PARAMS = frozenset({"query", "limit", "threshold", "filter"})
_REQUIRED = frozenset({"query", "limit", "threshold"})


def _search_for(call: Call, settings: Settings, signature, memory, args, kwargs) -> pipeline.Search | None:
    if not args and kwargs.keys() <= _PARAMS and _REQUIRED <= kwargs.keys():
        params = kwargs  # how both callers call it: by keyword (binding costs more than the rest)
    else:
        arguments = signature.bind(memory, *args, **kwargs)
        arguments.apply_defaults()
        params = arguments.arguments
    # memory_load's limit and threshold come from the LLM's JSON and may be strings.
    query, limit, threshold = str(params["query"]), int(float(params["limit"])), float(params["threshold"])
    if limit <= 0 or not query.strip():
        return None
    return pipeline.Search(call, settings, query, limit, threshold, params.get("filter") or "")


def _filter_of(signature, memory, args, kwargs) -> str:
    """The caller's filter, for the recall line's "memories" or "solutions"; "" if unknown."""
    try:
        value = signature.bind_partial(memory, *args, **kwargs).arguments.get("filter")
        return value if isinstance(value, str) else ""
    except TypeError:
        return ""


async def host_answer_instead(call: Call, exc: BaseException, started: float, host_answer, search_filter: str = ""):
    """The host's own answer to a search whose own steps failed, recorded like every search
    (outcome.keep): counted as a fallback, and said on the recall's line."""
    try:
        failure = failures.plugin_failed(exc)
        outcome.keep(
            outcome.fallback(call.kind, pipeline.area_of(search_filter), failure, outcome.ms_since(started)),
            call.log_item,
        )
        log.info("a0_reranker: %s search falls back to the host's order: %s", call.kind, failure.reason)
    except Exception as broken:  # recording the fallback must not cost the host's answer
        log.info("a0_reranker: could not record a fallback: %s", type(broken).__name__)
    return await host_answer


async def _measure(memory: Any, search: pipeline.Search) -> None:
    """Shadow mode, in the background: the whole pipeline, its record against what the host
    returned (search.host_answer). A failure is counted; the agent already has the host's
    answer, and the chat says nothing of it."""
    search.started = time.monotonic()
    # Off the recall's path: the recall's deadline is not this measurement's.
    search.call.deadline = deadlines.Deadline.after(deadlines.RECALL_SECONDS)
    search.still_wanted = lambda: _still_shadow(search.call.agent)  # switched off meanwhile: nothing more to say
    try:
        with calling_agent.asking(search.call.agent):
            await pipeline.run(memory, search)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        try:
            failure = failures.measurement_failed(exc)
            outcome.keep(outcome.fallback(search.call.kind, search.area, failure, outcome.ms_since(search.started)))
        except Exception as broken:
            log.info("a0_reranker: could not record a failed measurement: %s", type(broken).__name__)


def _still_shadow(agent: Any) -> bool:
    """Still enabled, still in shadow mode: a measurement queued before a switch is dropped."""
    try:
        settings = agent_settings(agent)
    except Exception:
        return False
    return settings is not None and settings.enabled and not settings.apply
