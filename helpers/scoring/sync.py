"""The synchronous side of the public API: one private event loop in a daemon thread.

Running the coroutine there (not with asyncio.run in the caller's thread) works whether or
not the caller's thread has a running loop, and keeps one pooled HTTP client across calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Mapping, Sequence

from .. import lifecycle
from ..settings_cache import load_settings
from . import client
from .async_api import Ranking, aprobe, arerank
from .verdicts import failed_report

log = logging.getLogger("a0_reranker")

_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None


def _bridge_loop() -> asyncio.AbstractEventLoop:
    global _loop, _loop_thread
    with _loop_lock:
        if _loop is None or not _loop_thread or not _loop_thread.is_alive():
            loop = asyncio.new_event_loop()
            # uninstall stops it (lifecycle); the next synchronous call starts a new one
            _loop_thread = lifecycle.start_thread(_serve, args=(loop,), name="sync", stop=lambda: loop.call_soon_threadsafe(loop.stop))
            _loop = loop
        return _loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:  # stopped: end what still runs on it (its callers get their default), then close
        try:
            loop.run_until_complete(_wind_down())
        finally:
            loop.close()


async def _wind_down() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await client.close_client()


def _run_sync(coro_factory, timeout: float, default: Any) -> Any:
    if threading.current_thread() is _loop_thread:  # called from our own loop: it would deadlock
        log.warning("a0_reranker: the synchronous API was called from its own worker loop; use arerank")
        return default
    coro = coro_factory()
    try:
        future = asyncio.run_coroutine_threadsafe(coro, _bridge_loop())
    except RuntimeError:  # the loop was closed by uninstall (lifecycle) just now
        coro.close()
        return default
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        return default
    except Exception:
        return default


def rerank(query: str, documents: Sequence[str], *, config: Mapping[str, Any] | None = None) -> Ranking | None:
    """Synchronous ``arerank``. Blocks the calling thread for at most the configured timeout."""
    try:
        documents = list(documents)  # once: a generator can be read only once
        if not documents:
            return []
        timeout = load_settings(config).timeout + 1.0
    except Exception:
        return None
    return _run_sync(lambda: arerank(query, documents, config=config), timeout, None)


def probe(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    try:
        timeout = load_settings(config).timeout + 1.0
    except Exception:
        timeout = 10.0
    fail = failed_report("error", "the probe did not finish in time")
    return _run_sync(lambda: aprobe(config), timeout, fail)
