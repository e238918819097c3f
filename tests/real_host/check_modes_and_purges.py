"""The modes and the host's own module purges: shadow mode, rerank_api lexical and utility
(the host's real default utility model, unreachable offline), the memory dashboard as a
caller that must get the host's own order, and purge_namespace healed by the plugin's _45.

Run by run.sh: python check_modes_and_purges.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import traceback

import host_session as hs

session = hs.open_host()
check = session.check


def stats():
    # imported late: a purge of usr.plugins replaces the module
    from usr.plugins.a0_reranker.helpers.report.stats import STATS

    return STATS


async def main():
    from agent import AgentContext, UserMessage
    from helpers import modules, plugins

    import initialize

    hs.enable_and_install_plugin()
    from plugins._memory.helpers.memory import Memory

    original = Memory.__dict__["search_similarity_threshold"].__wrapped__
    agent = AgentContext(config=initialize.initialize_agent()).agent0
    db = await Memory.get(agent)
    await hs.fill_store(db)
    agent.hist_add_user_message(UserMessage(message=hs.QUESTION))
    recall_cls = hs.recall_class(agent)
    history_len = plugins.get_plugin_config("_memory", agent)["memory_recall_history_len"]
    host_query = agent.last_user_message.output_text() + "\n\n" + agent.history.output_text()[-history_len:]
    host_memories = await original(db, query=host_query, limit=12, threshold=0.7, filter=hs.RECALL_FILTER)
    host_first5 = [d.page_content for d in host_memories[:5]]

    # ---- shadow mode: the host's order goes to the agent; the plugin only measures ----
    hs.save_config(rerank_apply=False)
    kvps_at_return, log_item, _ = await hs.recall(agent, recall_cls)
    kvps_at_return = dict(kvps_at_return)
    from usr.plugins.a0_reranker.helpers.recall import shadow

    await shadow.drained(10.0)  # the chat line is added by the background measurement
    kvps = log_item.output().get("kvps") or {}
    check(
        "shadow mode: the agent gets the host's own order",
        kvps.get("memories", "") == "\n\n".join(host_first5),
        {
            "line_at_return": kvps_at_return.get("reranker"),
            "line_after_background": kvps.get("reranker"),
            "heading": log_item.output().get("heading"),
        },
    )
    check(
        "shadow mode: chat line says so", str(kvps.get("reranker", "")).startswith("shadow mode"), kvps.get("reranker")
    )

    hs.save_config(rerank_api="lexical")
    kvps, _, _ = await hs.recall(agent, recall_cls)
    check(
        "rerank_api lexical: recall runs, plugin line present",
        "reranker" in kvps,
        {"line": kvps.get("reranker"), "first": hs.prompt_lines(kvps)[:1]},
    )

    # The host's default utility model is a remote one; offline it fails, and the recall must
    # still answer with the fused order within the plugin's timeout.
    hs.save_config(rerank_api="utility", rerank_timeout=6.0)
    try:
        kvps, _, seconds = await asyncio.wait_for(hs.recall(agent, recall_cls), timeout=60)
        check(
            "rerank_api utility, model unreachable: recall still answers",
            bool(hs.prompt_lines(kvps)),
            {"line": kvps.get("reranker"), "seconds": round(seconds, 1), "first": hs.prompt_lines(kvps)[:1]},
        )
    except Exception:
        check("rerank_api utility, model unreachable: recall still answers", False, traceback.format_exc()[-1200:])
    await check_utility_test_connection(agent)
    hs.save_config()

    # ---- the memory dashboard's search: not on the allow-list, so the host's own order ----
    from flask import Flask
    from helpers.api import ApiHandler
    from helpers.modules import load_classes_from_file

    before = stats().snapshot()
    dashboard_file = os.path.join(session.root, "plugins/_memory/api/memory_dashboard.py")
    dashboard = load_classes_from_file(dashboard_file, ApiHandler)[0](Flask("dashboard"), threading.Lock())
    answer = await dashboard._search_memories(
        {"memory_subdir": "default", "search": "grafana dashboard", "limit": 10, "threshold": 0.6}
    )
    host = await original(db, query="grafana dashboard", limit=10, threshold=0.6, filter="")
    ids = [m.get("id") for m in answer.get("memories", [])]
    host_ids = [d.metadata["id"] for d in host]
    check("memory dashboard search gets the host's own order", ids == host_ids, {"dash": ids[:5], "host": host_ids[:5]})
    check("dashboard search not counted", before == stats().snapshot())

    # ---- purges: the host's installer, delete and file watcher purge usr.plugins ----
    modules.purge_namespace("usr.plugins")
    ensure_cls = hs.recall_class(agent, "A0RerankerEnsureWrapped")
    await ensure_cls(agent).execute()
    fn = Memory.__dict__["search_similarity_threshold"]
    check(
        "after purge_namespace('usr.plugins') + _45: exactly one wrap layer",
        getattr(fn, "__a0_reranker_wrapper__", False) and fn.__wrapped__ is original,
    )
    kvps, _, _ = await hs.recall(agent, recall_cls)
    check("recall after usr.plugins purge still reranked", "reranker" in kvps, kvps.get("reranker"))

    # a change to a core plugin purges "plugins": a new Memory class, unwrapped until _45 runs
    modules.purge_namespace("plugins")
    from plugins._memory.helpers.memory import Memory as FreshMemory

    check("purge_namespace('plugins') gives a fresh Memory class", FreshMemory is not Memory)
    await ensure_cls(agent).execute()
    check(
        "_45 wraps the fresh Memory class",
        getattr(FreshMemory.__dict__["search_similarity_threshold"], "__a0_reranker_wrapper__", False),
    )
    plugins.call_plugin_hook(hs.PLUGIN, "uninstall")


async def check_utility_test_connection(agent) -> None:
    """Test connection for the utility judge, with and without a chat to take the model from."""
    from helpers import plugins

    handler = hs.plugin_api_handler(session, "test_connection")
    form = dict(plugins.get_default_plugin_config(hs.PLUGIN), rerank_api="utility", rerank_timeout=6.0)
    for payload in ({"config": form}, {"config": form, "context": agent.context.id}):
        which = "with" if "context" in payload else "no"
        try:
            started = time.monotonic()
            answer = await asyncio.wait_for(handler.process(payload, None), timeout=60)
            report = answer.get("report", {})
            check(
                f"test_connection utility ({which} context) answers clearly",
                isinstance(answer, dict) and report.get("reason"),
                {
                    "ok": answer.get("ok"),
                    "verdict": report.get("verdict"),
                    "reason": report.get("reason"),
                    "s": round(time.monotonic() - started, 1),
                },
            )
        except Exception:
            check(f"test_connection utility ({which} context) answers clearly", False, traceback.format_exc()[-1200:])


if __name__ == "__main__":
    session.run(main, __file__)
