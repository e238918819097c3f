"""Agent Zero's utility model as the judge, a real one: the host's own call path (its model
settings, build_utility_model, LiteLLM) to an OpenAI-compatible server that serves a real
model. Run by run.sh when A0RR_UTILITY_API_BASE is set (e.g. llama-cpp-python's server on
127.0.0.1, http://127.0.0.1:PORT/v1) with A0RR_UTILITY_MODEL (the model name it serves).

What a user sees is checked, not how good the model is: the probe reaches the model and
grades its answers (a call that failed would be the plugin's or the host's fault, a verdict
on the answers is the model's), a recall answers with memories and says in its chat line
what the judge did, and the status tool names the utility model.

    python check_utility_model.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import traceback

import host_session as hs

session = hs.open_host()
check = session.check
API_BASE = os.environ.get("A0RR_UTILITY_API_BASE", "")
MODEL = os.environ.get("A0RR_UTILITY_MODEL", "")
TIMEOUT_S = float(os.environ.get("A0RR_UTILITY_TIMEOUT", "30"))  # a small model on a CPU
# Test connection's verdicts on the model's own answers (helpers/vocabulary/vocabulary.json);
# the others (unreachable, auth, model, timeout, error, ...) say the call did not get one.
ANSWERS_GRADED = ("ok", "weak", "misranks")


def use_the_server_as_utility_model() -> None:
    """The host's model settings, as its settings page saves them: the utility model is the
    server given (provider openai: any OpenAI-compatible server), with a placeholder key."""
    from helpers import plugins

    config = dict(plugins.get_default_plugin_config("_model_config") or {})
    config["utility_model"] = dict(config.get("utility_model") or {}, provider="openai", name=MODEL, api_base=API_BASE)
    plugins.save_plugin_config("_model_config", "", "", config)
    os.environ.setdefault("API_KEY_OPENAI", "none")  # the server asks for none; LiteLLM wants one


async def main():
    if not API_BASE or not MODEL:
        check("A0RR_UTILITY_API_BASE and A0RR_UTILITY_MODEL are set", False, {"api_base": API_BASE, "model": MODEL})
        return
    import initialize
    from agent import AgentContext, UserMessage
    from helpers import plugins
    from plugins._memory.helpers.memory import Memory

    use_the_server_as_utility_model()
    hs.enable_and_install_plugin()
    agent = AgentContext(config=initialize.initialize_agent()).agent0
    from plugins._model_config.helpers import model_config

    utility = model_config.get_utility_model_config(agent)
    check(
        "the host's utility model is the server given",
        utility.get("api_base") == API_BASE and utility.get("name") == MODEL,
        {k: utility.get(k) for k in ("provider", "name", "api_base")},
    )

    db = await Memory.get(agent)
    await hs.fill_store(db)
    agent.hist_add_user_message(UserMessage(message=hs.QUESTION))
    hs.save_config(rerank_api="utility", rerank_timeout=TIMEOUT_S)

    # Test connection with the chat's context: the probe asks the model through the host
    handler = hs.plugin_api_handler(session, "test_connection")
    form = dict(plugins.get_default_plugin_config(hs.PLUGIN), rerank_api="utility", rerank_timeout=TIMEOUT_S)
    started = time.monotonic()
    try:
        answer = await asyncio.wait_for(handler.process({"config": form, "context": agent.context.id}, None), 600)
    except Exception:
        answer = {"error": traceback.format_exc()[-1500:]}
    report = answer.get("report") or {}
    text = json.dumps(report)  # every word of the report
    check(
        "Test connection reaches the model and grades its answers (no failed call)",
        report.get("verdict") in ANSWERS_GRADED and "call failed" not in text,
        {
            "verdict": report.get("verdict"),
            "reason": report.get("reason"),
            "s": round(time.monotonic() - started, 1),
        },
    )

    # A recall: memories reach the prompt whatever the judge did, and the chat line says it
    recall_cls = hs.recall_class(agent)
    try:
        kvps, _, seconds = await asyncio.wait_for(hs.recall(agent, recall_cls), timeout=TIMEOUT_S + 60)
        line = str(kvps.get("reranker", ""))
        check(
            "a recall answers with memories and a chat line",
            bool(hs.prompt_lines(kvps)) and bool(line),
            {"line": line, "seconds": round(seconds, 1), "first": hs.prompt_lines(kvps)[:1]},
        )
        check("the chat line names no failed call", "failed the probe" not in line and "call failed" not in line, line)
    except Exception:
        check("a recall answers with memories and a chat line", False, traceback.format_exc()[-1500:])

    try:
        loop_data = hs.new_loop_data(agent)
        tool = agent.get_tool(name="reranker_status", method=None, args={}, message="", loop_data=loop_data)
        status = (await tool.execute()).message
        check("the status tool names the utility model", "utility" in status.lower(), status[:600])
    except Exception:
        check("the status tool names the utility model", False, traceback.format_exc()[-1500:])
    plugins.call_plugin_hook(hs.PLUGIN, "uninstall")


if __name__ == "__main__":
    session.run(main, __file__)
