"""The plugin's own event loop, in a daemon thread: work that must outlive the caller's loop.

The synchronous public API runs its coroutines here (sync.py), and so does a reranker's
calibration (calibration.py): a measurement that takes longer than one recall goes on
after that recall's loop has moved on, and never runs on the host's loop. One pooled HTTP
client serves it across calls (client.py keeps one per loop). Uninstall stops it
(lifecycle); the next caller starts a new one.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine

from .. import lifecycle
from . import client

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The running loop, started now if there is none (or it was stopped)."""
    global _loop, _thread
    with _lock:
        if _loop is None or not _thread or not _thread.is_alive():
            new = asyncio.new_event_loop()
            _thread = lifecycle.start_thread(
                _serve, args=(new,), name="sync", stop=lambda: new.call_soon_threadsafe(new.stop)
            )
            _loop = new
        return _loop


def thread() -> threading.Thread | None:
    """The loop's thread, if one was started."""
    return _thread


def submit(coro: Coroutine[Any, Any, Any]):
    """Run ``coro`` on the loop: a concurrent.futures.Future of its result. Raises
    RuntimeError (the coroutine closed) when uninstall closed the loop just now."""
    try:
        return asyncio.run_coroutine_threadsafe(coro, loop())
    except RuntimeError:
        coro.close()
        raise


def _serve(running: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(running)
    try:
        running.run_forever()
    finally:  # stopped: end what still runs on it (its callers get their default), then close
        try:
            running.run_until_complete(_wind_down())
        finally:
            running.close()


async def _wind_down() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await client.close_client()
