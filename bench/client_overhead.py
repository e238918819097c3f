"""The client's own cost: ``arerank`` against a bare httpx POST of the same body, and a
200-document pool on a TEI-like server limited to 32 per request against one 32-document
request. Run: python -m bench.client_overhead"""

from __future__ import annotations

import asyncio

import httpx

from bench.common import Row, median_ms, ratio_row, report
from helpers import reranker
from bench.common import chosen
from helpers.scoring import probing
from helpers.scoring.wire import TEI
from bench.remote_server import remote

QUERY = "how do I restart the grafana container on the home server"


def documents(n: int, chars: int = 500) -> list[str]:
    base = "memory {i}: the user keeps notes about servers, backups, grafana dashboards and containers. "
    return [(base.format(i=i) * (chars // len(base) + 1))[:chars] for i in range(n)]


async def overhead(url: str, repeats: int, config: dict, label: str) -> Row:
    docs20 = documents(20)
    body = TEI.body(QUERY, docs20, "")
    async with httpx.AsyncClient() as bare:

        async def bare_post():
            (await bare.post(url + "/rerank", json=body)).json()

        async def ours():
            assert await reranker.arerank(QUERY, docs20, config=config)

        baseline = await median_ms(bare_post, repeats)
        value = await median_ms(ours, repeats)
    return ratio_row(
        "client", f"arerank vs bare httpx POST, 20 docs x 500 chars, {label}", value, baseline, "<= 1.2x", 1.2
    )


async def measure(repeats: int = 200) -> list[Row]:
    rows: list[Row] = []
    # No inference time: the ratio is the client's own cost over a bare POST, undiluted.
    with remote("tei19", cheap_scorer=True) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}
        await probing.probe(*chosen(config))  # detection is a one-time cost
        rows.append(await overhead(srv.url, repeats, config, "instant server"))
    # A fixed 20 ms per forward pass stands for model inference, as on a real TEI: batches
    # run in parallel up to the server's capacity, so splitting costs round trips, not compute.
    with remote("tei19", max_client_batch_size=32, latency=0.02, cheap_scorer=True) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}
        await probing.probe(*chosen(config))
        rows.append(await overhead(srv.url, repeats // 2, config, "20 ms inference"))
        docs200 = documents(200)
        body32 = TEI.body(QUERY, docs200[:32], "")
        async with httpx.AsyncClient() as bare:

            async def one_batch():
                (await bare.post(srv.url + "/rerank", json=body32)).json()

            async def pool200():
                assert len(await reranker.arerank(QUERY, docs200, config=config)) == 200

            baseline = await median_ms(one_batch, repeats // 4)
            value = await median_ms(pool200, repeats // 4)
        rows.append(
            ratio_row("client", "200 docs on TEI (32 per request) vs one 32-doc request", value, baseline, "<= 2x", 2.0)
        )
    return rows


def main() -> list[Row]:
    return report("client_overhead", asyncio.run(measure()))


if __name__ == "__main__":
    main()
