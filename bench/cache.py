"""A warm score cache against a server call: the same query and documents ranked again,
with ``rerank_cache`` on (every score already known) and off (a round trip each time).
Against an instant server, so the ratio is the cache's cost over the cheapest possible call.

    python -m bench.cache
"""

from __future__ import annotations

import asyncio

from bench.client_overhead import QUERY, documents
from bench.common import Row, ratio_row, report
from bench.paired import paired_ms
from bench.remote_server import remote
from helpers import reranker
from bench.common import chosen
from helpers.scoring import probing
from helpers.scoring.cache import CACHE


async def measure(repeats: int = 300) -> list[Row]:
    rows = []
    with remote("tei19", cheap_scorer=True) as srv:
        for n in (20, 200):
            docs = documents(n)
            off = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}
            on = {**off, "rerank_cache": True}
            await probing.probe(*chosen(off))
            await probing.probe(*chosen(on))
            CACHE.forget()

            def ranker(config, docs=docs, n=n):  # this pass's documents, bound now
                async def call():
                    assert len(await reranker.arerank(QUERY, docs, config=config)) == n

                return call

            warm, server = await paired_ms(ranker(on), ranker(off), repeats // (n // 20))
            assert CACHE.hits > 0
            rows.append(
                ratio_row(
                    "cache",
                    f"warm cache vs server call, {n} docs x 500 chars (instant server)",
                    warm,
                    server,
                    "<= 0.1x",
                    0.1,
                )
            )
    return rows


def main() -> list[Row]:
    return report("cache", asyncio.run(measure()))


if __name__ == "__main__":
    main()
