"""The opt-in shadow log (``rerank_shadow_log``): one JSON line per search, applied or measured
in shadow mode (the line is made in pipeline.log_line), so a user can judge the reranker
from their own data with ``python -m helpers.cli report LOG``.

A line holds ids, ranks, scores and timings, and the reranker's query with secrets masked;
never memory text, never the API key. Lines are written by a background thread, so a slow
disk never stalls the event loop; if the queue is full a line is dropped, not waited for.
Only to a ``.jsonl`` file inside Agent Zero's ``usr/`` (``shadow_path``): a path that breaks
that rule when a line is due is warned about once and gets nothing.
"""

from __future__ import annotations

import json
import logging
import queue
import statistics
import threading
import time
from collections import Counter
from typing import Any, Iterable

from .. import lifecycle
from . import changes, shadow_path
from .stats import percentile

log = logging.getLogger("a0_reranker")
QUERY_CHARS = 300  # of the masked query, per line
_queue: "queue.Queue[tuple[str, str] | None]" = queue.Queue(maxsize=1000)
_STOP = None  # queued by uninstall (lifecycle): the writer ends once the lines before it are written
_writer: threading.Thread | None = None
_writer_lock = threading.Lock()
_warned: set[tuple[str, str]] = set()  # (path, why): each refusal is logged once


def record(path: str, line: dict[str, Any]) -> None:
    """Queue one line for ``path``; never blocks, never raises."""
    try:
        _queue.put_nowait((path, json.dumps(line, ensure_ascii=False)))
        _ensure_writer()
    except queue.Full:
        log.info("a0_reranker: shadow log queue full; a line was dropped")
    except Exception as exc:  # a log must never cost a recall
        log.info("a0_reranker: shadow log: %s", exc)


def _ensure_writer() -> None:
    global _writer
    with _writer_lock:
        if _writer is None or not _writer.is_alive():
            _writer = lifecycle.start_thread(_write_until_stopped, name="shadow-log", stop=_stop_writer)


def _stop_writer() -> None:
    _queue.put(_STOP, timeout=1.0)  # behind a full queue it waits for a second, then gives up


def _write_until_stopped() -> None:
    while True:
        item = _queue.get()
        if item is _STOP:
            _queue.task_done()
            return
        path, text = item
        try:
            _append(path, text)
        except Exception as exc:  # whatever the path holds, the writer lives on
            _warn_once(path, f"cannot write it: {type(exc).__name__}: {exc}")
        finally:
            _queue.task_done()


def _append(path: str, text: str) -> None:
    try:
        target = shadow_path.resolve(path)
    except shadow_path.PathRefused as exc:
        _warn_once(path, str(exc))
        return
    fd = shadow_path.open_for_append(target)
    with open(fd, "a", encoding="utf-8") as fh:
        fh.write(text + "\n")


def _warn_once(path: str, why: str) -> None:
    if (path, why) not in _warned:
        _warned.add((path, why))
        log.warning("a0_reranker: the shadow log (rerank_shadow_log) %r is not written: %s", path, why)


def flush(timeout: float = 5.0) -> None:
    """Wait until queued lines are written (tests, the CLI)."""
    deadline = time.monotonic() + timeout
    while _queue.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.01)


# ---------------------------------------------------------------------------------------
def read(path: str, skipped: list[int] | None = None) -> Iterable[dict[str, Any]]:
    """The log's lines. A line that is not a JSON object (a write cut short by a crash) is
    skipped, its number appended to ``skipped``: one bad line must not hide the rest."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                value = None
            if isinstance(value, dict):
                yield value
            elif skipped is not None:
                skipped.append(number)


def summarise(path: str, k: int = 5) -> dict[str, Any]:
    """How often reranking changed the top results, how far memories moved, and latency."""
    skipped: list[int] = []
    lines = list(read(path, skipped))
    if not lines:
        raise ValueError("the log holds no searches" + (f" ({len(skipped)} unreadable lines)" if skipped else ""))
    per_search = [changes.versus_host(x.get("host_order", []), x.get("reranked_order", []), k) for x in lines]
    latencies = [float(x["latency_ms"]) for x in lines if "latency_ms" in x]
    callers = Counter(x.get("caller", "?") for x in lines)
    moves = [m for c in per_search for m in c.moves]
    n = len(lines)
    return {
        "searches": n,
        "by_caller": dict(callers),
        "top1_changed": round(sum(c.top_changed for c in per_search) / n, 3),
        f"top{k}_changed": round(sum(c.top_k_changed for c in per_search) / n, 3),
        f"new_in_top{k}_per_search": round(sum(c.entered_top_k for c in per_search) / n, 2),
        "mean_rank_move": round(statistics.fmean(moves), 2) if moves else 0.0,
        "latency_ms": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95)},
        "k": k,
        "unreadable_lines": len(skipped),
    }


def format_summary(summary: dict[str, Any]) -> str:
    k = summary["k"]
    lat = summary["latency_ms"]
    return "\n".join([
        f"searches logged: {summary['searches']} ({', '.join(f'{c}: {n}' for c, n in summary['by_caller'].items())})",
        f"top result changed by reranking: {summary['top1_changed']:.0%} of searches",
        f"top {k} changed: {summary[f'top{k}_changed']:.0%} of searches; "
        f"{summary[f'new_in_top{k}_per_search']} memories per search entered the top {k}",
        f"memories kept in the top {k} moved {summary['mean_rank_move']} places on average",
        f"reranking latency: p50 {lat['p50']} ms, p95 {lat['p95']} ms",
    ] + ([f"skipped {summary['unreadable_lines']} unreadable lines"] if summary.get("unreadable_lines") else []))
