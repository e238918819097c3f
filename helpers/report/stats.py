"""What the plugin did, for the status view, the status tool and shadow mode's measurement.

Rolling and bounded: the last calls are kept in a fixed-size window, so memory does not
grow however long Agent Zero runs. Thread-safe: searches run on several event loops.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from typing import Any

WINDOW = 200


@dataclass
class CallRecord:
    # reranked: the reranker's order combined with the fused one | fused: the fused order
    # (no reranker configured, or it was unavailable) | shadow: measured, the host's order
    # returned | fallback: the plugin's own steps failed, the host's order returned |
    # empty: nothing matched
    outcome: str
    reason: str = ""
    caller: str = ""
    pool: int = 0
    returned: int = 0
    latency_ms: float = 0.0
    at: float = field(default_factory=time.time)
    impact: dict[str, Any] | None = None  # shadow mode: what reranking would have changed
    unavailable: str = ""  # why a configured reranker was not used (its order left out)


ANSWERED = ("reranked", "fused", "shadow")  # the outcomes a search answered with the plugin's order


@dataclass(frozen=True)
class ErrorNote:
    at: float
    reason: str


@dataclass(frozen=True)
class Latency:
    p50: float | None = None
    p95: float | None = None
    samples: int = 0


@dataclass(frozen=True)
class ShadowSummary:
    """Shadow mode's measurement: what reranking would have changed."""

    searches: int
    top_changed: int
    mean_overlap_at_k: float
    promoted_from_below_cut: int
    mean_rank_correlation: float


@dataclass(frozen=True)
class Summary:
    """The counters at one moment (Stats.summary)."""

    totals: dict[str, int] = field(default_factory=dict)
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    unavailable_reasons: dict[str, int] = field(default_factory=dict)
    latency: Latency = Latency()
    last_error: ErrorNote | None = None
    recent: tuple[CallRecord, ...] = ()
    shadow: ShadowSummary | None = None

    def total(self, outcome: str) -> int:
        return self.totals.get(outcome, 0)

    @property
    def latest_answered(self) -> CallRecord | None:
        """The latest of the recent searches the plugin's order answered."""
        return next((c for c in reversed(self.recent) if c.outcome in ANSWERED), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "totals": dict(self.totals),
            "fallback_reasons": dict(self.fallback_reasons),
            "unavailable_reasons": dict(self.unavailable_reasons),
            "latency_ms": asdict(self.latency),
            "last_error": asdict(self.last_error) if self.last_error else None,
            "recent": [asdict(c) for c in self.recent],
            "shadow": asdict(self.shadow) if self.shadow else None,
        }


def percentile(values: list[float], q: float) -> float | None:
    """The value at ``q`` (0..1) of ``values``, rounded to 0.1; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


class Stats:
    def __init__(self, window: int = WINDOW):
        self._lock = threading.Lock()
        self._calls: deque[CallRecord] = deque(maxlen=window)
        self._totals: Counter[str] = Counter()
        self._fallback_reasons: Counter[str] = Counter()
        self._unavailable_reasons: Counter[str] = Counter()
        self._last_error: ErrorNote | None = None

    def record(self, record: CallRecord) -> None:
        with self._lock:
            self._calls.append(record)
            self._totals[record.outcome] += 1
            if record.outcome == "fallback":
                self._count(self._fallback_reasons, record.reason)
                self._last_error = ErrorNote(record.at, record.reason[:300])
            if record.unavailable:
                self._totals["reranker_unavailable"] += 1
                self._count(self._unavailable_reasons, record.unavailable)
                self._last_error = ErrorNote(record.at, "reranker unavailable: " + record.unavailable[:300])

    @staticmethod
    def _count(reasons: Counter, reason: str) -> None:
        reasons[reason.split(":", 1)[0][:60]] += 1
        if len(reasons) > 50:  # bounded, even with odd error texts
            kept = reasons.most_common(25)
            reasons.clear()
            reasons.update(dict(kept))

    def summary(self, last: int = 10) -> Summary:
        """What happened so far, typed: what the status text reads (vocabulary.status_text)."""
        with self._lock:
            calls = list(self._calls)
            totals = dict(self._totals)
            reasons = dict(self._fallback_reasons)
            unavailable = dict(self._unavailable_reasons)
            last_error = self._last_error
        timed = [c.latency_ms for c in calls if c.outcome in ANSWERED]
        impacts = [c.impact for c in calls if c.impact]
        shadow = None
        if impacts:
            n = len(impacts)
            shadow = ShadowSummary(
                searches=n,
                top_changed=sum(1 for i in impacts if i["top_changed"]),
                mean_overlap_at_k=round(sum(i["overlap_at_k"] for i in impacts) / n, 3),
                promoted_from_below_cut=sum(i["from_below_cut"] for i in impacts),
                mean_rank_correlation=round(sum(i["rank_correlation"] for i in impacts) / n, 3),
            )
        return Summary(
            totals=totals,
            fallback_reasons=reasons,
            unavailable_reasons=unavailable,
            latency=Latency(percentile(timed, 0.5), percentile(timed, 0.95), len(timed)),
            last_error=last_error,
            recent=tuple(calls[-last:]),
            shadow=shadow,
        )

    def snapshot(self, last: int = 10) -> dict[str, Any]:
        """The summary as the status API, the CLI and the tests read it (JSON)."""
        return self.summary(last).as_dict()

    def forget(self) -> None:
        with self._lock:
            self._calls.clear()
            self._totals.clear()
            self._fallback_reasons.clear()
            self._unavailable_reasons.clear()
            self._last_error = None


STATS = Stats()
