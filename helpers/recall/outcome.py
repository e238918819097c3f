"""What one search did, worked out once: by the pipeline's last stage (pipeline.record) for
a search that ran, by the wrapper (wrapper.py) for one that fell back to the host. The
counters (report/stats.py) and the chat line (recall_line.py) each read this one value
through ``keep``; none of them works any of it out again. The decision log's line, the
search's orders id by id, is built from the search itself (pipeline.decision_line), and
only where a decision log is configured: ``keep`` asks for it then."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..report import decision_log
from ..report.changes import Changes
from ..report.stats import CallRecord, STATS
from . import recall_line
from .failures import Failure

log = logging.getLogger("a0_reranker")

# What ordered the memories the plugin returns (in shadow mode: would return).
RERANKED = "reranked"  # the reranker's order, combined with the fused one
FUSED = "fused"  # the fused order: no reranker, or it was not used, or it had no say
EMPTY = "empty"  # nothing matched: nothing to order
HOST = "host"  # the plugin's own steps failed: the host's own result stood (a fallback)


@dataclass(frozen=True)
class Outcome:
    caller: str  # recall | memory_load
    area: str  # memories | solutions
    order: str  # RERANKED | FUSED | EMPTY, or HOST
    applied: bool  # the agent got the plugin's order (not in shadow mode, not for a fallback)
    latency_ms: float
    # HOST: why the plugin's own steps failed; otherwise why the reranker was not used, if it was not.
    failure: Failure | None = None
    changes: Changes | None = None  # the plugin's order against the host's result, over the prompt's slots
    no_opinion: str = ""  # the reranker answered but scored every memory alike, in plain words
    not_asked: bool = False  # the reranker has no say in this search (its kept calibration): not asked
    notes: tuple[str, ...] = ()  # what the policies did
    pool_size: int = 0  # how many memories the searches found for the pool (0: nothing to judge)
    returned: int = 0  # how many memories the agent got
    shown: int = 0  # how many of the plugin's order reach (or would reach) the prompt
    dropped_by_floor: int = 0
    words_led: bool = False  # the message's words led the fused order (store_agreement.py)
    reranker_led: bool = False  # the reranker's own order led: it called its best memory relevant
    scorer: Any = None  # the settings' scorer (scoring/scorers/), None: fusion alone; the words follow its declarations
    scored: bool = False  # the reranker answered with scores that tell memories apart
    scorer_ms: float | None = None  # how long it took to answer, when it was asked (not the score cache)
    same_call: bool = False  # scored by the call the recall's other search made (the utility judge)
    post_filter: bool = False  # the host's own post-filter asks its utility model too
    trust: Any = None  # the say it earned on the calibration set (scoring/calibration.Trust)
    route: Any = None  # the detected route of the server that answered

    @property
    def fell_back(self) -> bool:
        return self.order == HOST

    @property
    def reranked(self) -> bool:
        """The reranker answered and had its say (a place in the order it earned)."""
        return self.order == RERANKED

    @property
    def counted_as(self) -> str:
        """The counters' outcome (report/stats.py CallRecord)."""
        if self.fell_back:
            return "fallback"
        return self.order if self.applied else "shadow"

    def call_record(self) -> CallRecord:
        if self.fell_back:
            return CallRecord(self.counted_as, self.failure.reason, self.caller, latency_ms=self.latency_ms)
        return CallRecord(
            self.counted_as,
            "; ".join(self.notes),
            self.caller,
            self.pool_size,
            self.returned,
            self.latency_ms,
            impact=None if self.applied else self.changes.impact(),
            unavailable=self.failure.reason if self.failure is not None else "",
        )


def fallback(caller: str, area: str, failure: Failure, latency_ms: float) -> Outcome:
    """A search whose own steps failed: the host's result stood."""
    return Outcome(caller, area, HOST, False, latency_ms, failure)


def keep(
    done: Outcome, log_item: Any = None, log_path: str = "", log_line: Callable[[], dict[str, Any]] | None = None
) -> None:
    """The one way an outcome is kept: a line of the decision log at ``log_path`` (when one is
    configured and the search found something to judge: ``log_line`` builds it then; a
    fallback has none), the counters, and the search's part of the recall's line in the chat
    (``log_item``; None: nothing to say there). A line that cannot be built costs the
    counters and the chat nothing."""
    if log_path and log_line is not None and done.pool_size:
        try:
            decision_log.record(log_path, log_line())
        except Exception as exc:
            log.info("a0_reranker: could not write a decision log line: %s", type(exc).__name__)
    STATS.record(done.call_record())
    recall_line.say(log_item, done)


def ms_since(started: float) -> float:
    """The latency the counters and the log keep: since ``started`` (time.monotonic), in ms."""
    return round((time.monotonic() - started) * 1000, 1)
