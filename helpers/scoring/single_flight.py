"""One run of a costly coroutine per key at a time: callers that come while it runs wait for
its result, each within its own time, instead of starting it again.

All of Agent Zero's chats share one event loop, so two chats' first recalls with the same
utility model came together and each probed it (three LLM calls) and measured its say (a
dozen more): twice the calls on a model that is often a small local one, answering one at a
time. A run belongs to the loop it started on; a caller on another loop starts its own.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Awaitable, Callable, Hashable, TypeVar

T = TypeVar("T")


class SingleFlight:
    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Task] = {}
        self._lock = threading.Lock()

    async def run(self, key: Hashable, start: Callable[[], Awaitable[T]], within: float) -> T:
        """``start()``'s result, from the run under way for ``key`` on this loop or a new one.
        Raises ``TimeoutError`` when it is not done ``within`` seconds: the run goes on for the
        others (a caller cancelled or out of time does not cancel it), bounded by its own
        deadline."""
        loop = asyncio.get_running_loop()
        with self._lock:
            task = self._running.get(key)
            if task is None or task.done() or task.get_loop() is not loop:
                task = loop.create_task(start())
                self._running[key] = task
                task.add_done_callback(functools.partial(self._finished, key))
        async with asyncio.timeout(max(0.0, within)):
            return await asyncio.shield(task)

    def _finished(self, key: Hashable, task: asyncio.Task) -> None:
        with self._lock:
            if self._running.get(key) is task:
                del self._running[key]
        if not task.cancelled():
            task.exception()  # retrieved: a run nobody waits for any more logs nothing
