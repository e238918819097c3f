"""Shadow mode off the recall path: the agent gets Agent Zero's own result at once, and the
plugin's searches, the reranker and the record of what applying would have changed run
afterwards, in the background of the same event loop.

Bounded: at most ``MAX_IN_FLIGHT`` of them at a time in the whole process; a recall that
finds them all busy is not measured, and the skip is counted (``shadow_skipped``). Never
after the plugin is switched off or uninstalled: each job checks, when it starts, that it
is still wanted, and the uninstall hook (through ``lifecycle``) cancels what is running.
Nothing here raises into the recall.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Awaitable, Callable

from .. import lifecycle, vocabulary
from ..report.stats import CallRecord, STATS

log = logging.getLogger("a0_reranker")

MAX_IN_FLIGHT = 2

_lock = threading.Lock()
_running: set[asyncio.Task] = set()
_stopped = False
_registered = False  # with lifecycle, once: uninstall stops what runs


def submit(job: Callable[[], Awaitable[None]], wanted: Callable[[], bool], caller: str = "") -> bool:
    """Run ``job()`` in the background of the running loop, unless it is busy or stopped.
    ``wanted()`` is asked again when the job starts. True when the job was started; never
    raises (the recall has its answer already)."""
    try:
        return _submit(job, wanted, caller)
    except Exception as exc:
        log.info("a0_reranker: a shadow measurement was not started: %s", type(exc).__name__)
        return False


def _submit(job: Callable[[], Awaitable[None]], wanted: Callable[[], bool], caller: str) -> bool:
    global _registered
    with _lock:
        busy = len(_running) >= MAX_IN_FLIGHT
        if _stopped or busy:
            if busy and not _stopped:
                STATS.record(CallRecord("shadow_skipped", vocabulary.SHADOW_BUSY, caller))
            return False
        task = asyncio.get_running_loop().create_task(_run(job, wanted))
        _running.add(task)
        register, _registered = not _registered, True
    task.add_done_callback(_finished)
    if register:
        try:
            lifecycle.register_stopper(stop)
        except Exception:
            with _lock:
                _registered = False  # tried again at the next measurement
            raise
    return True


async def _run(job: Callable[[], Awaitable[None]], wanted: Callable[[], bool]) -> None:
    try:
        await asyncio.sleep(0)  # the recall's own caller goes first
        if _stopped or not wanted():
            return
        await job()
    except asyncio.CancelledError:
        pass  # stopped: uninstall, or the loop is closing
    except Exception as exc:  # a measurement must never surface anywhere
        log.info("a0_reranker: a shadow measurement failed: %s", exc)


def _finished(task: asyncio.Task) -> None:
    with _lock:
        _running.discard(task)


def running() -> int:
    """How many measurements run now in this process (a testing switch: helpers/process_state.py)."""
    with _lock:
        return len(_running)


def stop() -> None:
    """Cancel what is running and take no more (uninstall, update). Never raises."""
    global _stopped, _registered
    with _lock:
        _stopped, _registered = True, False
        tasks = list(_running)
    for task in tasks:
        try:
            loop = task.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop closed meanwhile: its tasks are gone with it
            pass


def resume() -> None:
    """Take work again: the plugin was wrapped in (again)."""
    global _stopped, _registered
    with _lock:
        _stopped, _registered = False, False


async def drained(timeout: float = 10.0) -> None:
    """Wait until the jobs on this loop have finished (a testing switch, for tests and the
    bench: helpers/process_state.py)."""
    loop = asyncio.get_running_loop()
    with _lock:
        mine = [t for t in _running if t.get_loop() is loop]
    if mine:
        await asyncio.wait(mine, timeout=timeout)
