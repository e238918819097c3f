"""``rerank_api: local``: an in-process cross-encoder through sentence-transformers (a scorer).

Optional: sentence-transformers ships inside Agent Zero, but not with this plugin. Without
it, or without the model, the probe report says so and recall keeps the fused order.

Each (model, device, max length) is loaded once, in its own daemon thread: never on an
event loop, and concurrent first calls share that one load instead of each starting one.
Callers on a loop await the load without blocking it; a call that cannot wait (its
timeout) gives up while the load carries on for the next call. A failed load is not
retried for a minute, so a missing model does not cost a load attempt on every recall;
the probe (Test connection) always tries again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ... import lifecycle, vocabulary
from ...vocabulary import scorer_words as words
from ...deadline import Deadline
from ...errors import DeadlineExceeded, NotConfigured
from ...settings import Settings
from ..verdicts import PROBE_DOCS, PROBE_QUERY, ProbeReport, Verdict, grade_probe
from .base import InProcess

RETRY_FAILED_LOAD_S = 60.0
MAX_MODELS = 2  # models kept loaded at once (per-project settings may name different ones)
# A cross-encoder reads the query beside every memory of the pool, so on a CPU its time
# grows with the query: ms-marco-MiniLM-L-12 on two idle cores scored 60 memories in 2.2 s
# with a 93-character query and in 11.6 s with 1,594 characters, past rerank_timeout, where
# the fused order stands and the scoring goes on holding the CPU. Every figure of its
# relevance was measured with the query cut to 400 (docs/relevance.md). On a CPU its query
# is the message and as much of the newest conversation as fits in this many characters
# (rerank_max_query_chars when that is lower); on a GPU, rerank_max_query_chars.
CPU_QUERY_CHARS = 400


@dataclass
class Loaded:
    model: Any  # sentence_transformers.CrossEncoder
    scale: str  # probability (the model's head ends in a sigmoid) or logit
    # One forward pass at a time per model: the fast tokenizer is not re-entrant ("Already
    # borrowed" under concurrent calls), and the CPU's threads are shared anyway.
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The model's own worker thread. Never the event loop's default executor: the host's
    # embedder runs there (LangChain's aembed_query), and calls queued on this model's lock
    # held its few threads, so a calibration on a busy CPU starved the recall's own
    # embedding until the host cancelled the recall (measured with a real L-12 model). A
    # call given up on before it started is dropped from this queue, not run later.
    worker: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="a0_reranker-local"
        )
    )


@dataclass
class _Load:
    future: concurrent.futures.Future
    started: float
    failed_at: float | None = None


_loads: dict[tuple, _Load] = {}
_lock = threading.Lock()


def _key(settings: Settings) -> tuple:
    return (settings.local_model, settings.local_device, settings.local_max_length)


def _device(name: str) -> str | None:
    return None if name == "auto" else name  # None lets sentence-transformers pick


def runs_on_cpu(settings: Settings) -> bool:
    """The model runs on the CPU: ``rerank_local_device`` cpu, or auto and the loaded model
    is on it. Auto before the model has loaded counts as the CPU, the likelier and the safer
    guess: a GPU then reads a shorter query until the load is done."""
    if settings.local_device != "auto":
        return settings.local_device == "cpu"
    with _lock:
        entry = _loads.get(_key(settings))
    future = entry.future if entry is not None else None
    if future is None or not future.done() or future.cancelled() or future.exception() is not None:
        return True
    model = future.result().model
    # sentence-transformers 4 and later: the module's device; 3.x: _target_device.
    device = getattr(model, "device", None) or getattr(model, "_target_device", None)
    return getattr(device, "type", "cpu") == "cpu"


def _model_path(name: str) -> Path | None:
    """The folder ``name`` names, or None for a Hugging Face model id."""
    path = Path(name).expanduser()
    if name.startswith(("/", "./", "../", "~", ".\\", "..\\")) or os.path.isabs(name) or path.is_dir():
        return path
    return None


def _scale(model: Any) -> str:
    # sentence-transformers 3.x calls it default_activation_function, 4.x activation_fn.
    activation = getattr(model, "activation_fn", None) or getattr(model, "default_activation_function", None)
    return "probability" if type(activation).__name__ == "Sigmoid" else "logit"


def _load(settings: Settings) -> Loaded:
    """Import sentence-transformers and build the CrossEncoder (blocking). Raises ``NotConfigured``."""
    try:
        from sentence_transformers import CrossEncoder
    except ImportError:
        raise NotConfigured(words.LOCAL_NOT_INSTALLED) from None
    except Exception as exc:  # installed but broken (a torch mismatch, typically)
        raise NotConfigured(words.local_broken_install(type(exc).__name__, str(exc)[:200])) from None
    name = settings.local_model
    path = _model_path(name)
    if path is not None and not path.is_dir():
        raise NotConfigured(words.local_no_folder(name))
    try:
        model = CrossEncoder(
            str(path) if path is not None else name,
            device=_device(settings.local_device),
            max_length=settings.local_max_length,
        )
    except Exception as exc:
        where = "" if path is not None else words.LOCAL_DOWNLOAD_NOTE
        raise NotConfigured(words.local_cannot_load(name, type(exc).__name__, str(exc)[:200], where)) from None
    return Loaded(model, _scale(model))


def _run_load(settings: Settings, future: concurrent.futures.Future) -> None:
    try:
        loaded = _load(settings)
    except BaseException as exc:
        with _lock:
            entry = _loads.get(_key(settings))
            if entry is not None and entry.future is future:
                entry.failed_at = time.monotonic()
        future.set_exception(exc)
    else:
        future.set_result(loaded)


def loading(settings: Settings, *, retry: bool = False) -> concurrent.futures.Future:
    """The load of this model: finished, under way, or started now in its own thread.
    A failed load is started again after ``RETRY_FAILED_LOAD_S``, or at once with ``retry``."""
    key = _key(settings)
    with _lock:
        entry = _loads.get(key)
        stale = (
            entry is not None
            and entry.failed_at is not None
            and (retry or time.monotonic() - entry.failed_at > RETRY_FAILED_LOAD_S)
        )
        if entry is None or stale:
            entry = _Load(concurrent.futures.Future(), time.monotonic())
            _loads[key] = entry
            # Another model, device or length replaces the oldest finished one past a few.
            finished = [k for k, e in _loads.items() if k != key and e.future.done()]
            for old in finished[: max(0, len(_loads) - MAX_MODELS)]:
                del _loads[old]
            threading.Thread(
                target=_run_load, args=(settings, entry.future), name="a0_reranker-load", daemon=True
            ).start()
            # A load cannot be interrupted; uninstall drops what is loaded (and what a load
            # under way will have loaded) so the models can be freed.
            lifecycle.register_stopper(forget)
        return entry.future


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def load_model(settings: Settings, timeout: float | None = None) -> Loaded:
    """The loaded model (blocking: never from a thread that runs an event loop).
    Raises ``NotConfigured`` when it cannot be loaded, ``DeadlineExceeded`` after ``timeout``."""
    if _on_event_loop():
        raise RuntimeError(words.LOCAL_BLOCKS)
    try:
        return loading(settings).result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise DeadlineExceeded(_still_loading(settings)) from None


async def model(settings: Settings, timeout: float | None = None) -> Loaded:
    """The loaded model, awaited without blocking the loop. Giving up (timeout,
    cancellation) leaves the load running for the next call."""
    load = loading(settings)
    if load.done():
        return load.result()  # the usual case, without a trip through the loop
    future = asyncio.wrap_future(load)
    future.add_done_callback(_consume)  # a failure nobody awaits any more is not "never retrieved"
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except TimeoutError:
        raise DeadlineExceeded(_still_loading(settings)) from None


def _consume(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()


def _still_loading(settings: Settings) -> str:
    with _lock:
        entry = _loads.get(_key(settings))
    since = words.loading_for(time.monotonic() - entry.started) if entry else ""
    return words.local_loading(settings.local_model, since)


def forget(settings: Settings | None = None) -> None:
    """Drop loaded models (all, or this one's): tests, and freeing memory."""
    with _lock:
        if settings is None:
            dropped = list(_loads.values())
            _loads.clear()
        else:
            dropped = [entry for entry in [_loads.pop(_key(settings), None)] if entry is not None]
    for entry in dropped:  # their worker threads end once a call under way returns
        if entry.future.done() and not entry.future.cancelled() and entry.future.exception() is None:
            entry.future.result().worker.shutdown(wait=False, cancel_futures=True)


class _GivenUp(Exception):
    """The caller stopped waiting: the rest of its pairs are not scored (nobody reads this)."""


def _predict(
    loaded: Loaded, settings: Settings, query: str, documents: Sequence[str], given_up: threading.Event | None = None
) -> list[float]:
    """The model's scores in input order, one forward pass of ``local_batch_size`` pairs at
    a time.

    Shortest memories first: a batch is padded to its longest pair, so one long memory (a
    knowledge file's chunk, 512 tokens) made every pair of its batch cost as much. A
    forward pass cannot be stopped, but between two of them a call whose caller gave up
    (``given_up``) stops: otherwise the rest of its pool held the model, and every call
    queued behind it ran out of time in turn. Both measured with the real L-12 through the
    recall on the relevance bench (docs/relevance.md)."""
    pairs = [(query, d[: settings.max_doc_chars]) for d in documents]
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))
    size = settings.local_batch_size
    out = [0.0] * len(pairs)
    with loaded.lock:
        for start in range(0, len(order), size):
            if given_up is not None and given_up.is_set():
                raise _GivenUp()
            batch = order[start : start + size]
            scores = loaded.model.predict(
                [pairs[i] for i in batch], batch_size=size, show_progress_bar=False, convert_to_numpy=True
            )
            # One score per pair; a multi-label head gives a row per pair, whose last label is "relevant".
            for i, value in zip(batch, scores.reshape(len(batch), -1)[:, -1]):
                out[i] = float(value)
    return out


async def score(settings: Settings, query: str, documents: Sequence[str], timeout: float | None = None) -> list[float]:
    """Scores in input order, computed in a worker thread. Raises ``NotConfigured`` or ``DeadlineExceeded``."""
    if not documents:
        return []
    started = time.monotonic()
    loaded = await model(settings, timeout)
    remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
    given_up = threading.Event()
    call = loaded.worker.submit(_predict, loaded, settings, query, list(documents), given_up)
    call.add_done_callback(_consume_call)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(call), remaining)
    except TimeoutError:
        raise DeadlineExceeded(words.local_too_slow(len(documents))) from None
    finally:
        given_up.set()  # answered, timed out or cancelled: a pass under way stops at its next batch


def _consume_call(call: concurrent.futures.Future) -> None:
    if not call.cancelled():
        call.exception()  # a call given up on ends in _GivenUp, which nobody awaits any more


async def probe_into(settings: Settings, report: ProbeReport) -> None:
    """Fill the probe report for the local reranker (loading the model if needed)."""
    report.model = settings.local_model
    started = time.monotonic()
    try:
        loaded = await model(settings, settings.timeout)
        rel, near, irr = await score(settings, PROBE_QUERY, list(PROBE_DOCS), settings.timeout)
    except NotConfigured as exc:
        report.verdict, report.reason = "not_configured", str(exc)
        return
    except DeadlineExceeded as exc:
        report.verdict, report.reason = "error", f"{exc}{words.TRY_AGAIN_SOON}"
        return
    except Exception as exc:
        report.verdict, report.reason = "error", words.local_failed(type(exc).__name__, str(exc)[:200])
        return
    grade = grade_probe(rel, near, irr)
    report.ok = grade.mark != "fail"
    report.verdict = {"pass": "ok", "weak": "weak", "fail": "misranks"}[grade.mark]
    report.reason = words.local_probed(settings.local_model, settings.local_device, grade.reason)
    report.notes.append(words.local_ready_in((time.monotonic() - started) * 1000))
    if report.ok:
        report.result = Verdict(None, loaded.scale, rel, irr, quality=grade.mark)


class LocalScorer(InProcess):
    name = "local"
    api = "local"
    mode = vocabulary.LOCAL
    caches_scores = False
    needs_warm_up = True  # the model loads once, in a thread, before the first recall

    def verdict_key(self, settings: Settings) -> tuple:
        return _key(settings)

    async def probe(self, settings: Settings, deadline: Deadline, report: ProbeReport, *, fresh: bool = False) -> None:
        if fresh:
            loading(settings, retry=True)  # Test connection tries a failed load again at once
        await probe_into(settings, report)

    async def score(
        self, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline
    ) -> list[float]:
        return await score(settings, query, documents, max(0.0, deadline.remaining()))

    def warm(self, settings: Settings) -> None:
        load_model(settings)

    def query_chars(self, settings: Settings) -> int:
        if runs_on_cpu(settings):
            return min(settings.max_query_chars, CPU_QUERY_CHARS)
        return settings.max_query_chars


LOCAL = LocalScorer()
