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
# The most CPU time (ms) the loop's thread spent between two ticks in the last window: the
# stall without what the scheduler adds on a loaded machine (other processes on its cores).
LOOP_CPU_MS: list[float] = []


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
        last, last_cpu, worst_cpu = time.perf_counter(), time.thread_time(), 0.0
        while running:
            await asyncio.sleep(0)
            now, cpu = time.perf_counter(), time.thread_time()
            worst, worst_cpu = max(worst, now - last), max(worst_cpu, cpu - last_cpu)
            last, last_cpu = now, cpu
        LOOP_CPU_MS[:] = [worst_cpu * 1000]

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
    from helpers.scoring import probing

    docs = documents(200)
    with remote("tei19", max_client_batch_size=32, cheap_scorer=True, latency=0.02) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}

        async def one():
            assert len(await reranker.arerank(QUERY, docs, config=config)) == 200

        probing.forget()
        cold = await worst_gap_ms(one, 1)
        warm = await worst_gap_ms(one, repeats)
    return [
        _row("arerank 200 docs x 500 chars, TEI 32 per request, warm", warm, f"max over {repeats} calls"),
        # Not an aim: once per loop. The first call in a whole process also imports httpcore's
        # async backend and parses default_config.yaml on the loop (see README).
        Row(
            "stall",
            "arerank 200 docs x 500 chars, first call on a fresh loop",
            round(cold, 3),
            None,
            None,
            "",
            None,
            "probe + client build; the first in a process also pays imports",
        ),
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
    return [
        _row(
            f"wrapped recall search, {max(pool)}-candidate pool, TEI 32 per request, warm",
            warm,
            f"max over {repeats} searches",
        )
    ]


# --- big inputs: whatever a feature adds to a recall's stall, against the same recall without it
BIG_AIM_MS = 150.0  # added to the same recall's stall without the feature


def _added_row(name: str, worst: float, baseline: float, note: str = "", baseline_cpu: float | None = None) -> Row:
    if LOOP_CPU_MS:
        note += f"; the loop's thread busy at most {LOOP_CPU_MS[0]:.1f} ms of CPU between ticks"
        note += f" ({baseline_cpu:.1f} ms in the baseline)" if baseline_cpu is not None else ""
    if GC_PAUSES:
        note += f"; longest garbage collection {max(GC_PAUSES):.1f} ms ({len(GC_PAUSES)} in the window)"
    return Row(
        "stall",
        name,
        round(worst, 3),
        round(baseline, 3),
        None,
        f"<= baseline + {BIG_AIM_MS:g} ms",
        worst <= baseline + BIG_AIM_MS,
        note.lstrip("; "),
    )


async def _stall_of(r, recall, repeats: int, remeasure: bool = False, **config) -> tuple[float, float]:
    """(the worst gap, the most loop-thread CPU between two ticks) over ``repeats`` searches.
    ``remeasure``: the reranker's say is measured again before each search, as in the first
    recall with it, so that one with no say (BM25) is asked each time: once its say is known,
    recalls no longer ask it (recall/pipeline.py score)."""
    r.configure(**config)
    calibration = r.host.import_plugin("helpers.scoring.calibration")
    scorer = r.host.import_plugin("helpers.scoring.scorers").BY_API.get(config.get("rerank_api"))
    asked = _count_pools_scored(scorer, calibration) if scorer is not None else None

    async def one():
        if remeasure:
            calibration.forget()
        # A task per search, as the host runs each recall: each gets the recall's own deadline.
        assert await asyncio.create_task(r.wrapped(recall))

    try:
        await one()  # the first search of a configuration: its probe
        r.recall.STATS.forget()
        if asked is not None:
            asked.clear()
        worst = await worst_gap_ms(one, repeats)
    finally:
        if scorer is not None:
            del scorer.score  # the class's own again
    outcomes = {c["outcome"] for c in r.recall.STATS.snapshot(last=repeats)["recent"]}
    expected = "reranked" if scorer is not None and not remeasure else "fused"
    assert outcomes == {expected}, outcomes
    assert asked is None or len(asked) >= repeats, asked  # the feature ran: the reranker read each pool
    return worst, LOOP_CPU_MS[0]


def _count_pools_scored(scorer, calibration) -> list[int]:
    """Counts ``scorer``'s calls about a recall's pool (not the calibration's questions): one
    entry, its documents' number, per call."""
    questions = {text for item in calibration.ITEMS for text in item.candidates}
    score, calls = scorer.score, []

    async def counted(settings, verdict, query, documents, deadline):
        if any(d not in questions for d in documents):
            calls.append(len(documents))
        return await score(settings, verdict, query, documents, deadline)

    scorer.score = counted
    return calls


async def big_memory_rows(r, repeats: int = 3) -> list[Row]:
    """60 memories of 250 KB each in the pool: BM25 and the utility judge read each one."""
    from agent import Agent
    from bench.recall_rig import sample_recall

    from tests.host.judges import Judge

    # A judge that answers the probe and the calibration as a capable model does: it has its say.
    r.agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, Judge(lambda memories: "[1, 0]"))
    recall = sample_recall(3)
    fused, fused_cpu = await _stall_of(r, recall, repeats, rerank_api="auto", rerank_candidates=60)
    rows = []
    # BM25 earns no say: each search is one that asks it all the same (remeasure).
    for api, what, remeasure in (("lexical", "BM25", True), ("utility", "the judge's prompt", False)):
        worst, _ = await _stall_of(r, recall, repeats, remeasure, rerank_api=api, rerank_candidates=60)
        rows.append(
            _added_row(
                f"recall, 60 memories x 250 KB, rerank_api {api} ({what})",
                worst,
                fused,
                f"baseline: the same recall with fusion alone; max over {repeats} searches",
                fused_cpu,
            )
        )
    return rows


async def mmr_rows(r, repeats: int = 3) -> list[Row]:
    """MMR diversity over a deep pool: rerank_candidates 250 over 10,000 memories."""
    from bench.recall_rig import sample_recall

    recall = sample_recall(3)
    lexical = dict(rerank_api="lexical", rerank_candidates=250, remeasure=True)
    plain, plain_cpu = await _stall_of(r, recall, repeats, **lexical)
    diverse, _ = await _stall_of(r, recall, repeats, rerank_mmr_lambda=0.7, **lexical)
    pool = r.recall.STATS.snapshot(last=1)["recent"][-1]["pool"]
    return [
        _added_row(
            f"recall, {pool}-candidate pool over 10,000 memories, rerank_mmr_lambda 0.7",
            diverse,
            plain,
            f"baseline: the same recall without MMR; max over {repeats} searches",
            plain_cpu,
        )
    ]


def big_input_rows() -> list[Row]:
    from bench.recall_rig import rig

    with rig(memories=60, chars=250_000) as r:
        rows = r.host.run(big_memory_rows(r))
    with rig(memories=10_000) as r:
        rows += r.host.run(mmr_rows(r))
    return rows


def main() -> list[Row]:
    from bench.recall_rig import rig

    rows = asyncio.run(arerank_rows())
    with rig(memories=600) as r:
        rows += r.host.run(recall_rows(r))
    rows += big_input_rows()
    return report("loop_stall", rows)


if __name__ == "__main__":
    main()
