"""The synchronous side of the public API, run on the plugin's own event loop (own_loop.py).

Running the coroutine there (not with asyncio.run in the caller's thread) works whether or
not the caller's thread has a running loop, and keeps one pooled HTTP client across calls.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any, Mapping, Sequence

from .. import vocabulary
from ..settings_cache import load_settings
from . import own_loop
from .async_api import CALIBRATION_S, Ranking, arerank, documents_list, probe_of
from .verdicts import ProbeReport, failed

log = logging.getLogger("a0_reranker")


def _run_sync(coro_factory, timeout: float, default: Any) -> Any:
    if threading.current_thread() is own_loop.thread():  # called from our own loop: it would deadlock
        log.warning("a0_reranker: the synchronous API was called from its own worker loop; use arerank")
        return default
    try:
        future = own_loop.submit(coro_factory())
    except RuntimeError:  # the loop was closed by uninstall (lifecycle) just now
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
        documents = documents_list(documents)
        if not documents:
            return []
        timeout = load_settings(config).timeout + 1.0
    except Exception:
        return None
    return _run_sync(lambda: arerank(query, documents, config=config), timeout, None)


def probe(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Synchronous ``aprobe``: the report as a dict (no secrets)."""
    return probe_report(config).as_dict()


def probe_report(config: Mapping[str, Any] | None = None) -> ProbeReport:
    """probe's report, typed; a probe that cannot finish in time is reported as failed.
    A passed probe goes on to measure the say (up to CALIBRATION_S): waited for too, or a
    server that passed in a second would read "did not finish in time"."""
    try:
        timeout = load_settings(config).timeout + CALIBRATION_S + 1.0
    except Exception:
        timeout = 10.0
    return _run_sync(lambda: probe_of(config), timeout, failed("error", vocabulary.PROBE_NOT_IN_TIME))
