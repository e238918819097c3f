"""A circuit breaker per endpoint: after repeated failed calls the endpoint is skipped for a
cool-down, so a dead server costs a recall nothing; then one trial call decides.

Shared by every event loop in the process (chats, background memorisation, API requests),
so the state is guarded by a thread lock rather than anything loop-bound.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass


# What ``allow`` answers: the breaker is closed, or this caller holds the one trial call.
CLOSED = "closed"
TRIAL = "trial"


@dataclass
class _State:
    failures: int = 0
    open_until: float = 0.0
    trial_in_flight: bool = False
    opened: int = 0  # how many times it has opened, for status output


@dataclass(frozen=True)
class Shown:
    """One endpoint's breaker as the status shows it."""

    failures: int
    open_for_s: float  # 0 when closed
    times_opened: int


class CircuitBreaker:
    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._states: dict[str, _State] = {}

    def allow(self, key: str, failures_to_open: int, cooldown: float) -> str | None:
        """May a call go to ``key`` now? While open: no (None). Closed: ``CLOSED``. After the
        cool-down: ``TRIAL`` for exactly one caller, who must settle it (``record_success``,
        ``record_failure``) or hand it back (``release_trial``)."""
        with self._lock:
            state = self._states.get(key)
            if state is None or state.failures < failures_to_open:
                return CLOSED
            if self._clock() < state.open_until or state.trial_in_flight:
                return None
            state.trial_in_flight = True  # half-open: exactly one caller tries
            return TRIAL

    def release_trial(self, key: str) -> None:
        """The trial call ended without a verdict (it was cancelled): it neither closes nor
        re-opens the breaker, but the next caller may try. Without this, one cancelled trial
        kept the endpoint skipped for good."""
        with self._lock:
            state = self._states.get(key)
            if state is not None:
                state.trial_in_flight = False

    def record_success(self, key: str) -> None:
        with self._lock:
            self._states.pop(key, None)

    def record_failure(self, key: str, failures_to_open: int, cooldown: float) -> bool:
        """Count a failed call; returns True when this failure opened (or re-opened) the breaker."""
        with self._lock:
            state = self._states.setdefault(key, _State())
            state.failures += 1
            state.trial_in_flight = False
            if state.failures >= failures_to_open:
                state.open_until = self._clock() + cooldown
                state.opened += 1
                return True
            return False

    def close(self, matches) -> None:
        """Forget every key for which ``matches(key)`` holds: a Save changed what those calls
        are made with, so the cool-down the old settings earned no longer applies."""
        with self._lock:
            for key in [k for k in self._states if matches(k)]:
                del self._states[key]

    def states(self) -> dict[str, Shown]:
        """Each endpoint's state as the status shows it, typed."""
        now = self._clock()
        with self._lock:
            return {
                key: Shown(
                    failures=s.failures, open_for_s=max(0.0, round(s.open_until - now, 1)), times_opened=s.opened
                )
                for key, s in self._states.items()
            }

    def snapshot(self) -> dict[str, dict]:
        """The states as the status API, the CLI and the tests read them (JSON)."""
        return {key: asdict(state) for key, state in self.states().items()}

    def forget(self) -> None:
        with self._lock:
            self._states.clear()


BREAKER = CircuitBreaker()
