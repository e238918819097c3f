"""Two medians taken call by call in alternation: ours, theirs, ours, theirs, ... so that
whatever else the machine is doing falls on both sides alike. A block of ours followed by a
block of theirs lets a burst of load elsewhere land on one side only."""

from __future__ import annotations

import inspect
import statistics
import time
from typing import Awaitable, Callable, Union

Call = Callable[[], Union[Awaitable, object]]


async def _run(fn: Call | None) -> None:
    outcome = fn() if fn is not None else None
    if inspect.isawaitable(outcome):
        await outcome


async def _timed(fn: Call, before: Call | None = None) -> float:
    await _run(before)  # untimed
    started = time.perf_counter()
    await _run(fn)
    return (time.perf_counter() - started) * 1000


async def paired_ms(
    ours: Call,
    theirs: Call,
    repeats: int,
    warmup: int = 5,
    before_ours: Call | None = None,
    before_theirs: Call | None = None,
) -> tuple[float, float]:
    """(median ms of ``ours``, median ms of ``theirs``); either may be sync or async.
    ``before_ours`` / ``before_theirs``, when given, run untimed before each call of that side
    (switching settings, waiting for work a call left behind)."""
    mine: list[float] = []
    other: list[float] = []
    sides = ((ours, before_ours, mine), (theirs, before_theirs, other))
    for _ in range(warmup):
        for fn, before, _out in sides:
            await _timed(fn, before)
    for i in range(repeats):
        for fn, before, out in sides if i % 2 == 0 else sides[::-1]:  # neither always goes first
            out.append(await _timed(fn, before))
    return statistics.median(mine), statistics.median(other)
