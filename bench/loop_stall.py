"""The longest the plugin keeps its event loop from running anything else. Agent Zero runs
every chat on one shared loop, so a stall here is a stall in every chat.

A ticker coroutine on the same loop yields (``asyncio.sleep(0)``) as fast as it can and
records the largest gap between two of its turns while the plugin works: that gap is the
longest stretch some other callback held the loop. Two workloads: ``arerank`` of 200
documents x 500 characters against a TEI-like server that takes 32 per request (7 batches
in flight), and a whole wrapped recall search with a 200-candidate pool. Warm: detection
done and the HTTP client built, as in a running host; the first, cold call is reported too.

    python -m bench.loop_stall
"""

from __future__ import annotations

import asyncio
import gc
import time

from bench.client_overhead import QUERY, documents
from bench.common import Row, report
from bench.remote_server import remote

AIM_MS = 5.0


GC_PAUSES: list[float] = []  # the garbage collections (ms) during the last worst_gap_ms window


def _gc_timer():
    """A gc callback recording how long each collection took, into GC_PAUSES."""
    started = [0.0]

    def callback(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            GC_PAUSES.append((time.perf_counter() - started[0]) * 1000)

    return callback


async def worst_gap_ms(work, repeats: int) -> float:
    """The largest gap between ticks while ``work()`` runs ``repeats`` times in a row. The
    process's garbage collections in the window are recorded in GC_PAUSES: a full collection
    stops every thread, whoever allocated, so a row says how long the longest one took."""
    worst = 0.0
    running = True

    async def ticker():
        nonlocal worst
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    GC_PAUSES.clear()
    timer = _gc_timer()
    gc.callbacks.append(timer)
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        for _ in range(repeats):
            await work()
    finally:
        running = False
        await task
        gc.callbacks.remove(timer)
    return worst * 1000


def _row(name: str, worst: float, note: str = "") -> Row:
    """A stall row; its note names the longest garbage collection of the window, which
    stalls the loop as surely as the plugin's own work does, whatever allocated."""
    if GC_PAUSES:
        note += f"; longest garbage collection {max(GC_PAUSES):.1f} ms ({len(GC_PAUSES)} in the window)"
    return Row("stall", name, round(worst, 3), None, None, f"< {AIM_MS:g} ms", worst < AIM_MS, note)


async def arerank_rows(repeats: int = 20) -> list[Row]:
    from helpers import reranker
    from helpers.scoring import probe_cache

    docs = documents(200)
    with remote("tei19", max_client_batch_size=32, cheap_scorer=True, latency=0.02) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}

        async def one():
            assert len(await reranker.arerank(QUERY, docs, config=config)) == 200

        probe_cache.forget()
        cold = await worst_gap_ms(one, 1)
        warm = await worst_gap_ms(one, repeats)
    return [
        _row("arerank 200 docs x 500 chars, TEI 32 per request, warm", warm, f"max over {repeats} calls"),
        # Not an aim: once per loop. The first call in a whole process also imports httpcore's
        # async backend and parses default_config.yaml on the loop (see README).
        Row("stall", "arerank 200 docs x 500 chars, first call on a fresh loop", round(cold, 3), None, None,
            "", None, "probe + client build; the first in a process also pays imports"),
    ]


async def recall_rows(r, repeats: int = 10) -> list[Row]:
    from bench.recall_rig import sample_recall

    recall = sample_recall(3)
    with remote("tei19", max_client_batch_size=32, cheap_scorer=True, latency=0.02) as srv:
        r.configure(rerank_endpoint=srv.url, rerank_api="rerank", rerank_candidates=200, rerank_timeout=10.0)
        pool = []

        async def one():
            docs = await r.wrapped(recall)
            assert docs
            pool.append(r.recall.STATS.snapshot(last=1)["recent"][-1]["pool"])

        await one()  # detection and the client: once per loop
        warm = await worst_gap_ms(one, repeats)
    return [_row(f"wrapped recall search, {max(pool)}-candidate pool, TEI 32 per request, warm", warm, f"max over {repeats} searches")]


def main() -> list[Row]:
    from bench.recall_rig import rig

    rows = asyncio.run(arerank_rows())
    with rig(memories=600) as r:
        rows += r.host.run(recall_rows(r))
    return report("loop_stall", rows)


if __name__ == "__main__":
    main()
