"""Fault knobs: what to do to the next request before (and after) normal handling.

One `Faults` object per server. The HTTP layer asks it for a `Plan` per request;
everything that changes state (the status queue, counters, the seeded RNG) happens
under one lock inside `plan()`, so concurrent requests each consume their own fault.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter, deque
from dataclasses import dataclass

__all__ = ["Faults", "Plan", "BODY_FAULTS", "RANDOM_FAULTS", "corrupt"]

BODY_FAULTS = (
    "html",
    "partial",
    "malformed",
    "dup_index",
    "missing_index",
    "out_of_range",
    "nan",
    "string_score",
    "error200",
    "empty",
    "wrong_count",
)
# What `fail_rate` draws from; "garbage" is the "malformed" body.
RANDOM_FAULTS = ("delay", "429", "503", "500", "garbage", "reset")

_HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>"
    b"<body><h1>Network login required</h1><p>Please sign in to continue.</p></body></html>\n"
)
_NOT_JSON = b"rerank ok: index=0 score=0.93; index=1 score=0.12\n"
# vLLM <= 0.14 answers exactly this, with HTTP 200, when the model cannot score.
_ERROR_200 = {
    "error": {
        "message": "The model does not support Rerank (Score) API",
        "type": "BadRequestError",
        "code": 400,
    }
}


@dataclass
class Plan:
    """The faults chosen for one request (empty plan = answer normally)."""

    delay: float = 0.0
    reset: bool = False
    status: int | None = None
    retry_after: object = None
    body: str | None = None
    echo: str | None = None  # one of echo.ECHO_SHAPES: the answer echoes the Authorization header


class Faults:
    """Mutable, thread-safe fault configuration plus counters.

    Attributes may be assigned directly (`srv.faults.delay = 1.0`); `configure()`
    replaces the whole configuration at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self.recover()

    # -- configuration -------------------------------------------------------------

    def configure(
        self,
        delay: float = 0.0,
        statuses=(),
        retry_after=None,
        body: str | None = None,
        reset: bool | int = False,
        fault_paths=None,
        *,
        delay_jitter: float = 0.0,
        fail_rate: float = 0.0,
        seed: int = 0,
        fail_delay: float = 0.2,
        echo: str | None = None,
    ) -> None:
        """Replace every knob (anything not given goes back to its default).

        delay / delay_jitter: seconds slept before answering (jitter is uniform, seeded).
        statuses: statuses answered in turn, each with the server's own error body.
        retry_after: adds `Retry-After` (seconds, or any string) to 429/503 answers.
        body: one of BODY_FAULTS, applied to every 2xx answer.
        reset: True = every request, an int = that many requests; the TCP connection
            is closed with RST and no response.
        fault_paths: only requests to these exact paths are faulted (None = all).
        fail_rate / seed / fail_delay: a seeded random mix of RANDOM_FAULTS.
        echo: one of echo.ECHO_SHAPES; every answer echoes the request's Authorization header.
        """
        if body is not None and body not in BODY_FAULTS:
            raise ValueError(f"unknown body fault {body!r}; expected one of {BODY_FAULTS}")
        from .echo import ECHO_SHAPES  # here: echo.py reads this module's payload helpers

        if echo is not None and echo not in ECHO_SHAPES:
            raise ValueError(f"unknown echo shape {echo!r}; expected one of {ECHO_SHAPES}")
        if not 0.0 <= fail_rate <= 1.0:
            raise ValueError("fail_rate must be within [0, 1]")
        with self._lock:
            self.delay = float(delay)
            self.delay_jitter = float(delay_jitter)
            self._statuses = deque(int(s) for s in statuses)
            self.retry_after = retry_after
            self.body = body
            self.reset = reset
            self.fault_paths = None if fault_paths is None else frozenset(fault_paths)
            self.fail_rate = float(fail_rate)
            self.fail_delay = float(fail_delay)
            self.seed = seed
            self._rng = random.Random(seed)
            self.echo = echo

    def recover(self) -> None:
        """Clear every fault; the server answers normally again."""
        self.configure()

    @property
    def statuses(self) -> list[int]:
        with self._lock:
            return list(self._statuses)

    @statuses.setter
    def statuses(self, values) -> None:
        with self._lock:
            self._statuses = deque(int(s) for s in values)

    # -- per request ---------------------------------------------------------------

    def plan(self, path: str) -> Plan:
        """Decide, and count, the faults for one request to `path`."""
        with self._lock:
            self._counts["requests"] += 1
            if self.fault_paths is not None and path not in self.fault_paths:
                return Plan()
            plan = Plan(retry_after=self.retry_after, echo=self.echo)
            plan.delay = self.delay
            if self.delay_jitter:
                plan.delay += self._rng.uniform(0.0, self.delay_jitter)
            if self.reset is True or (type(self.reset) is int and self.reset > 0):
                plan.reset = True
                if self.reset is not True:
                    self.reset -= 1
            elif self._statuses:
                plan.status = self._statuses.popleft()
            elif self.fail_rate and self._rng.random() < self.fail_rate:
                self._draw_random(plan)
            if plan.body is None and plan.status is None and not plan.reset:
                plan.body = self.body
            self._count(plan)
            return plan

    def _draw_random(self, plan: Plan) -> None:
        self._counts["random"] += 1
        kind = self._rng.choice(RANDOM_FAULTS)
        if kind == "delay":
            plan.delay += self.fail_delay
        elif kind == "reset":
            plan.reset = True
        elif kind == "garbage":
            plan.body = "malformed"
        else:
            plan.status = int(kind)

    def _count(self, plan: Plan) -> None:
        kinds = []
        if plan.delay > 0:
            kinds.append("delay")
        if plan.reset:
            kinds.append("reset")
        if plan.status is not None:
            kinds.append(f"status_{plan.status}")
        if plan.body is not None:
            kinds.append(f"body_{plan.body}")
        for kind in kinds:
            self._counts[kind] += 1
        if kinds:
            self._counts["faults"] += 1

    # -- counters ------------------------------------------------------------------

    def stats(self) -> dict[str, int]:
        """`requests`, `faults` (requests that got any fault) and one key per type:
        `delay`, `reset`, `status_<code>`, `body_<kind>`, `random`."""
        with self._lock:
            counts = dict(self._counts)
        counts.setdefault("requests", 0)
        counts.setdefault("faults", 0)
        return counts

    def reset_stats(self) -> None:
        with self._lock:
            self._counts.clear()


# -- body corruption ---------------------------------------------------------------


def _items(payload):
    """The result list inside any rerank/score payload shape, or None."""
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in ("results", "data"):
            if isinstance(payload.get(key), list):
                return payload[key]
    return None


def _score_key(item: dict) -> str | None:
    for key in ("relevance_score", "score"):
        if key in item:
            return key
    return None


def corrupt(kind: str, payload, n_inputs: int | None) -> tuple[bytes, str]:
    """Apply body fault `kind` to a successful JSON `payload`.

    Returns (body, content type). Structural faults edit a copy of the result list
    found in any of the servers' shapes; a payload without one is left intact.
    """
    if kind == "html":
        return _HTML_PAGE, "text/html; charset=utf-8"
    if kind == "malformed":
        return _NOT_JSON, "application/json"
    if kind == "empty":
        return b"", "application/json"
    if kind == "error200":
        return json.dumps(_ERROR_200).encode(), "application/json"
    if kind == "partial":
        text = json.dumps(payload).encode()
        return text[: max(1, len(text) // 2)], "application/json"

    payload = json.loads(json.dumps(payload))  # deep copy; the handler keeps its own
    items = _items(payload)
    if items:
        _edit_items(kind, items, n_inputs)
    # allow_nan writes a bare NaN token, as Python-based servers would.
    return json.dumps(payload, allow_nan=True).encode(), "application/json"


def _edit_items(kind: str, items: list, n_inputs: int | None) -> None:
    first, last = items[0], items[-1]
    if kind == "dup_index":
        if len(items) > 1:
            last["index"] = first["index"]
        else:
            items.append(dict(first))
    elif kind == "missing_index":
        items.pop()
    elif kind == "out_of_range":
        # The first invalid index: catches off-by-one checks.
        last["index"] = n_inputs if n_inputs is not None else len(items)
    elif kind == "nan":
        key = _score_key(first)
        if key:
            first[key] = float("nan")
    elif kind == "string_score":
        key = _score_key(first)
        if key:
            first[key] = "0.9"
    elif kind == "wrong_count":
        items.append(dict(last))
