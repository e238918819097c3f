"""rerank_private_only covers Agent Zero's utility model as the judge: memory text goes to it
only when its endpoint (the api_base of Agent Zero's model settings; none = its provider's
hosted service) is on loopback or a private network, checked like a reranker's endpoint.
Else it is refused with a clear reason, in the recall's chat line, Test connection and the
status tool, and the recall keeps the fused order."""

import pytest

from tests.host.judges import Judge, use_utility_model
from tests.host.recall import HISTORY, QUESTION, enabled_store, fused_order, set_plugin

REFUSED = "refused by the privacy guard: Agent Zero's utility model"
HOSTED = {"provider": "openai", "name": "gpt-4.1-mini"}  # no api_base: OpenAI's own service
PUBLIC = {"provider": "other", "name": "judge", "api_base": "http://8.8.8.8:8000/v1"}
LOCAL = {"provider": "other", "name": "judge", "api_base": "http://127.0.0.1:11434/v1"}


def utility_model_settings(host, section: dict) -> None:
    host.set_config({"utility_model": section}, plugin="_model_config")


def recall_line(agent) -> str:
    return next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]


@pytest.mark.parametrize("section", [HOSTED, PUBLIC], ids=["hosted, no api_base", "public api_base"])
def test_under_private_only_a_utility_model_that_is_not_private_is_never_sent_memories(host, section):
    agent, memory = enabled_store(host)
    expected = fused_order(host, agent)
    judge = Judge(lambda memories: "[0]")
    use_utility_model(agent, judge)
    utility_model_settings(host, section)
    set_plugin(host, rerank_api="utility", rerank_private_only=True)
    stats = host.import_plugin("helpers.report.stats").STATS
    stats.forget()
    result = host.run(host.recall(agent, QUESTION, HISTORY))
    assert result["error"] is None
    assert judge.calls == []  # before: the judge was asked, memory text went to the hosted model
    got = ([d.page_content for d in result["memories"]], [d.page_content for d in result["solutions"]])
    assert got == expected  # the fused order
    assert list(stats.snapshot()["unavailable_reasons"]) == ["Refused"]
    assert "the privacy guard refused Agent Zero's utility model" in recall_line(agent)


def test_under_private_only_a_utility_model_on_loopback_judges(host):
    agent, memory = enabled_store(host)
    judge = Judge(lambda memories: f"[{memories[-1][0]}]")
    use_utility_model(agent, judge)
    utility_model_settings(host, LOCAL)
    set_plugin(host, rerank_api="utility", rerank_private_only=True)
    stats = host.import_plugin("helpers.report.stats").STATS
    stats.forget()
    result = host.run(host.recall(agent, QUESTION, HISTORY))
    assert result["error"] is None and judge.recall_calls
    totals = stats.snapshot()["totals"]
    # one judge call per recall: it listed one memory, so one search was reordered by it and
    # the other had nothing listed (the fused order); neither was refused
    assert totals.get("reranked") == 1 and not totals.get("reranker_unavailable"), totals


def test_test_connection_names_the_refusal_and_asks_nobody(host):
    from agent import Agent

    agent = host.agent()
    asked = []
    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, lambda system, message: asked.append(message) or "[2]")
    utility_model_settings(host, HOSTED)
    response = host.run(
        host.call_api(
            "plugins/a0_reranker/test_connection",
            {"config": {"rerank_api": "utility", "rerank_private_only": True}, "context": agent.context.id},
        )
    )
    report = response.get_json()["report"]
    assert asked == []
    assert report["ok"] is False and report["verdict"] == "refused", report
    assert report["reason"] == (
        f"{REFUSED} (openai/gpt-4.1-mini), which has no api_base and so runs at its provider's "
        "hosted service, is not on loopback or a private network (setting 'rerank_private_only')"
    )


def test_the_status_tool_says_why_the_judge_is_refused(host):
    agent, memory = enabled_store(host)
    host.call_hook("install")
    use_utility_model(agent, Judge(lambda memories: "[0]"))
    utility_model_settings(host, PUBLIC)
    set_plugin(host, rerank_api="utility", rerank_private_only=True)
    tool = agent.get_tool(name="reranker_status", method=None, args={"probe": True}, message="", loop_data=None)
    text = host.run(tool.execute(probe=True)).message
    assert f"{REFUSED} (other/judge) at 8.8.8.8 is not on loopback or a private network" in text, text


def test_the_endpoint_is_read_as_the_hosts_model_building_applies_it(host):
    calling_agent = host.import_plugin("helpers.scoring.calling_agent")
    assert calling_agent.endpoint_of({"provider": "openai", "name": "x"}) == ""
    assert calling_agent.endpoint_of({"api_base": " http://10.0.0.5:8000/v1 "}) == "http://10.0.0.5:8000/v1"
    assert (
        calling_agent.endpoint_of({"api_base": "https://api.example.com", "kwargs": {"api_base": "http://127.0.0.1:1"}})
        == "http://127.0.0.1:1"
    )


def test_test_connection_without_a_chat_checks_the_model_settings_utility_model(host):
    pytest.importorskip("litellm")
    utility_model_settings(host, {**PUBLIC, "api_key": "sk-never-sent-0123456789"})
    response = host.run(
        host.call_api(
            "plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility", "rerank_private_only": True}}
        )
    )
    report = response.get_json()["report"]
    assert report["verdict"] == "refused", report
    assert report["reason"].startswith(f"{REFUSED} (other/judge) at 8.8.8.8 is not on loopback")
