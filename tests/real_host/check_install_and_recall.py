"""Install the plugin as Agent Zero does, recall through the host's own extension point,
then every other way the host reaches the wrapped search: the memory_load tool, callers that
must get the host's own result, the toggle, the API handlers, the plugin's tool, uninstall.

Run by run.sh: python check_install_and_recall.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import json
import traceback

import host_session as hs

session = hs.open_host()
check = session.check
RESULTS = session.results


async def main():
    from helpers import extension, plugins

    # ---- install and enable as the host does ----
    plugins.toggle_plugin(hs.PLUGIN, True)
    enabled = plugins.get_enabled_plugins(None)
    check("plugin enabled (real get_enabled_plugins)", hs.PLUGIN in enabled, sorted(enabled))
    plugins.call_plugin_hook(hs.PLUGIN, "install")  # as the host's plugin installer does
    # the point run_ui's @extensible init_a0 fires at start-up
    extension.call_extensions_sync(
        "_functions/__main__/init_a0/start", None, data={"args": (), "kwargs": {}, "result": None, "exception": None}
    )
    from plugins._memory.helpers.memory import Memory

    wrapped = Memory.__dict__["search_similarity_threshold"]
    check("wrap installed on the real Memory class", getattr(wrapped, "__a0_reranker_wrapper__", False))
    original = wrapped.__wrapped__

    defaults = plugins.get_default_plugin_config(hs.PLUGIN)
    decision_log = "usr/reranker-decisions.jsonl"
    try:
        hs.save_config(rerank_shadow_log=decision_log)
        saved = json.loads((session.plugin_dir / "config.json").read_text(encoding="utf-8"))
        check(
            "save_plugin_config through the plugin hook",
            saved.get("rerank_shadow_log") == decision_log,
            {k: saved[k] for k in ("rerank_shadow_log", "rerank_api_key", "rerank_api") if k in saved},
        )
    except Exception as exc:
        check("save_plugin_config through the plugin hook", False, repr(exc))

    # ---- a real agent (agent_init runs: the history opens with the greeting) and store ----
    import initialize
    from agent import AgentContext, LoopData, UserMessage

    config = initialize.initialize_agent()
    context = AgentContext(config=config)
    agent = context.agent0
    RESULTS["agent"] = {"profile": config.profile, "knowledge_subdirs": config.knowledge_subdirs}
    db = await Memory.get(agent)  # the real preload of the knowledge/ folder included
    all_docs = db.db.get_all_docs()
    RESULTS["store"] = {
        "subdir": db.memory_subdir,
        "knowledge_docs": sum(1 for d in all_docs.values() if d.metadata.get("knowledge_source")),
        "total_before": len(all_docs),
    }
    await hs.fill_store(db, knowledge=True)
    RESULTS["store"]["total"] = len(db.db.get_all_docs())

    agent.hist_add_user_message(UserMessage(message=hs.QUESTION))
    loop_data = LoopData(user_message=agent.last_user_message)
    loop_data.iteration = 0
    agent.loop_data = loop_data
    memory_settings = plugins.get_plugin_config("_memory", agent)
    RESULTS["memory_config"] = {k: v for k, v in memory_settings.items() if k.startswith("memory_recall")}

    # The host's own query and unwrapped result, built as its recall extension builds them,
    # so the report shows what the plugin changed.
    history = agent.history.output_text()[-memory_settings["memory_recall_history_len"] :]
    host_query = loop_data.user_message.output_text() + "\n\n" + history
    threshold = memory_settings["memory_recall_similarity_threshold"]
    host_memories = await original(
        db,
        query=host_query,
        limit=memory_settings["memory_recall_memories_max_search"],
        threshold=threshold,
        filter=hs.RECALL_FILTER,
    )
    host_solutions = await original(
        db,
        query=host_query,
        limit=memory_settings["memory_recall_solutions_max_search"],
        threshold=threshold,
        filter="area == 'solutions'",
    )
    RESULTS["host_query_head"] = host_query[:300]
    RESULTS["host_only"] = {
        "memories": [hs.short(d) for d in host_memories],
        "solutions": [hs.short(d) for d in host_solutions],
    }

    # ---- recall through the host's extension point (_45, _46, the real _50, _91) ----
    from usr.plugins.a0_reranker.helpers.recall import deadlines
    from usr.plugins.a0_reranker.helpers.report.stats import STATS

    # Spy on the deadline: it proves the wrapper read the host's SEARCH_TIMEOUT from the
    # recall module it was called from and saw _46's start stamp inside the recall task.
    seen = []
    real_deadline = deadlines._recall_deadline

    def spy(host_timeout, post_filter):
        stamped = deadlines._host_recall_started.get() is not None
        seen.append({"host_timeout": host_timeout, "post_filter": post_filter, "host_start_stamped": stamped})
        return real_deadline(host_timeout, post_filter)

    n_logs = len(context.log.logs)
    deadlines._recall_deadline = spy
    try:
        await extension.call_extensions_async("message_loop_prompts_after", agent, loop_data=loop_data)
    finally:
        deadlines._recall_deadline = real_deadline
    check(
        "recall deadline: host SEARCH_TIMEOUT read from the real module, _46 stamp seen by the recall task",
        bool(seen) and seen[0]["host_timeout"] == 30 and seen[0]["host_start_stamped"],
        seen,
    )
    recall_items = [item for item in context.log.logs[n_logs:] if item.type == "util"]
    output = recall_items[0].output() if recall_items else {}
    kvps = output.get("kvps") or {}
    RESULTS["recall_log_item"] = {"heading": output.get("heading"), "kvps": kvps}
    check("recall log item carries the plugin's chat line (kvp 'reranker')", "reranker" in kvps, kvps.get("reranker"))
    first = hs.prompt_lines(kvps)[:5]
    check("answering memory (port 3000 on atlas) reaches the prompt", any("port 3000" in x for x in first), first[:3])
    check("memories extra placed in loop_data.extras_persistent", "memories" in loop_data.extras_persistent)
    # by each knowledge memory's opening words: the prompt may render the memory differently
    knowledge_first = any(text[:30] in first[0] for text in hs.STORE["knowledge"]) if first else False
    check("a knowledge-file memory is not first", not knowledge_first)
    RESULTS["stats_after_recall"] = STATS.snapshot()

    try:
        recall_cls = hs.recall_class(agent)
    except StopIteration:
        recall_cls = None
        check("found real RecallMemories via the extension loader", False)
    if recall_cls is not None:
        kvps2, _, _ = await hs.recall(agent, recall_cls)
        check("direct RecallMemories.search_memories: plugin acted", "reranker" in kvps2, kvps2.get("reranker"))
        RESULTS["direct_recall_memories"] = hs.prompt_lines(kvps2)[:5]
        RESULTS["direct_recall_solutions"] = hs.prompt_lines(kvps2, "solutions")[:3]

    log_path = session.root / decision_log
    lines = log_path.read_text(encoding="utf-8").splitlines() if log_path.exists() else []
    check("decision log written (rerank_shadow_log)", len(lines) >= 2, f"{len(lines)} lines")
    if lines:
        RESULTS["decision_log_first"] = json.loads(lines[0])

    # ---- memory_load, the host's tool, as the LLM calls it (strings, then numbers) ----
    tool = agent.get_tool(
        name="memory_load",
        method=None,
        args={"query": "grafana port", "limit": "5", "threshold": "0.6"},
        message="",
        loop_data=loop_data,
    )
    RESULTS["memory_load_tool_class"] = f"{type(tool).__module__}.{type(tool).__name__}"
    try:
        calls_before = STATS.snapshot()
        response = await tool.execute(**tool.args)
        check("memory_load tool ran", True, response.message[:200])
        host_loaded = await original(db, query="grafana port", limit=5, threshold=0.6, filter="")
        RESULTS["memory_load_host_only"] = [hs.short(d) for d in host_loaded]
        RESULTS["memory_load_answer_head"] = response.message[:600]
        RESULTS["memory_load_stats"] = {"before": calls_before, "after": STATS.snapshot()}
    except Exception:
        check("memory_load tool ran", False, traceback.format_exc())
    try:
        tool = agent.get_tool(name="memory_load", method=None, args={}, message="", loop_data=loop_data)
        response = await tool.execute(query="grafana", limit=3, threshold=0.7, filter="area=='main'")
        check("memory_load with filter and int args", True, response.message[:160])
    except Exception:
        check("memory_load with filter and int args", False, traceback.format_exc())

    # ---- callers off the allow-list get the host's own result, object for object ----
    query, threshold, flt = "grafana dashboard", 0.7, "area == 'main'"
    expected = await original(db, query=query, limit=100, threshold=threshold, filter=flt)

    async def _find_similar_memories():  # shaped like the host's memory consolidation caller
        return await db.search_similarity_threshold(query=query, limit=100, threshold=threshold, filter=flt)

    got = await _find_similar_memories()
    check(
        "other caller (consolidation-like) gets the host's own result object-for-object",
        len(got) == len(expected) and all(a is b for a, b in zip(got, expected)),
        f"{len(got)} docs",
    )
    before = STATS.snapshot()
    removed = await db.delete_documents_by_query(query, threshold, flt)
    check(
        "delete_documents_by_query removed exactly the host's own result",
        [d.metadata["id"] for d in removed] == [d.metadata["id"] for d in expected],
        {"removed": len(removed), "expected": len(expected)},
    )
    check("delete/other callers not counted as reranked searches", before == STATS.snapshot())

    # ---- toggled off: the host's own recall ----
    plugins.toggle_plugin(hs.PLUGIN, False)
    if recall_cls is not None:
        kvps3, _, _ = await hs.recall(agent, recall_cls)
        check("plugin disabled: recall untouched (no 'reranker' kvp)", "reranker" not in kvps3, kvps3.get("reranker"))
    plugins.toggle_plugin(hs.PLUGIN, True)

    await check_api_handlers(defaults)

    # ---- the plugin's own tool, found by the host's get_tool ----
    try:
        status_tool = agent.get_tool(name="reranker_status", method=None, args={}, message="", loop_data=loop_data)
        response = await status_tool.execute()
        check("reranker_status tool ran", type(status_tool).__name__ != "Unknown", response.message[:300])
    except Exception:
        check("reranker_status tool ran", False, traceback.format_exc()[-1500:])

    plugins.call_plugin_hook(hs.PLUGIN, "uninstall")
    check("uninstall hook restored the original method", Memory.__dict__["search_similarity_threshold"] is original)


async def check_api_handlers(defaults: dict) -> None:
    """The handlers called as the host's ApiHandler.process; check_api_routes.py goes through the route."""
    from flask import request

    unreachable = dict(defaults, rerank_endpoint="http://127.0.0.1:9", rerank_timeout=2.0)
    cases = (
        ("status.py", [{}]),
        ("test_connection.py", [{"config": dict(defaults)}, {"config": unreachable}, {}, {"config": "garbage"}]),
        ("settings_fields.py", [{}]),
        ("settings_check.py", [{"config": dict(defaults)}, {"config": dict(defaults, rerank_endpoint="ftp://x")}, {}]),
    )
    for file_name, payloads in cases:
        try:
            handler = hs.plugin_api_handler(session, file_name[:-3])
            for payload in payloads:
                path = f"/api/plugins/{hs.PLUGIN}/{file_name[:-3]}"
                with handler.app.test_request_context(path, method="POST", json=payload):
                    answer = await handler.process(payload, request)
                check(f"api {file_name} {json.dumps(payload)[:60]}", isinstance(answer, dict), json.dumps(answer)[:400])
        except Exception:
            check(f"api {file_name}", False, traceback.format_exc()[-1500:])


if __name__ == "__main__":
    session.run(main, __file__)
