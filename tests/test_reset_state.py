"""One testing switch, ``reranker.reset_state()``, empties every process-wide cache the
plugin keeps; the autouse fixture in conftest.py calls it before each test."""

import asyncio

from helpers import reranker, settings_cache
from helpers.recall import deadlines, query_vectors, recall_line, store_search
from helpers.report import stats
from helpers.scoring import breaker, cache, client, endpoint_guard, probing, scorers
from helpers.scoring.scorers import local, utility
from helpers.scoring.verdicts import Verdict
from helpers.settings import default_mapping
from helpers.scoring.wire import TEI


class _Embedder:
    def embed_query(self, text):
        return [1.0]


class _LogItem:
    pass


def _fill_every_cache():
    settings = reranker.load_settings(default_mapping())
    settings_cache.remembered(("agent", "default", 1), lambda: settings, 5.0)
    with probing._cache_lock:
        probing._cache[scorers.verdict_key(settings, scorers.REMOTE)] = Verdict(
            route=TEI, scale="probability", relevant=0.9, irrelevant=0.1
        )
    cache.CACHE.store([("k",)], [0.5], ttl=60, max_entries=10)
    breaker.BREAKER.record_failure("endpoint", 5, 30)
    stats.STATS.record(stats.CallRecord("reranked", "", "test"))
    with store_search._scans_lock:
        store_search._scans[("store",)] = (float("inf"), None)
    query_vectors.MEMO.put(_Embedder(), "text", [1.0])
    with endpoint_guard._resolved_lock:
        endpoint_guard._resolved["name.example"] = (float("inf"), True)
    client.remember_batch_limit("http://127.0.0.1:1/rerank", 8)
    asyncio.run(_a_recall_budget())
    item = _LogItem()
    with recall_line._lock:
        recall_line._parts[id(item)] = (lambda: item, {})
    utility.UTILITY._latencies.setdefault("model", []).append(1.0)
    return settings, item


async def _a_recall_budget():
    deadlines.for_search("recall")
    assert len(deadlines._by_task) == 1


def _sizes(settings):
    return {
        "settings": settings_cache.size(),
        "verdicts": len(probing._cache),
        "scores": len(cache.CACHE),
        "breaker": len(breaker.BREAKER.snapshot()),
        "stats": sum(stats.STATS.snapshot()["totals"].values()),
        "scans": len(store_search._scans),
        "query vectors": len(query_vectors.MEMO),
        "privacy": len(endpoint_guard._resolved),
        "batch limits": int(client.learned_batch_limit("http://127.0.0.1:1/rerank") is not None),
        "recall line": len(recall_line._parts),
        "utility latencies": len(utility.UTILITY.latency()),
        "local models": len(local._loads),
    }


def test_reset_state_empties_every_process_wide_cache():
    settings, _item = _fill_every_cache()
    filled = _sizes(settings)
    assert all(filled[name] for name in filled if name != "local models"), filled
    reranker.reset_state()
    assert _sizes(settings) == dict.fromkeys(filled, 0)


def test_reset_state_is_in_the_public_facade():
    assert "reset_state" in reranker.__all__
