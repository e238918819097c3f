"""One deadline per recall, well inside the host's 30 seconds, whatever the settings say.

Agent Zero runs a recall as one task under ``asyncio.wait_for(..., timeout=30)``: the
optional query-preparation LLM call, the memories search, the solutions search and the
optional post-filter LLM call, one after the other. When the 30 s run out the host cancels
the task, and the turn gets no memories at all (worse than stock). So the plugin's own work
in one recall — both searches, every reranker call, the utility-model judge — shares one
budget, started by the recall's first search; settings (``rerank_timeout`` up to 120 s)
can only shorten what a search may spend, never lengthen the recall.

What runs out of the budget: a reranker call gets the time that is left (the search then
keeps the fused order); a search whose own steps overrun it returns the host's own result.
``RECALL_BUDGET_S`` leaves the host 15 s of its 30 for its own LLM calls and its searches.
"""

from __future__ import annotations

import asyncio
import threading
import weakref

from ..scoring.client import Deadline

RECALL_BUDGET_S = 15.0
# Below this there is no point starting a reranker call: the search keeps the fused order.
MIN_CALL_S = 0.25

_by_task: "weakref.WeakKeyDictionary[asyncio.Task, Deadline]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def for_search(kind: str) -> Deadline:
    """The deadline a search works to. A recall's two searches run in one task (the host's
    ``create_task(wait_for(search_memories(...)))``) and share its deadline; any other
    caller (the memory_load tool) gets a budget of its own per search."""
    task = asyncio.current_task() if kind == "recall" else None
    if task is None:
        return Deadline.after(RECALL_BUDGET_S)
    with _lock:
        deadline = _by_task.get(task)
        if deadline is None:
            deadline = _by_task[task] = Deadline.after(RECALL_BUDGET_S)
    return deadline


def call_deadline(recall: Deadline, timeout: float) -> Deadline:
    """A reranker call's deadline: its own timeout, or what the recall has left if less."""
    return Deadline(min(recall.expires_at, Deadline.after(timeout).expires_at))


def reset() -> None:
    """Testing switch: forget every recall's deadline."""
    with _lock:
        _by_task.clear()
