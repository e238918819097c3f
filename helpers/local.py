"""``rerank_api: local``: an in-process cross-encoder through sentence-transformers.

Optional: sentence-transformers ships inside Agent Zero, but not with this plugin. Without
it, or without the model, the probe report says so and recall keeps the host's order.
The model is loaded once per (model, device, max length), always off the event loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Sequence

from .errors import NotConfigured
from .settings import Settings

INSTALL_HINT = "pip install sentence-transformers (it is already inside Agent Zero)"

_models: dict[tuple, Any] = {}
_failures: dict[tuple, str] = {}
_lock = threading.Lock()


def _key(settings: Settings) -> tuple:
    return (settings.local_model, settings.local_device, settings.local_max_length)


def _device(name: str) -> str | None:
    return None if name == "auto" else name  # None lets sentence-transformers pick


def load_model(settings: Settings) -> Any:
    """The loaded CrossEncoder (blocking: call from a thread). Raises ``NotConfigured``."""
    key = _key(settings)
    with _lock:
        if key in _models:
            return _models[key]
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise NotConfigured(f"the local reranker needs sentence-transformers: {INSTALL_HINT}") from None
        try:
            model = CrossEncoder(settings.local_model, device=_device(settings.local_device), max_length=settings.local_max_length)
        except Exception as exc:
            raise NotConfigured(f"cannot load the local model {settings.local_model!r}: {type(exc).__name__}: {str(exc)[:200]}") from None
        _models[key] = model
        return model


def _predict(settings: Settings, query: str, documents: Sequence[str]) -> list[float]:
    model = load_model(settings)
    pairs = [(query, d[: settings.max_doc_chars]) for d in documents]
    scores = model.predict(pairs, batch_size=settings.local_batch_size, show_progress_bar=False, convert_to_numpy=True)
    return [float(s) for s in scores.reshape(len(pairs), -1)[:, -1]]


async def score(settings: Settings, query: str, documents: Sequence[str]) -> list[float]:
    if not documents:
        return []
    return await asyncio.to_thread(_predict, settings, query, documents)


def warm_in_background(settings: Settings) -> threading.Thread:
    """Load (and run once) the model in a daemon thread so the first recall does not wait."""

    def warm() -> None:
        try:
            _predict(settings, "warm-up", ["warm-up"])
        except Exception as exc:
            with _lock:
                _failures[_key(settings)] = str(exc)

    thread = threading.Thread(target=warm, name="a0_reranker-warm", daemon=True)
    thread.start()
    return thread


async def probe_into(settings: Settings, report: Any) -> None:
    """Fill a ``detect.ProbeReport`` for the local reranker."""
    from . import detect

    started = time.monotonic()
    try:
        rel, near, irr = await score(settings, detect.PROBE_QUERY, list(detect.PROBE_DOCS))
    except NotConfigured as exc:
        report.verdict, report.reason = "not_configured", str(exc)
        return
    except Exception as exc:
        report.verdict, report.reason = "error", f"the local model failed: {type(exc).__name__}: {str(exc)[:200]}"
        return
    judgement = detect.judge(rel, near, irr)
    report.ok = judgement.verdict != "fail"
    report.verdict = {"pass": "ok", "weak": "weak", "fail": "misranks"}[judgement.verdict]
    report.reason = f"local cross-encoder {settings.local_model} on {settings.local_device}: {judgement.reason}"
    report.notes.append(f"loaded and scored in {(time.monotonic() - started) * 1000:.0f} ms")
    if report.ok:
        report.result = detect.Verdict(None, judgement.scale, rel, irr, quality=judgement.verdict)
