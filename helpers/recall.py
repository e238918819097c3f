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
from dataclasses import dataclass, field
from typing import Any, Callable

from . import pool, postprocess, shadow_log
from .client import Deadline
from .errors import NotConfigured, RerankError
from .reranker import PLUGIN_NAME, score_documents, skipped_now
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
@dataclass
class Call:
    """Who is searching: which prompt-feeding caller, for which agent, about what."""

    kind: str  # recall | memory_load
    agent: Any
    message: str | None = None  # the user's message (recall only), read from the caller
    history: str | None = None


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
        # The recall extension keeps the user's message and the history it used as locals.
        rendered, history = local_vars.get("user_instruction"), local_vars.get("history")
        if isinstance(rendered, str) and rendered != "None":  # "None": the host had no message
            call.message = message_text(rendered)
            if isinstance(history, str):
                # The message is already the history's last entry; keep only what came before.
                call.history = history[: -len(rendered)].rstrip() if history.endswith(rendered) else history
    return call


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
_TIMEOUT_GRACE_S = 0.25
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
        if settings is None or not settings.enabled or not settings.configured:
            return await original(memory, *args, **kwargs)
        arguments = signature.bind(memory, *args, **kwargs)
        arguments.apply_defaults()
        params = arguments.arguments
        # memory_load's limit and threshold come from the LLM's JSON and may be strings.
        query, limit, threshold = str(params["query"]), int(float(params["limit"])), float(params["threshold"])
        filter_ = params.get("filter") or ""
        if limit <= 0 or not query.strip():
            return await original(memory, *args, **kwargs)
        skipped = skipped_now(settings)
        if skipped is not None:  # a failing endpoint: no pool to gather, no call to make
            raise skipped
        if not settings.apply:
            host_result = await original(memory, *args, **kwargs)
        # The reranker's own deadline (rerank_timeout, inside) must run out first: its
        # DeadlineExceeded counts toward the breaker, a cancellation from out here does not,
        # and a server that accepts and never answers would cost every recall the timeout.
        async with asyncio.timeout(settings.timeout + _TIMEOUT_GRACE_S):
            result = await _rerank(memory, call, settings, query, limit, threshold, filter_)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # every failure: the host's own answer, untouched
        reason = _reason(exc)
        STATS.record(CallRecord("fallback", reason, call.kind, latency_ms=_ms(started)))
        log.info("a0_reranker: %s search falls back to the host's order: %s", call.kind, reason)
        return host_result if host_result is not None else await original(memory, *args, **kwargs)
    try:
        _record(call, settings, result, host_result, limit, _ms(started))
    except Exception as exc:  # bookkeeping must never cost a recall
        log.info("a0_reranker: could not record a search: %s", exc)
    return result.docs if settings.apply else host_result


def _record(call: Call, settings: Settings, result: "Reranked", host_result: list | None, limit: int, latency: float) -> None:
    """Counters for the status views, and the shadow log line when one is configured."""
    notes, pool_size = "; ".join(result.notes), len(result.candidates)
    if settings.shadow_log and result.candidates:  # a search that found nothing has nothing to judge
        shadow_log.record(settings.shadow_log, shadow_log.entry(call.kind, result, host_result, limit, latency, settings.apply))
    if settings.apply:
        outcome = "reranked" if pool_size else "empty"  # nothing matched: nothing to rerank
        STATS.record(CallRecord(outcome, notes, call.kind, pool_size, len(result.docs), latency))
    else:
        impact = shadow_impact(host_result or [], result.docs, limit)
        STATS.record(CallRecord("shadow", notes, call.kind, pool_size, len(host_result or []), latency, impact=impact))


@dataclass
class Reranked:
    """One reranked search: what was read, what came back, and why."""

    docs: list  # at most `limit`, best first
    candidates: list = field(default_factory=list)  # the pool the reranker read
    host_pool: list = field(default_factory=list)  # the host query's own search, in its order
    scores: list = field(default_factory=list)  # per candidate
    query: str = ""  # what the reranker was asked
    notes: list = field(default_factory=list)


async def _rerank(memory, call: Call, settings: Settings, query: str, limit: int, threshold: float, filter_: str):
    deadline = Deadline.after(settings.timeout)
    floor = min(threshold, settings.pool_threshold) if settings.pool_threshold > 0 else threshold
    searches = pool.Searches(host=query)
    if call.kind == "recall" and call.message:
        searches = pool.Searches(
            host=query,
            message=call.message if settings.search_message else "",
            followup=_followup_text(call, settings) if settings.search_followup else "",
        )
    # Each search brings up to rerank_candidates memories; their union (without duplicates)
    # is what the reranker reads, so an extra search never crowds out the host's own pool.
    pool_size = max(limit, settings.candidates)
    texts = searches.texts()
    # One search at a time: each runs the host's FAISS code in an executor thread, and
    # several at once only contend for the GIL with the event loop (longer stalls, no gain).
    found = [await pool.search_pool(memory, text, pool_size, floor, filter_) for text in texts]
    candidates = pool.interleave(found, pool_size * len(texts))
    if not candidates:
        return Reranked([])
    rerank_query = pool.reranker_query(call.message, call.history, query, settings.max_query_chars)
    scored = await score_documents(settings, rerank_query, [d.page_content for d in candidates], deadline)
    outcome = postprocess.order(
        settings, candidates, scored.scores, scored.scale, scored.verdict,
        similarities=lambda docs: pool.similarity_matrix(memory, docs),
    )
    return Reranked(outcome.docs[:limit], candidates, found[-1], scored.scores, rerank_query, outcome.notes)


def _followup_text(call: Call, settings: Settings) -> str:
    tail = pool.history_tail(call.history or "", settings.followup_chars)
    return f"{call.message}\n\n{tail}" if tail else ""


def shadow_impact(host: list, reranked: list, k: int) -> dict[str, Any]:
    """What applying the reranked order would have changed in the top ``k``."""
    host_ids = [pool.doc_key(d) for d in host]
    new_ids = [pool.doc_key(d) for d in reranked[:k]]
    common = [i for i in new_ids if i in host_ids]
    return {
        "top_changed": host_ids[:1] != new_ids[:1],
        "overlap_at_k": round(len(set(host_ids[:k]) & set(new_ids)) / max(1, min(k, max(len(new_ids), len(host_ids[:k])))), 3),
        "from_below_cut": sum(1 for i in new_ids if i not in host_ids),
        "rank_correlation": round(_spearman([host_ids.index(i) for i in common]), 3),
    }


def _spearman(ranks_in_host_order: list[int]) -> float:
    """Spearman correlation between the reranked order and the host order of shared items."""
    n = len(ranks_in_host_order)
    if n < 2:
        return 1.0
    by_host = {r: i for i, r in enumerate(sorted(ranks_in_host_order))}
    d2 = sum((pos - by_host[r]) ** 2 for pos, r in enumerate(ranks_in_host_order))
    return 1 - 6 * d2 / (n * (n * n - 1))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout: no answer within rerank_timeout"
    if isinstance(exc, SettingsError):
        return f"bad setting: {exc}"
    if isinstance(exc, NotConfigured):
        return f"not configured: {exc}"
    if isinstance(exc, RerankError):
        return f"{type(exc).__name__}: {exc}"
    return f"unexpected {type(exc).__name__}: {str(exc)[:200]}"


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def warm_up() -> None:
    """At start: load the in-process cross-encoder in the background when it is selected."""
    try:
        from .reranker import load_settings

        settings = load_settings(None)
        if settings.enabled and settings.api == "local":
            from . import local

            local.warm_in_background(settings)
    except Exception as exc:
        log.info("a0_reranker: warm-up skipped: %s", exc)
