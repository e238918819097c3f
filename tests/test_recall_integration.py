"""The plugin inside the stand-in Agent Zero, driven the way the host drives it: recall and
memory_load are reranked; delete-by-query, consolidation and the dashboard are untouched;
every failure gives exactly the unwrapped result; one wrapper layer, whatever happens."""

import asyncio

import pytest

from tests.host.recall import (
    HISTORY,
    QUESTION,
    enabled_store,
    free_port,
    ids,
    no_server_recall,
    pool_posts,
    set_memory_config,
    set_plugin,
    spy_searches,
    store,
    unwrapped_recall,
    wrapped_module,
)
from tests.servers import relevance, start


def test_a_memory_ranked_25th_of_60_reaches_the_top_5(host):
    async def main():
        set_memory_config(host, memory_recall_similarity_threshold=0.0)
        agent, memory = await store(host)
        recall = wrapped_module(host)
        host.toggle(True)
        # Where does the host's own recall query put each memory? Take the 25th as the answer.
        plain = await host.recall(agent, QUESTION, HISTORY)
        Memory = type(memory)
        rendered_query = None
        original = Memory.search_similarity_threshold.__wrapped__
        for doc in plain["memories"]:
            assert doc.metadata["area"] == "main"
        host.toggle(False)
        captured = {}

        async def spy(self, query, limit, threshold, filter=""):
            captured["query"] = query
            return await original(self, query, limit, threshold, filter)

        Memory.search_similarity_threshold = spy
        await host.recall(agent, QUESTION, HISTORY)
        rendered_query = captured["query"]
        ranked = await original(memory, rendered_query, 60, 0.0)  # no filter: no 20-cap
        target = ranked[24]
        Memory.search_similarity_threshold = original
        recall.ensure_wrapped()
        host.toggle(True)

        without = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        assert target not in without["memories"]

        # An ordinary model for everything (the connection probe too), the answer scored highest.
        with start("tei19", scorer=lambda q, d: 20.0 if d == target.page_content else relevance(q, d)) as srv:
            set_plugin(host, rerank_endpoint=srv.url, rerank_candidates=40)
            recall.STATS.forget()
            result = await host.recall(agent, QUESTION, HISTORY)
        assert result["error"] is None
        assert any(d is target for d in result["memories"])
        assert len(result["memories"]) <= 5
        stats = recall.STATS.snapshot()
        # memories reranked; the solutions search had nothing to rerank (no solutions stored)
        assert stats["totals"] == {"reranked": 1, "empty": 1}

    asyncio.run(main())


@pytest.fixture
def live(host):
    """A host with 60 memories, the plugin enabled and pointed at a working TEI server."""
    agent, memory = enabled_store(host)
    with start("tei19") as srv:
        set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=1.0, rerank_retries=0)
        yield host, agent, memory, srv


def test_other_callers_get_the_original_objects(live):
    host, agent, memory, srv = live

    async def main():
        from helpers.tool import Response  # noqa: F401  (the host's module is active)

        Memory = type(memory)
        original = Memory.search_similarity_threshold.__wrapped__
        srv.clear()
        # consolidation
        with_plugin = await host.find_similar(agent, "the user keeps notes on grafana and docker")
        expected = await _with_original(
            Memory, original, host.find_similar(agent, "the user keeps notes on grafana and docker")
        )
        assert ids(with_plugin) == ids(expected)
        # dashboard
        dash = await host.dashboard_search("grafana docker", threshold=0.0, limit=10)
        dash_plain = await _with_original(
            Memory, original, host.dashboard_search("grafana docker", threshold=0.0, limit=10)
        )
        assert dash == dash_plain
        # delete-by-query: deletes exactly what the host would have deleted
        before = set(memory.db.docstore._dict)
        expected_ids = {
            d.metadata["id"] for d in await original(memory, "memory 7: notes on", 100, 0.0, "area == 'main'")
        }
        removed = await memory.delete_documents_by_query("memory 7: notes on", 0.0, "area == 'main'")
        assert {d.metadata["id"] for d in removed} == expected_ids
        assert set(memory.db.docstore._dict) == before - expected_ids
        assert [r for r in srv.requests if r.method == "POST"] == []  # none of them reached the reranker

    asyncio.run(main())


async def _with_original(Memory, original, coro):
    wrapper = Memory.__dict__["search_similarity_threshold"]
    Memory.search_similarity_threshold = original
    try:
        return await coro
    finally:
        Memory.search_similarity_threshold = wrapper


def test_recall_is_reranked_and_returns_the_hosts_own_documents(live):
    host, agent, memory, srv = live
    result = host.run(host.recall(agent, QUESTION, HISTORY))
    stored = set(map(id, memory.db.docstore._dict.values()))
    assert result["memories"] and all(id(d) in stored for d in result["memories"])
    assert len(result["memories"]) <= 5
    posts = [r for r in pool_posts(srv, memory) if r.path == "/rerank"]
    assert posts  # the reranker read the pool
    query = posts[-1].json["query"]
    assert query.startswith(QUESTION) and "user_message" not in query.split("\n")[0]


def _fault_cases():
    return [
        ("server down", None),
        ("http 500", {"statuses": [500] * 50}),
        ("timeout", {"delay": 3.0}),
        ("malformed", {"body": "malformed"}),
        ("wrong count", {"body": "wrong_count"}),
        ("html", {"body": "html"}),
    ]


async def recall_gives(host, agent, memory, expected):
    """A recall returns ``expected``'s very documents, and leaves the store untouched."""
    stored = lambda: {k: (d.page_content, dict(d.metadata)) for k, d in memory.db.docstore._dict.items()}  # noqa: E731
    before = stored()
    got = await host.recall(agent, QUESTION, HISTORY)
    assert got["error"] is None
    assert ids(got["memories"]) == ids(expected["memories"])
    assert ids(got["solutions"]) == ids(expected["solutions"])
    assert stored() == before


@pytest.mark.parametrize("case, fault", _fault_cases(), ids=[c for c, _ in _fault_cases()])
def test_a_failing_reranker_leaves_exactly_the_no_server_order(live, case, fault):
    """A ladder, not a cliff: whatever the reranker does wrong, recall gets the fused order,
    the very documents the no-server mode returns for the same call; nothing mutated."""
    host, agent, memory, srv = live

    async def main():
        expected = await no_server_recall(host, agent, QUESTION, HISTORY)
        host_only = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        assert ids(expected["memories"]) != ids(host_only["memories"])  # fusion did something here
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.STATS.forget()
        if case == "server down":
            set_plugin(host, rerank_endpoint=f"http://127.0.0.1:{free_port()}", rerank_timeout=1.0, rerank_retries=0)
        else:
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=1.0, rerank_retries=0)
            srv.set_faults(**fault)
        await recall_gives(host, agent, memory, expected)
        totals = recall.STATS.snapshot()["totals"]
        assert totals.get("reranker_unavailable") == 2 and totals.get("fused") == 2 and not totals.get("fallback")

    asyncio.run(main())


@pytest.mark.parametrize("case", ["disabled", "switched off", "bad setting", "broken store", "broken embedder"])
def test_a_failure_of_the_plugins_own_steps_returns_exactly_the_hosts_result(live, case, monkeypatch):
    host, agent, memory, srv = live

    async def main():
        expected = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.STATS.forget()
        if case == "disabled":
            host.toggle(False)
        elif case == "switched off":  # rerank_enabled: false is stock Agent Zero
            set_plugin(host, rerank_endpoint=srv.url, rerank_enabled=False)
        elif case == "bad setting":
            set_plugin(host, rerank_endpoint=srv.url, rerank_candidates="many")
        elif case == "broken store":
            store_search = host.import_plugin("helpers.recall.store_search")
            monkeypatch.setattr(store_search, "_search_rows", lambda *a: (_ for _ in ()).throw(MemoryError("faiss")))
        else:
            vectors = host.import_plugin("helpers.recall.query_vectors")
            vectors.MEMO.forget()

            async def broken(db, texts):
                raise RuntimeError("the embedder is down")

            monkeypatch.setattr(vectors, "embed", broken)
        await recall_gives(host, agent, memory, expected)
        totals = recall.STATS.snapshot()["totals"]
        if case in ("disabled", "switched off"):
            assert not totals and not [r for r in srv.requests if r.method == "POST"]
        else:
            assert totals.get("fallback") == 2  # memories and solutions: both fell back

    asyncio.run(main())


def test_shadow_mode_returns_the_hosts_order_and_records_the_impact(live):
    host, agent, memory, srv = live

    async def main():
        expected = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        set_plugin(host, rerank_endpoint=srv.url, rerank_apply=False)
        got = await host.recall(agent, QUESTION, HISTORY)
        assert ids(got["memories"]) == ids(expected["memories"])
        await host.import_plugin("helpers.recall.shadow").drained()  # measured after the recall returned
        stats = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()
        assert stats["totals"]["shadow"] == 2
        shadow = stats["shadow"]
        assert shadow["searches"] == 2 and 0 <= shadow["mean_overlap_at_k"] <= 1
        assert {"top_changed", "promoted_from_below_cut", "mean_rank_correlation"} <= set(shadow)

    asyncio.run(main())


def test_shadow_mode_without_a_server_measures_the_fusion(live):
    host, agent, memory, srv = live

    async def main():
        expected = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        fused = await no_server_recall(host, agent, QUESTION, HISTORY)
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.STATS.forget()
        set_plugin(host, rerank_endpoint="", rerank_apply=False)
        got = await host.recall(agent, QUESTION, HISTORY)
        assert ids(got["memories"]) == ids(expected["memories"]) != ids(fused["memories"])
        await host.import_plugin("helpers.recall.shadow").drained()
        stats = recall.STATS.snapshot()
        assert stats["totals"] == {"shadow": 2} and stats["shadow"]["searches"] == 2
        status = host.import_plugin("helpers.status_report")
        text = host.import_plugin("helpers.vocabulary").status_text(status.collect(agent))
        assert text.startswith("WORKING: built-in fusion, no reranker server; shadow mode: measured only")
        assert "shadow: top result would change in" in text

    asyncio.run(main())


def test_memory_load_is_reranked_with_llm_strings_coerced(live):
    host, agent, memory, srv = live

    async def main():
        srv.clear()
        response = await host.memory_load(agent, "grafana port on atlas", limit="3", threshold="0.0")
        assert response.message.count("Content:") == 3
        assert any(r.path == "/rerank" and "texts" in (r.json or {}) for r in srv.requests)

    asyncio.run(main())


def test_install_twice_and_a_purge_leave_one_layer_and_uninstall_restores(host):
    async def main():
        from plugins._memory.helpers.memory import Memory

        original = Memory.__dict__["search_similarity_threshold"]
        host.call_hook("install")
        host.call_hook("install")
        first = Memory.__dict__["search_similarity_threshold"]
        assert first.__wrapped__ is original
        host.purge("usr.plugins")
        host.call_hook("install")  # a fresh copy of the plugin's modules
        again = Memory.__dict__["search_similarity_threshold"]
        assert again.__wrapped__ is original  # re-wrapped around the original, not the old wrapper
        host.init_a0()
        agent = host.agent()
        await host.memory(agent)
        host.toggle(True)
        await host.recall(agent, "hello", "")  # the _45 extension runs ensure_wrapped too
        assert Memory.__dict__["search_similarity_threshold"].__wrapped__ is original
        host.call_hook("uninstall")
        assert Memory.__dict__["search_similarity_threshold"] is original

    asyncio.run(main())


def test_a_fresh_memory_class_after_a_purge_of_plugins_is_wrapped_again(host):
    async def main():
        host.call_hook("install")
        host.purge("plugins")
        from plugins._memory.helpers.memory import Memory  # a new class object

        assert not hasattr(Memory.__dict__["search_similarity_threshold"], "__a0_reranker_wrapper__")
        agent = host.agent()
        await host.memory(agent)
        host.toggle(True)
        await host.recall(agent, "hello", "")
        assert getattr(Memory.__dict__["search_similarity_threshold"], "__a0_reranker_wrapper__", False)

    asyncio.run(main())


def test_reranking_does_not_block_the_event_loop(live):
    host, agent, memory, srv = live

    async def main():
        srv.set_faults(delay=0.3)
        set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=5.0)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        result = await host.recall(agent, QUESTION, HISTORY)
        task.cancel()
        assert result["error"] is None and result["memories"]
        assert ticks >= 20  # two reranks of >= 0.3 s each: the loop kept running meanwhile

    asyncio.run(main())


def test_cancellation_propagates_out_of_the_wrapper(live):
    host, agent, memory, srv = live

    async def main():
        srv.set_faults(delay=2.0)
        set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=5.0)
        srv.clear()
        task = asyncio.create_task(host.memory_load(agent, "grafana port", limit=3, threshold=0.0))
        for _ in range(100):  # until the reranker has been called (the server logs on arrival)
            await asyncio.sleep(0.02)
            if any(r.method == "POST" for r in srv.requests):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stats = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()["totals"]
        assert not stats.get("fallback")  # cancelled, not swallowed into a fallback

    asyncio.run(main())


def test_recall_also_searches_with_the_message_and_a_short_tail(live):
    host, agent, memory, srv = live
    history = "\n".join(f"user: turn {i} about the garden and the backup schedule" for i in range(300))  # ~16k chars

    async def main():
        seen = spy_searches(host, memory)
        srv.clear()
        result = await host.recall(agent, QUESTION, history)
        assert result["error"] is None
        assert len(seen) == len(set(seen)) == 3  # memories and solutions: each text embedded once
        searched = set(seen)
        host_queries = [q for q in searched if len(q) > 5000]
        assert host_queries, "the host's own (long) query is searched too"
        assert QUESTION in searched  # the user's own words, decoded from the host's rendering
        tails = [q for q in searched if q.startswith(QUESTION + "\n\n") and len(q) < 1000]
        assert tails and all(len(q) <= len(QUESTION) + 2 + 600 for q in tails)
        assert all("turn 299" in q for q in tails)  # the newest turns, not the oldest
        posts = pool_posts(srv, memory)
        rerank_query = posts[-1].json["query"]
        assert rerank_query.startswith(QUESTION) and len(rerank_query) <= 2000 and "turn 299" in rerank_query

    asyncio.run(main())


def test_memory_load_searches_only_its_own_query(live):
    host, agent, memory, srv = live

    async def main():
        seen = spy_searches(host, memory)
        await host.memory_load(agent, "grafana port", limit=3, threshold=0.0)
        assert seen == ["grafana port"]

    asyncio.run(main())


# --- shadow mode off the recall path -------------------------------------------------------
def test_shadow_mode_returns_the_hosts_result_while_the_reranker_is_still_working(live):
    host, agent, memory, srv = live
    shadow = host.import_plugin("helpers.recall.shadow")

    async def main():
        expected = await unwrapped_recall(host, agent, QUESTION, HISTORY)
        set_plugin(host, rerank_endpoint=srv.url, rerank_apply=False, rerank_timeout=5.0)
        srv.set_faults(delay=0.5)
        srv.clear()
        got = await host.recall(agent, QUESTION, HISTORY)
        # Back with the host's own answer, the measurement still under way in the background.
        assert ids(got["memories"]) == ids(expected["memories"]) and shadow.running() >= 1
        stats = host.import_plugin("helpers.recall.wrapper").STATS
        assert not stats.snapshot()["totals"].get("shadow")
        await shadow.drained()
        assert stats.snapshot()["totals"]["shadow"] == 2
        assert any(r.method == "POST" and len((r.json or {}).get("texts", ())) > 3 for r in srv.requests)

    asyncio.run(main())


def test_shadow_measurements_are_bounded_and_the_skips_counted(live):
    host, agent, memory, srv = live
    shadow = host.import_plugin("helpers.recall.shadow")

    async def main():
        set_plugin(host, rerank_endpoint=srv.url, rerank_apply=False, rerank_timeout=5.0)
        await host.recall(agent, QUESTION, HISTORY)  # the probe, once
        await shadow.drained()
        srv.set_faults(delay=0.3)
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.STATS.forget()
        peak = 0
        for i in range(4):  # recalls coming faster than their measurements finish
            await host.recall(agent, f"{QUESTION} ({i})", HISTORY)
            peak = max(peak, shadow.running())
        await shadow.drained()
        totals = recall.STATS.snapshot()["totals"]
        assert peak <= shadow.MAX_IN_FLIGHT
        assert totals.get("shadow_skipped", 0) >= 8 - shadow.MAX_IN_FLIGHT - totals.get("shadow", 0) > 0
        assert totals.get("shadow", 0) + totals["shadow_skipped"] == 8  # every search measured or counted

    asyncio.run(main())


@pytest.mark.parametrize("how", ["disabled", "uninstalled"])
def test_no_shadow_measurement_after_the_plugin_is_switched_off(live, how):
    host, agent, memory, srv = live
    shadow = host.import_plugin("helpers.recall.shadow")
    recall = host.import_plugin("helpers.recall.wrapper")

    async def main():
        set_plugin(host, rerank_endpoint=srv.url, rerank_apply=False, rerank_timeout=5.0)
        srv.set_faults(delay=0.4)
        recall.STATS.forget()
        await host.recall(agent, QUESTION, HISTORY)
        assert shadow.running() >= 1
        if how == "disabled":
            host.toggle(False)
            host.import_plugin("helpers.settings_cache").forget()
        else:
            host.call_hook("uninstall")
        await shadow.drained()
        assert shadow.running() == 0
        assert not recall.STATS.snapshot()["totals"].get("shadow")
        if how == "uninstalled":  # and none is started any more
            assert shadow.submit(lambda: asyncio.sleep(0), lambda: True) is False

    asyncio.run(main())
