"""A failure, said once: the reason the stats and the log keep (the exception's kind and
message) and the words the chat line shows (recall_line.py's vocabulary), from one call.

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

from ..errors import RerankError
from ..settings import Settings, SettingsError
from . import recall_line


@dataclass(frozen=True)
class Failure:
    reason: str  # for the stats and the log
    words: str  # for the chat


def reranker_unavailable(exc: BaseException, settings: Settings) -> Failure:
    return Failure(reason(exc), recall_line.unavailable_words(exc, settings))


def no_opinion_words(settings: Settings) -> str:
    """A reranker that answered but scored every memory alike: the utility judge's "[]"."""
    if settings.api == "utility":
        return "Agent Zero's utility model found none of the memories useful, so the fused order stands"
    return "it scored every memory alike, so the fused order stands"


def plugin_failed(exc: BaseException) -> Failure:
    return Failure(reason(exc), recall_line.fallback_words(exc))


def measurement_failed(exc: BaseException) -> Failure:
    """A shadow measurement whose own steps failed: counted apart from a recall's fallback."""
    return Failure("shadow measurement: " + reason(exc), recall_line.fallback_words(exc))


def reason(exc: BaseException) -> str:
    if isinstance(exc, SettingsError):
        return f"bad setting: {exc}"
    if isinstance(exc, TimeoutError):
        return "timeout: no answer within rerank_timeout or the recall's deadline"
    kind = type(exc).__name__
    return f"{kind}: {exc}" if isinstance(exc, RerankError) else f"unexpected {kind}: {str(exc)[:200]}"
