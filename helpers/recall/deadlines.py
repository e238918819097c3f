"""One deadline per recall, well inside the host's 30 seconds, whatever the settings say.

Agent Zero runs a recall as one task under ``asyncio.wait_for(..., timeout=30)``: the
optional query-preparation LLM call, the memories search, the solutions search and the
optional post-filter LLM call, one after the other. When the 30 s run out the host cancels
the task, and the turn gets no memories at all (worse than stock). So the plugin's own work
in one recall — both searches, every reranker call, the utility-model judge — shares one
budget, started by the recall's first search; settings (``rerank_timeout`` up to 120 s)
can only shorten what a search may spend, never lengthen the recall.

The host's clock starts earlier than the first search: its query preparation (a utility
model call, 17 s on a slow model) runs first under the same 30 s. So the deadline is also
capped by when the host's recall started, stamped by the plugin's
``message_loop_prompts_after/_46_a0_reranker_recall_clock.py`` just before the host's
``_50_recall_memories.py`` creates the recall task: the stamp is a context variable, and
``create_task`` copies the context, so each recall task carries its own start (a later
iteration's stamp never reaches an earlier recall still running). The cap leaves
``HOST_MARGIN_S`` of the host's time unused, and ``POST_FILTER_RESERVE_S`` more when the
host's own post-filter (another utility model call) still has to run after the searches.

What runs out of the budget: a reranker call gets the time that is left (the search then
keeps the fused order); a search whose own steps overrun it returns the host's own result.
``RECALL_SECONDS`` leaves the host 15 s of its 30 for its own LLM calls and its searches.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
import time
import weakref

from ..deadline import RECALL_SECONDS, Deadline

# Below this there is no point starting a reranker call: the search keeps the fused order.
MIN_CALL_S = 0.25
# The host's SEARCH_TIMEOUT when its recall module does not say (Agent Zero's 30 s).
HOST_TIMEOUT_S = 30.0
# What the plugin leaves of the host's time: the grace of its own guards past the deadline
# (2 x deadline.GRACE_S), the host's own search on a fallback, the host's own cut.
HOST_MARGIN_S = 1.5
# The host's post-filter (memory_recall_post_filter) is one more utility model call after
# both searches; the recall leaves it this much of the host's time.
POST_FILTER_RESERVE_S = 8.0

# When the host's recall started, as this task's context saw it (see the module's doc).
_host_recall_started: "contextvars.ContextVar[float | None]" = contextvars.ContextVar(
    "a0_reranker_host_recall_started", default=None
)

_by_task: "weakref.WeakKeyDictionary[asyncio.Task, Deadline]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def stamp_host_recall_start() -> None:
    """The host's recall starts now: called from the extension that runs just before the
    host's recall extension, in the agent loop's task, whose context the recall task copies."""
    _host_recall_started.set(time.monotonic())


def for_search(kind: str, host_timeout: object = None, post_filter: bool = False) -> Deadline:
    """The deadline a search works to. A recall's two searches run in one task (the host's
    ``create_task(wait_for(search_memories(...)))``) and share its deadline; any other
    caller (the memory_load tool) gets a budget of its own per search. ``host_timeout`` is
    the host's own SEARCH_TIMEOUT as its recall module has it; ``post_filter``: the host's
    post-filter runs after the searches."""
    task = asyncio.current_task() if kind == "recall" else None
    if task is None:
        return Deadline.after(RECALL_SECONDS)
    with _lock:
        deadline = _by_task.get(task)
        if deadline is None:
            deadline = _by_task[task] = _recall_deadline(host_timeout, post_filter)
    return deadline


def _recall_deadline(host_timeout: object, post_filter: bool) -> Deadline:
    """The plugin's own budget from now, capped by the host's clock when its start is known."""
    own = Deadline.after(RECALL_SECONDS)
    started = _host_recall_started.get()
    if started is None:  # no stamp (an older copy of the extension, a direct caller): the budget alone
        return own
    reserve = HOST_MARGIN_S + (POST_FILTER_RESERVE_S if post_filter else 0.0)
    return Deadline(min(own.expires_at, started + _seconds(host_timeout) - reserve))


def _seconds(host_timeout: object) -> float:
    """The host's timeout when it is a plain positive number, else Agent Zero's own."""
    if isinstance(host_timeout, (int, float)) and not isinstance(host_timeout, bool):
        if math.isfinite(host_timeout) and host_timeout > 0:
            return float(host_timeout)
    return HOST_TIMEOUT_S


def call_deadline(recall: Deadline, timeout: float) -> Deadline:
    """A reranker call's deadline: its own timeout, or what the recall has left if less."""
    return Deadline(min(recall.expires_at, Deadline.after(timeout).expires_at))


def forget() -> None:
    """Testing switch: forget every recall's deadline."""
    with _lock:
        _by_task.clear()
