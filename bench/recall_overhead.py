"""What the plugin adds to one recall search: the wrapped search (caller check, settings,
the wider candidate pool, the reranker call, ordering) against the unwrapped search plus one
bare httpx POST of the very body the plugin sent, timed call by call in alternation. Through
the stand-in host with HashEmbeddings, 200 memories, the recall extension's own arguments.
And what a reranker that earned no say costs a search: once that is known, nothing.

    python -m bench.recall_overhead
"""

from __future__ import annotations

import asyncio

import httpx

from bench.common import Row, ratio_row, report
from bench.paired import paired_ms
from bench.recall_rig import rig, sample_recall
from bench.remote_server import remote


async def _capture_body(r, recall) -> tuple[str, dict]:
    """The (url, body) the plugin posts for ``recall``, taken from one wrapped search."""
    sent: list[tuple[str, dict]] = []
    post_json = r.client.post_json

    async def spy(url, body, settings, deadline, **rest):
        sent.append((url, body))
        return await post_json(url, body, settings, deadline, **rest)

    r.client.post_json = spy
    try:
        await r.wrapped(recall)
    finally:
        r.client.post_json = post_json
    rerank = [(url, body) for url, body in sent if url.endswith("/rerank") and len(body.get("texts", ())) > 3]
    assert len(rerank) == 1, "expected one rerank request per search (batch limit above the pool)"
    return rerank[0]


async def _one(r, srv, repeats: int, label: str, note: str = "", **config) -> Row:
    recall = sample_recall(1)
    r.configure(rerank_endpoint=srv.url, rerank_api="rerank", **config)
    await r.wrapped(recall)  # detection is a one-time cost
    url, body = await _capture_body(r, recall)
    async with httpx.AsyncClient() as bare:

        async def baseline():
            await r.unwrapped(recall)
            (await bare.post(url, json=body)).json()

        async def ours():
            assert await r.wrapped(recall)

        value, base = await paired_ms(ours, baseline, repeats)
    n = len(body["texts"])
    return ratio_row(
        "recall",
        f"wrapped recall search vs unwrapped + bare POST ({n}-doc pool), {label}",
        value,
        base,
        "<= 1.2x",
        1.2,
        note,
    )


async def _shadow(r, srv, repeats: int) -> Row:
    """Shadow mode: the recall returns the host's own result and measures afterwards. Timed
    call by call in alternation with the unwrapped search, each after the measurements of the
    one before have finished, so the row is the recall path's own cost."""
    shadow = r.host.import_plugin("helpers.recall.shadow")
    recall = sample_recall(1)
    r.configure(rerank_endpoint=srv.url, rerank_api="rerank", rerank_apply=False)
    await r.wrapped(recall)  # detection, once
    await shadow.drained()
    ours, theirs = await paired_ms(
        lambda: r.wrapped(recall),
        lambda: r.unwrapped(recall),
        repeats,
        before_ours=shadow.drained,
        before_theirs=shadow.drained,
    )
    await shadow.drained()
    return ratio_row(
        "recall",
        "shadow-mode recall search vs the unwrapped search, instant server",
        ours,
        theirs,
        "<= 1.05x",
        1.05,
        "the host's result at once; the plugin's searches and the reranker run afterwards",
    )


async def _no_say(r, repeats: int) -> list[Row]:
    """A reranker that earned no say (word overlap, blind to the calibration set; 300 ms a
    call, like a cross-encoder server on a CPU): the search that meets it asks it and has it
    measured; once its say is known to be none, a search costs what fusion alone does
    (recall/pipeline.py score). Medians of ``repeats`` later searches of each, the two
    settings in alternation (reset_state, which a change of settings in the rig calls, would
    forget the measured say: they are switched as a save switches them)."""
    import time

    calibration = r.host.import_plugin("helpers.scoring.calibration")
    settings_cache = r.host.import_plugin("helpers.settings_cache")
    recall = sample_recall(1)

    async def timed() -> float:
        started = time.perf_counter()
        assert await r.wrapped(recall)
        return (time.perf_counter() - started) * 1000

    with remote("tei19", max_client_batch_size=1000, word_overlap=True, latency=0.3) as srv:
        r.configure(rerank_endpoint=srv.url, rerank_api="rerank")
        first = await timed()
        waited = time.monotonic() + 60
        while not calibration._known and time.monotonic() < waited:
            await asyncio.sleep(0.05)
        say = next(iter(calibration._known.values())).say if calibration._known else "unmeasured"
        assert say == "none", say
        # In alternation with fusion alone: the settings switched between the two (untimed) as
        # a save does (settings_cache.forget, not reset_state), which keeps the measured say;
        # a block of each let a burst of load elsewhere land on one side only (0.87x-1.48x
        # from run to run).
        alone = {"rerank_cache": False}
        asked = {**alone, "rerank_endpoint": srv.url, "rerank_api": "rerank"}

        def settings(config: dict):
            return lambda: (r.host.set_config(config), settings_cache.forget())

        later, fused = await paired_ms(
            timed, timed, repeats, before_ours=settings(asked), before_theirs=settings(alone)
        )
        assert next(iter(calibration._known.values())).say == "none"
    what = "a reranker that earned no say (300 ms a call)"
    return [
        ratio_row("recall", f"first search with {what} vs fusion alone", first, fused, note="asked; its say measured"),
        ratio_row(
            "recall",
            f"later searches with {what} vs fusion alone",
            later,
            fused,
            "<= 1.2x",
            1.2,
            "not asked once its say is known to be none: the fused order at fusion's cost",
        ),
    ]


async def measure(r, repeats: int = 60) -> list[Row]:
    rows = []
    # One request per search on both sides: the server takes the whole pool in one batch.
    with remote("tei19", max_client_batch_size=1000, cheap_scorer=True) as srv:
        rows.append(await _one(r, srv, repeats, "instant server", "3 pool searches (message, follow-up, host query)"))
        # The same with the pool drawn from the host's own query only: what the two extra
        # searches cost, apart from the wrapper and the client.
        rows.append(
            await _one(
                r,
                srv,
                repeats,
                "instant server, host-query pool only",
                "rerank_search_message/followup off",
                rerank_search_message=False,
                rerank_search_followup=False,
            )
        )
        rows.append(await _shadow(r, srv, repeats * 3))
    with remote("tei19", max_client_batch_size=1000, cheap_scorer=True, latency=0.02) as srv:
        rows.append(await _one(r, srv, repeats // 2, "20 ms inference"))
    rows += await _no_say(r, repeats)
    return rows


def main() -> list[Row]:
    with rig() as r:
        rows = r.host.run(measure(r))
    return report("recall_overhead", rows)


if __name__ == "__main__":
    main()
