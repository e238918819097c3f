"""One deadline per recall: whatever rerank_timeout says, a hung reranker cannot make the
host's recall run out of its own time; the two searches of a recall share one budget."""

import asyncio

from tests.servers import start
from tests.host.recall import HISTORY, QUESTION, enabled_store, ids, no_server_recall, set_plugin

RECALL_MODULE = "plugins._memory.extensions.python.message_loop_prompts_after._50_recall_memories"


def shrink_time(host, monkeypatch, budget_s: float, host_timeout_s: float):
    """The same race at a smaller scale: the plugin's budget and the host's own 30 s."""
    import importlib

    deadlines = host.import_plugin("helpers.recall.deadlines")
    monkeypatch.setattr(deadlines, "RECALL_SECONDS", budget_s)
    monkeypatch.setattr(importlib.import_module(RECALL_MODULE), "SEARCH_TIMEOUT", host_timeout_s)
    return deadlines


def test_a_hung_reranker_at_the_largest_timeout_still_leaves_the_recall_its_memories(host, monkeypatch):
    agent, memory = enabled_store(host)
    shrink_time(host, monkeypatch, budget_s=1.5, host_timeout_s=6.0)

    async def main():
        expected = await no_server_recall(host, agent, QUESTION, HISTORY)
        with start("tei19") as srv:
            srv.set_faults(delay=60.0)  # accepts, never answers in time
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=120, rerank_retries=0)
            recall = host.import_plugin("helpers.recall.wrapper")
            recall.STATS.forget()
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
            recall.STATS.forget()
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
    deadlines = shrink_time(host, monkeypatch, budget_s=0.8, host_timeout_s=6.0)

    async def main():
        first = deadlines.for_search("memory_load")
        await asyncio.sleep(0.01)
        second = deadlines.for_search("memory_load")
        assert second.expires_at > first.expires_at  # not shared: each tool call is its own search

        async def one_recall():
            return deadlines.for_search("recall"), deadlines.for_search("recall")

        a, b = await asyncio.create_task(one_recall())
        c, _ = await asyncio.create_task(one_recall())
        assert a is b and c is not a  # a recall's searches share; the next recall starts anew

    asyncio.run(main())


def host_timeout(host, agent, monkeypatch, seconds: float) -> None:
    """The host's own SEARCH_TIMEOUT, where its recall reads it: the extension loader runs
    _50_recall_memories.py as a module object of its own, not the one import_module finds."""
    from helpers import extension

    (recall_class,) = [
        cls
        for cls in extension._get_extension_classes("message_loop_prompts_after", agent=agent)
        if cls.__module__ == "_50_recall_memories"
    ]
    monkeypatch.setitem(recall_class.execute.__globals__, "SEARCH_TIMEOUT", seconds)


def _slow_query_prep(seconds: float, query: str = QUESTION):
    """A utility model that takes ``seconds`` to write the recall's query (the host's
    memory_recall_query_prep) and answers the post-filter prompt with the first memories."""

    async def model(system: str, message: str) -> str:
        if "## Memories" in message:  # memory.memories_filter.msg.md
            return "[0, 1, 2]"
        await asyncio.sleep(seconds)
        return query

    return model


def test_the_deadline_counts_from_when_the_hosts_recall_started_not_from_the_first_search(host, monkeypatch):
    # At a fifth of the real scale: the host's 30 s is 6 s, the plugin's 15 s budget 3 s, and
    # the utility model writes the query in 3.4 s (17 s at full scale). Counted from the
    # first search, the budget ran to 6.4 s, past the host's 6: the host cancelled the recall
    # (TimeoutError, the turn lost its memories). Counted from the host's own start, the
    # plugin stops asking the hung reranker in time and the fused order comes back.
    from tests.host.recall import set_memory_config

    deadlines = shrink_time(host, monkeypatch, budget_s=3.0, host_timeout_s=6.0)
    monkeypatch.setattr(deadlines, "HOST_MARGIN_S", 0.8)
    agent, memory = enabled_store(host)
    set_memory_config(host, memory_recall_similarity_threshold=0.0, memory_recall_query_prep=True)
    agent.set_data(type(agent).DATA_NAME_UTILITY_MODEL, _slow_query_prep(3.4))
    host_timeout(host, agent, monkeypatch, 6.0)

    async def main():
        with start("tei19") as srv:
            srv.set_faults(delay=60.0)
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=120, rerank_retries=0, rerank_breaker_failures=100)
            recall = host.import_plugin("helpers.recall.wrapper")
            recall.STATS.forget()
            got = await host.recall(agent, QUESTION, HISTORY)
        assert got["error"] is None
        assert got["memories"] and got["solutions"]
        totals = recall.STATS.snapshot()["totals"]
        assert totals.get("reranker_unavailable") == 2 and totals.get("fused") == 2, totals

    asyncio.run(main())


def test_the_hosts_post_filter_keeps_its_reserve_of_the_hosts_time(host, monkeypatch):
    # The same, with the host's post-filter on: the plugin also leaves the host the time its
    # utility model needs to filter (POST_FILTER_RESERVE_S), so the filter's answer is used.
    from tests.host.recall import set_memory_config

    deadlines = shrink_time(host, monkeypatch, budget_s=3.0, host_timeout_s=6.0)
    monkeypatch.setattr(deadlines, "HOST_MARGIN_S", 0.5)
    monkeypatch.setattr(deadlines, "POST_FILTER_RESERVE_S", 1.0)
    agent, memory = enabled_store(host)
    set_memory_config(
        host, memory_recall_similarity_threshold=0.0, memory_recall_query_prep=True, memory_recall_post_filter=True
    )

    async def model(system: str, message: str) -> str:
        if "## Memories" in message:
            await asyncio.sleep(0.6)  # within the reserve
            return "[0, 1]"
        await asyncio.sleep(3.0)
        return QUESTION

    agent.set_data(type(agent).DATA_NAME_UTILITY_MODEL, model)
    host_timeout(host, agent, monkeypatch, 6.0)

    async def main():
        with start("tei19") as srv:
            srv.set_faults(delay=60.0)
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=120, rerank_retries=0, rerank_breaker_failures=100)
            got = await host.recall(agent, QUESTION, HISTORY)
        assert got["error"] is None
        assert len(got["memories"]) == 2  # the post-filter's two picks: it ran, in time

    asyncio.run(main())


def test_each_recall_task_keeps_the_stamp_of_its_own_start(host):
    # The stamp travels in the context the recall task copies when the host creates it: a
    # later turn's stamp (the loop goes on while a delayed recall still runs) never moves an
    # earlier recall's deadline later.
    deadlines = host.import_plugin("helpers.recall.deadlines")

    async def main():
        async def first_search():
            await release.wait()
            return deadlines.for_search("recall", 30, False)

        release = asyncio.Event()
        deadlines.stamp_host_recall_start()
        stamped = deadlines._host_recall_started.get()
        earlier = asyncio.create_task(first_search())  # as _50_recall_memories creates it
        await asyncio.sleep(0.05)
        deadlines.stamp_host_recall_start()  # the next iteration of the agent loop
        release.set()
        deadline = await earlier
        assert deadline.expires_at <= stamped + 30 - deadlines.HOST_MARGIN_S
        assert deadlines._host_recall_started.get() > stamped

    asyncio.run(main())
