"""A reranker that scores a new chat's short query in time but runs out of rerank_timeout
on a long chat's query, as a cross-encoder served on a CPU does (scoring/query_budget.py):
the search that ran out keeps the fused order and says its query is cut; the next searches
ask the message and the newest conversation that fit 400 characters, and are reranked.
Driven through the stand-in host against a TEI server on loopback that takes 2 s for any
query longer than 1,000 characters."""

import asyncio
import time

from helpers.scoring import query_budget, scorers
from helpers.settings import Settings
from tests.host.recall import QUESTION, enabled_store, pool_posts, set_plugin, wrapped_module
from tests.servers import start

LONG_QUERY_S = 2.0  # past the 1 s rerank_timeout the tests set
LONG_CHAT = "\n".join(
    f"user: turn {i}: did the backup of the home server run, and did grafana raise an alert?" for i in range(200)
)


def slow_for_long_queries(srv):
    """The server's model takes LONG_QUERY_S for a query past 1,000 characters: what a CPU
    cross-encoder's time does with a long query (bench.local_cost)."""
    infer = srv.backend.infer

    def cpu_like(query, documents):
        if len(query) > 1000:
            time.sleep(LONG_QUERY_S)
        return infer(query, documents)

    srv.backend.infer = cpu_like


def recall_queries(srv, memory):
    return [r.json["query"] for r in pool_posts(srv, memory)]


def test_a_reranker_that_ran_out_of_time_on_a_long_query_is_asked_a_short_one(host):
    agent, memory = enabled_store(host)
    recall = wrapped_module(host)

    async def main():
        with start("tei19") as srv:
            slow_for_long_queries(srv)
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=1.0, rerank_retries=0)
            recall.STATS.forget()
            first = await host.recall(agent, QUESTION, LONG_CHAT)
            assert first["error"] is None and first["memories"]
            stats = recall.STATS.snapshot()
            # The memories search ran out on the long query and kept the fused order; the
            # recall's solutions search, asked next, already read the short one.
            assert stats["totals"] == {"reranker_unavailable": 1, "reranked": 1, "fused": 1}
            reason = stats["last_error"]["reason"]
            assert "ran out of time reading a 1,9" in reason and "cut to 400 characters" in reason
            # (a pool past TEI's 32 texts goes in two requests, each with the query)
            long = [len(q) > 1000 for q in recall_queries(srv, memory)]
            assert long[0] and not long[-1] and long == sorted(long, reverse=True)
            short = [q for q in recall_queries(srv, memory) if len(q) <= 1000]
            assert all(len(q) <= query_budget.SHORT_QUERY_CHARS for q in short)

            srv.clear()
            recall.STATS.forget()
            second = await host.recall(agent, QUESTION, LONG_CHAT)
            assert second["error"] is None
            assert not recall.STATS.snapshot()["totals"].get("reranker_unavailable")
            asked = recall_queries(srv, memory)
            assert asked and all(len(q) <= query_budget.SHORT_QUERY_CHARS for q in asked)
            assert all(q.startswith(QUESTION) and "turn 199" in q for q in asked)  # the newest conversation
            status = host.import_plugin("helpers.status_report")
            text = host.import_plugin("helpers.vocabulary").status_text(status.collect(agent))
            assert "at most 400 characters (cut: it ran out of time reading 1,9" in text

    asyncio.run(main())


def test_a_new_chats_short_query_and_a_fast_server_change_nothing(host):
    agent, memory = enabled_store(host)
    recall = wrapped_module(host)

    async def main():
        with start("tei19") as srv:
            set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=1.0, rerank_retries=0)
            lengths = []
            for history in ("", LONG_CHAT, LONG_CHAT):
                srv.clear()
                assert (await host.recall(agent, QUESTION, history))["error"] is None
                lengths.append({len(q) for q in recall_queries(srv, memory)})
            assert lengths[0] == {len(QUESTION)}
            assert lengths[2] == lengths[1] and len(lengths[1]) == 1 and 1900 < min(lengths[1]) <= 2000
            assert not recall.STATS.snapshot()["totals"].get("reranker_unavailable")

    asyncio.run(main())


def choice(**config):
    return scorers.choose(Settings.from_mapping({"rerank_endpoint": "http://127.0.0.1:9", **config}))


def test_only_a_call_that_had_its_whole_time_for_a_long_query_cuts_it():
    server = choice(rerank_timeout=8)
    assert query_budget.chars(server) == 2000
    assert not query_budget.ran_out(server, 400, 8.0)  # short already: its time says nothing of the query
    assert not query_budget.ran_out(server, 2000, 2.0)  # the recall's deadline cut it short
    assert query_budget.chars(server) == 2000
    assert query_budget.ran_out(server, 2000, 8.0)
    assert query_budget.chars(server) == 400
    assert not query_budget.ran_out(server, 2000, 8.0)  # said once
    other = choice(rerank_timeout=8, rerank_model="another-model")
    assert query_budget.chars(other) == 2000  # other settings, another key: its own budget
    assert query_budget.chars(choice(rerank_timeout=8, rerank_max_query_chars=300)) == 300
    judge = scorers.choose(Settings.from_mapping({"rerank_api": "utility"}))
    assert not query_budget.ran_out(judge, 2000, 60.0)  # too slow for recall is the judge's verdict
    query_budget.forget()
    assert query_budget.chars(server) == 2000
