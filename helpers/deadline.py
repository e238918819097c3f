"""A deadline: the time left for one piece of work, as a point on the monotonic clock.

The bottom floor: a recall's one deadline (recall/deadlines.py), a reranker call's share of
it, a probe's and the calibration's all are one of these, passed down from where the time
was decided; nothing below re-derives it from a setting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    """When the time for a whole call runs out, retries and batches included."""

    expires_at: float

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.expires_at - time.monotonic()


# How far past its deadline an outer guard waits for a call that should have ended at it:
# the call's own DeadlineExceeded comes first (and counts toward the breaker); the guard only
# catches a call stuck past it (a scorer that cannot be interrupted, a parse that ran long).
GRACE_S = 0.25

# The most one recall takes, whatever rerank_timeout says: the host gives its recall 30 s
# and needs the rest for its own LLM calls and searches (recall/deadlines.py counts it).
RECALL_SECONDS = 15.0
