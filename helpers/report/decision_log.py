"""The opt-in decision log (``rerank_shadow_log``), the decision log: one JSON line per search,
applied or measured in shadow mode (its fields chosen here, in ``line``), so a user can judge
the reranker from their own data with ``python -m helpers.cli report LOG``.

A line holds ids, ranks, scores and timings, and the reranker's query with secrets masked;
never memory text, never the API key. Lines are written by a background thread, so a slow
disk never stalls the event loop; if the queue is full a line is dropped, not waited for.
Only to a ``.jsonl`` file inside Agent Zero's ``usr/`` (``decision_log_path``): a path that breaks
that rule when a line is due is warned about once and gets nothing.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from .. import lifecycle, vocabulary
from . import changes, decision_log_path
from .stats import percentile

log = logging.getLogger("a0_reranker")
QUERY_CHARS = 300  # of the masked query, per line
_queue: "queue.Queue[tuple[str, str] | None]" = queue.Queue(maxsize=1000)
_STOP = None  # queued by uninstall (lifecycle): the writer ends once the lines before it are written
_writer: threading.Thread | None = None
_writer_lock = threading.Lock()
_warned: set[tuple[str, str]] = set()  # (path, why): each refusal is logged once


def line(
    *,
    caller: str,
    applied: bool,
    limit: int,
    masked_query: str,
    fused: Sequence[str],
    pool: Sequence[str],
    host_order: Sequence[str],
    plugin_order: Sequence[str],
    reranker_order: Sequence[str],
    reranker_say: str,
    reranker_led: bool,
    scores: Sequence[float],
    reranker_unavailable: str,
    latency_ms: float,
) -> dict[str, Any]:
    """The line for one search, applied or measured in shadow mode: ids, orders and scores (the
    reranker's, for the pool's first ids), and the reranker's query; never memory text. The
    query comes masked and is cut here: masked before it is cut, so a cut never leaves half a
    secret unrecognised."""
    return {
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "caller": caller,
        "applied": applied,
        "limit": limit,
        "query": masked_query[:QUERY_CHARS],
        "fused": list(fused),  # the fused order; the pool below adds the deeper hits
        "pool": list(pool),  # what the reranker was asked to judge
        "host_order": list(host_order),
        "reranked_order": list(plugin_order),  # what the plugin returns (or would)
        "reranker_order": list(reranker_order),
        "reranker_say": reranker_say,
        "reranker_led": reranker_led,  # its own order led: it called its best memory relevant
        "scores": dict(zip(pool, (round(s, 6) for s in scores))),
        "reranker_unavailable": reranker_unavailable,
        "latency_ms": latency_ms,
    }


def record(path: str, line: dict[str, Any]) -> None:
    """Queue one line for ``path``; never blocks, never raises."""
    try:
        _queue.put_nowait((path, json.dumps(line, ensure_ascii=False)))
        _ensure_writer()
    except queue.Full:
        log.info("a0_reranker: decision log queue full; a line was dropped")
    except Exception as exc:  # a log must never cost a recall
        log.info("a0_reranker: decision log: %s", exc)


def _ensure_writer() -> None:
    global _writer
    with _writer_lock:
        if _writer is None or not _writer.is_alive():
            _writer = lifecycle.start_thread(_write_until_stopped, name="decision-log", stop=_stop_writer)


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
        target = decision_log_path.resolve(path)
    except decision_log_path.PathRefused as exc:
        _warn_once(path, str(exc))
        return
    fd = decision_log_path.open_for_append(target)
    with open(fd, "a", encoding="utf-8") as fh:
        fh.write(text + "\n")


def _warn_once(path: str, why: str) -> None:
    if (path, why) not in _warned:
        _warned.add((path, why))
        log.warning("a0_reranker: the decision log (rerank_shadow_log) %r is not written: %s", path, why)


def flush(timeout: float = 5.0) -> None:
    """Wait until queued lines are written (tests, the CLI)."""
    deadline = time.monotonic() + timeout
    while _queue.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.01)


# ---------------------------------------------------------------------------------------
# What ``report`` reads of a log, at most: a file that never ends (/dev/zero, a FIFO) or a
# line without end must not be read until memory runs out. A line is a few kilobytes; a
# log past the cap is summarised from its first MAX_LOG_BYTES, and the summary says so.
MAX_LOG_BYTES = 256 << 20
MAX_LINE_BYTES = 1 << 20


@dataclass
class Skipped:
    """What reading a log left out: how many lines were not in the log's shape (a write cut
    short by a crash, a hand-edited line, a line past MAX_LINE_BYTES), and whether reading
    stopped at MAX_LOG_BYTES before the end."""

    lines: int = 0
    cut: bool = False


def read(path: str, skipped: Skipped | None = None) -> Iterator[dict[str, Any]]:
    """The log's searches, each a line in the shape ``line`` makes. Any other
    line is skipped and counted: one bad line must not hide the rest."""
    skipped = skipped if skipped is not None else Skipped()
    total = 0
    with open(path, "rb") as fh:
        while True:
            if total >= MAX_LOG_BYTES:
                skipped.cut = bool(fh.read(1))
                return
            raw = fh.readline(min(MAX_LINE_BYTES, MAX_LOG_BYTES - total) + 1)
            if not raw:
                return
            total += len(raw)
            if len(raw) > MAX_LINE_BYTES:  # a line without end within the cap
                total += _skip_rest_of_line(fh, MAX_LOG_BYTES - total)
                skipped.lines += 1
                continue
            if not raw.strip():
                continue
            search = _search(raw)
            if search is None:
                skipped.lines += 1
            else:
                yield search


def _skip_rest_of_line(fh, budget: int) -> int:
    """Read past the end of an overlong line, within ``budget`` bytes; the bytes read."""
    taken = 0
    while taken < budget:
        chunk = fh.readline(min(MAX_LINE_BYTES, budget - taken))
        taken += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            break
    return taken


def _search(raw: bytes) -> dict[str, Any] | None:
    """One line as a search, or None when it is not in the log's shape: ids are strings, the
    orders lists of them, the caller a string, the latency a finite number."""
    try:
        value = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for order in ("host_order", "reranked_order"):
        ids = value.get(order, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return None
    if not isinstance(value.get("caller", "?"), str):
        return None
    latency = value.get("latency_ms", 0.0)
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not _finite(latency):
        return None
    return value


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer of hundreds of digits: no latency
        return False


@dataclass(frozen=True)
class LogSummary:
    """What summarise found in a decision log: shares of searches, and latency."""

    searches: int
    by_caller: dict[str, int]
    k: int
    top1_changed: float  # share of searches whose first result reranking changed
    top_k_changed: float  # share whose top k changed
    new_in_top_k_per_search: float
    mean_rank_move: float  # places a memory kept in the top k moved, on average
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    unreadable_lines: int
    read_bytes: int | None  # set when the log was too long to read whole

    def as_dict(self) -> dict[str, Any]:
        """The CLI's --json (its keys are the report's since it was first written)."""
        k = self.k
        return {
            "searches": self.searches,
            "by_caller": dict(self.by_caller),
            "top1_changed": self.top1_changed,
            f"top{k}_changed": self.top_k_changed,
            f"new_in_top{k}_per_search": self.new_in_top_k_per_search,
            "mean_rank_move": self.mean_rank_move,
            "latency_ms": {"p50": self.latency_p50_ms, "p95": self.latency_p95_ms},
            "k": k,
            "unreadable_lines": self.unreadable_lines,
            **({"read_bytes": self.read_bytes} if self.read_bytes is not None else {}),
        }


def summarise(path: str, k: int = 5) -> LogSummary:
    """How often reranking changed the top results, how far memories moved, and latency.
    Read line by line: only the numbers are kept, never the lines."""
    skipped = Skipped()
    n = top_changed = top_k_changed = entered = 0
    moves: list[int] = []
    latencies: list[float] = []
    callers: Counter[str] = Counter()
    for line in read(path, skipped):
        found = changes.versus_host(line.get("host_order", []), line.get("reranked_order", []), k)
        n += 1
        top_changed += found.top_changed
        top_k_changed += found.top_k_changed
        entered += found.entered_top_k
        moves += found.moves
        callers[line.get("caller", "?")] += 1
        if "latency_ms" in line:
            latencies.append(float(line["latency_ms"]))
    if not n:
        notes = ([vocabulary.log_unreadable_lines(skipped.lines)] if skipped.lines else []) + (
            [vocabulary.log_cut(MAX_LOG_BYTES)] if skipped.cut else []
        )
        raise ValueError(vocabulary.log_holds_nothing(notes))
    return LogSummary(
        searches=n,
        by_caller=dict(callers),
        k=k,
        top1_changed=round(top_changed / n, 3),
        top_k_changed=round(top_k_changed / n, 3),
        new_in_top_k_per_search=round(entered / n, 2),
        mean_rank_move=round(statistics.fmean(moves), 2) if moves else 0.0,
        latency_p50_ms=percentile(latencies, 0.5),
        latency_p95_ms=percentile(latencies, 0.95),
        unreadable_lines=skipped.lines,
        read_bytes=MAX_LOG_BYTES if skipped.cut else None,
    )
