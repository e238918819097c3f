"""Stopping the plugin's background work: what the ``uninstall`` and ``pre_update`` hooks
call, so nothing of the plugin keeps running after it is gone or while it is replaced.

Two kinds of work register here:

- a thread started with ``start_thread`` carries its own stop function. The host purges
  the plugin's modules (``usr.plugins``) on many plugin changes, and the next import is a
  fresh copy whose globals know nothing of the threads the old copy started; the threads
  themselves stay findable (``threading.enumerate()``), so they are stopped even then;
- anything else (a task on a host loop, a loaded model to drop) registers a function with
  ``register_stopper``. Those registrations live in this module, so a purge forgets them:
  such work must also end by itself.

Work is started again lazily by whoever needs it next, so stopping is safe at any time.
Nothing here raises.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

log = logging.getLogger("a0_reranker")

THREAD_PREFIX = "a0_reranker-"
_STOP_ATTR = "_a0_reranker_stop"  # set on each thread start_thread starts

_stoppers: list[Callable[[], Any]] = []
_stoppers_lock = threading.Lock()


def register_stopper(stop: Callable[[], Any]) -> None:
    """Call ``stop()`` at the next ``stop_background_work``; registering it again is a no-op."""
    with _stoppers_lock:
        if not any(s is stop for s in _stoppers):
            _stoppers.append(stop)


def start_thread(
    target: Callable[..., Any], *, name: str, stop: Callable[[], Any], args: tuple = ()
) -> threading.Thread:
    """Start a daemon thread named ``a0_reranker-<name>``; ``stop()`` must make it end soon."""
    thread = threading.Thread(target=target, args=args, name=THREAD_PREFIX + name, daemon=True)
    setattr(thread, _STOP_ATTR, stop)
    thread.start()
    return thread


def stop_background_work(timeout: float = 2.0) -> list[str]:
    """Stop all registered work and wait up to ``timeout`` seconds in all for the threads to
    end. Returns the names of threads still running (empty when everything stopped)."""
    with _stoppers_lock:
        stoppers = list(_stoppers)
        _stoppers.clear()
    threads = [
        t
        for t in threading.enumerate()
        if getattr(t, _STOP_ATTR, None) is not None and t is not threading.current_thread()
    ]
    for stop in stoppers + [getattr(t, _STOP_ATTR) for t in threads]:
        try:
            stop()
        except Exception as exc:  # one failing stopper must not keep the others running
            log.warning("a0_reranker: stopping background work: %s: %s", type(exc).__name__, exc)
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    running = [t.name for t in threads if t.is_alive()]
    if running:
        log.warning("a0_reranker: background threads still running after %g s: %s", timeout, ", ".join(running))
    return running
