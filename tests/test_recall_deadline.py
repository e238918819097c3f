"""One deadline per recall: whatever rerank_timeout says, a hung reranker cannot make the
host's recall run out of its own time; the two searches of a recall share one budget."""

import asyncio

from tests.servers import start
from tests.test_recall_integration import HISTORY, QUESTION, enabled_store, ids, no_server_recall, set_plugin

RECALL_MODULE = "plugins._memory.extensions.python.message_loop_prompts_after._50_recall_memories"


def shrink_time(host, monkeypatch, budget_s: float, host_timeout_s: float):
    """The same race at a smaller scale: the plugin's budget and the host's own 30 s."""
    import importlib

    budget = host.import_plugin("helpers.recall.budget")
    monkeypatch.setattr(budget, "RECALL_BUDGET_S", budget_s)
    monkeypatch.setattr(importlib.import_module(RECALL_MODULE), "SEARCH_TIMEOUT", host_timeout_s)
    return budget


def test_a_hung_reranker_at_the_largest_timeout_still_leaves_the_recall_its_memories(host, monkeypatch):
    agent, memory = enabled_store(host)
    shrink_time(host, monkeypatch, budget_s=1.5, host_timeout_s=6.0)

    async def main():
        expected = await no_server_recall(host, agent, QUESTION, HISTORY)
        with start("tei19") as srv:
            srv.set_faults(delay=60.0)  # accepts, never answers in time
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=120, rerank_retries=0)
            recall = host.import_plugin("helpers.recall.wrapper")
            recall.STATS.reset()
            got = await host.recall(agent, QUESTION, HISTORY)
        # Before one deadline per recall, the host cancelled the recall (TimeoutError) and
        # the turn had no memories; now it gets the fused order, the no-server result.
        assert got["error"] is None
        assert ids(got["memories"]) == ids(expected["memories"])
        assert ids(got["solutions"]) == ids(expected["solutions"])
        totals = recall.STATS.snapshot()["totals"]
        assert totals.get("reranker_unavailable") == 2 and totals.get("fused") == 2

    asyncio.run(main())


def test_the_second_search_gets_what_the_first_left_and_does_not_ask_when_nothing_is_left(host, monkeypatch):
    agent, memory = enabled_store(host)
    shrink_time(host, monkeypatch, budget_s=1.0, host_timeout_s=6.0)

    async def main():
        with start("tei19") as srv:
            srv.set_faults(delay=60.0)
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=120, rerank_retries=0, rerank_breaker_failures=100)
            recall = host.import_plugin("helpers.recall.wrapper")
            recall.STATS.reset()
            got = await host.recall(agent, QUESTION, HISTORY)
            rerank_posts = [r for r in srv.requests if r.method == "POST" and r.path == "/rerank"]
        assert got["error"] is None
        reasons = list(recall.STATS.snapshot()["unavailable_reasons"])
        assert "DeadlineExceeded" in reasons, reasons  # the second search: no time left to ask
        # the probe of the first search is the only call the server saw: the second search
        # never asked, it had no time left
        assert len(rerank_posts) <= 1

    asyncio.run(main())


def test_a_memory_load_search_has_a_budget_of_its_own(host, monkeypatch):
    agent, memory = enabled_store(host)
    budget = shrink_time(host, monkeypatch, budget_s=0.8, host_timeout_s=6.0)

    async def main():
        first = budget.for_search("memory_load")
        await asyncio.sleep(0.01)
        second = budget.for_search("memory_load")
        assert second.expires_at > first.expires_at  # not shared: each tool call is its own search

        async def one_recall():
            return budget.for_search("recall"), budget.for_search("recall")

        a, b = await asyncio.create_task(one_recall())
        c, _ = await asyncio.create_task(one_recall())
        assert a is b and c is not a  # a recall's searches share; the next recall starts anew

    asyncio.run(main())
