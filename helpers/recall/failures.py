"""A failure, said once: the reason the stats and the log keep (the exception's kind and
message) and the words the chat line shows (helpers/vocabulary/), from one call.

The ladder of fallbacks, one rung per failure here:

    reranker_unavailable  the reranker failed: the fused order stands (pipeline.score)
    plugin_failed         the plugin's own steps failed: the host's own result stands
                          (wrapper.host_answer_instead)
    measurement_failed    a shadow measurement's steps failed: the agent had the host's
                          result already; counted only (wrapper._measure)

Every rung is recorded through outcome.keep, as every search is. Below the ladder,
bookkeeping that fails (pipeline.record) is logged and costs the recall nothing."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from .. import vocabulary
from ..errors import RerankError
from ..settings import Settings, SettingsError


@dataclass(frozen=True)
class Failure:
    reason: str  # for the stats and the log
    words: str  # for the chat


def reranker_unavailable(exc: BaseException, settings: Settings, scorer: Any) -> Failure:
    return Failure(reason(exc), vocabulary.reranker_unavailable(exc, settings, scorer))


def plugin_failed(exc: BaseException) -> Failure:
    return Failure(reason(exc), vocabulary.host_order_kept(exc))


def measurement_failed(exc: BaseException) -> Failure:
    """A shadow measurement whose own steps failed: counted apart from a recall's fallback."""
    return Failure("shadow measurement: " + reason(exc), vocabulary.host_order_kept(exc))


def reason(exc: BaseException) -> str:
    if isinstance(exc, SettingsError):
        return vocabulary.bad_setting_reason(exc)
    if isinstance(exc, TimeoutError):
        return vocabulary.TIMEOUT_REASON
    return vocabulary.failed_reason(type(exc).__name__, _said(exc), isinstance(exc, RerankError))


def _said(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose message cannot be written (its argument's repr raises)
        return ""
