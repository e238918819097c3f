"""The same rerank through the clients users would otherwise pick, against the same
Cohere-shaped server on loopback (its own process): the ``rerankers`` library's API ranker
(``Reranker(model, model_type="cohere", url=...)``, an APIRanker over requests, Cohere v1)
and LangChain's ``CohereRerank`` (langchain-cohere over the Cohere SDK's ``ClientV2`` with
``base_url``, Cohere v2). Ours is ``arerank`` on the same path. 20 documents x 500 chars.

Both peers are synchronous; each is timed as its users call it, blocking the calling thread.
Ours is timed as ``arerank`` on the event loop and through the synchronous ``rerank()``.
Ours and the peer are timed call by call in alternation (bench/paired.py). Peers pinned in
requirements-bench.txt.

    python -m bench.peers
"""

from __future__ import annotations

import asyncio
import warnings

from bench.client_overhead import QUERY, documents
from bench.common import Row, ratio_row, report
from bench.paired import paired_ms
from bench.remote_server import remote
from helpers import reranker
from bench.common import chosen
from helpers.scoring import probing

AIM = "< 1x (ours faster)"


def _rerankers_ranker(url: str):
    from rerankers import Reranker

    return Reranker("rerank-v3.5", model_type="cohere", api_key="bench", url=url, verbose=0)


def _langchain_ranker(base_url: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_cohere import CohereRerank

    return CohereRerank(model="rerank-v3.5", cohere_api_key="bench", base_url=base_url, top_n=20)


def measure(repeats: int = 200) -> list[Row]:
    return asyncio.run(_measure(repeats))


async def _measure(repeats: int) -> list[Row]:
    docs = documents(20)
    rows: list[Row] = []
    with remote("cohere", cheap_scorer=True) as srv:
        v1 = {
            "rerank_endpoint": srv.url + "/v1/rerank",
            "rerank_api": "rerank",
            "rerank_model": "rerank-v3.5",
            "rerank_cache": False,
        }
        v2 = {**v1, "rerank_endpoint": srv.url + "/v2/rerank"}
        for config in (v1, v2):
            await probing.probe(*chosen(config))  # detection is a one-time cost
        ranker = _rerankers_ranker(srv.url + "/v1/rerank")  # rerankers: Cohere v1 at a URL of our choosing
        compressor = _langchain_ranker(srv.url)  # LangChain: the Cohere SDK's v2 at a base URL

        def theirs_rerankers():
            assert len(ranker.rank(QUERY, docs).results) == len(docs)

        def theirs_langchain():
            assert len(compressor.rerank(docs, QUERY, top_n=len(docs))) == len(docs)

        def ours_async(config):
            async def call():
                assert len(await reranker.arerank(QUERY, docs, config=config)) == len(docs)

            return call

        def ours_sync(config):
            def call():  # the synchronous API; it blocks this thread, as the peers do
                assert len(reranker.rerank(QUERY, docs, config=config)) == len(docs)

            return call

        for peer, theirs, config in (
            ("rerankers APIRanker (Cohere v1, requests)", theirs_rerankers, v1),
            ("LangChain CohereRerank (Cohere v2, cohere SDK)", theirs_langchain, v2),
        ):
            for label, ours in (("arerank", ours_async(config)), ("rerank() sync", ours_sync(config))):
                value, baseline = await paired_ms(ours, theirs, repeats)
                rows.append(ratio_row("peers", f"{label} vs {peer}", value, baseline, AIM, 0.999))
    return rows


def main() -> list[Row]:
    return report("peers", measure())


if __name__ == "__main__":
    main()
