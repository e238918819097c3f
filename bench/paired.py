"""Two medians taken call by call in alternation: ours, theirs, ours, theirs, ... so that
whatever else the machine is doing falls on both sides alike. A block of ours followed by a
block of theirs lets a burst of load elsewhere land on one side only."""

from __future__ import annotations

import inspect
import statistics
import time
from typing import Awaitable, Callable, Union

Call = Callable[[], Union[Awaitable, object]]


async def _timed(fn: Call) -> float:
    started = time.perf_counter()
    outcome = fn()
    if inspect.isawaitable(outcome):
        await outcome
    return (time.perf_counter() - started) * 1000


async def paired_ms(ours: Call, theirs: Call, repeats: int, warmup: int = 5) -> tuple[float, float]:
    """(median ms of ``ours``, median ms of ``theirs``); either may be sync or async."""
    for _ in range(warmup):
        await _timed(ours)
        await _timed(theirs)
    mine, other = [], []
    for i in range(repeats):
        first, second = (ours, theirs) if i % 2 == 0 else (theirs, ours)  # neither always goes first
        a, b = await _timed(first), await _timed(second)
        mine.append(a if first is ours else b)
        other.append(b if first is ours else a)
    return statistics.median(mine), statistics.median(other)
