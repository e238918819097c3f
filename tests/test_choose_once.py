"""Every entry point picks the scorer once (scorers.for_settings, which scorers.choose calls)
and hands that Choice down: Test connection, the status tool with and without its probe,
the status API, warm-up at start, rerank() and a recall. A second pick could see other
settings or another asked agent than the first, and report on a scorer the call never used.
Driven through the stand-in host, counting the picks of the plugin's own module."""

import pytest

from tests.host.judges import Judge, use_utility_model
from tests.host.recall import HISTORY, QUESTION, enabled_store, set_plugin


@pytest.fixture
def picks(host, monkeypatch):
    """The scorers.for_settings calls made from here on, as the APIs they were made for."""
    scorers = host.import_plugin("helpers.scoring.scorers")
    pick, made = scorers.for_settings, []

    def counted(settings):
        made.append(settings.api)
        return pick(settings)

    monkeypatch.setattr(scorers, "for_settings", counted)
    return made


def _test_connection(host, form, context=None):
    body = {"config": form, **({"context": context} if context else {})}
    return host.run(host.call_api("plugins/a0_reranker/test_connection", body)).get_json()


def test_test_connection_picks_once_for_a_scorer_and_once_for_agent_zeros_utility_model(host, picks):
    answer = _test_connection(host, {"rerank_api": "lexical"})
    assert answer["ok"] and picks == ["lexical"]
    agent = host.agent()
    use_utility_model(agent, Judge(lambda memories: "[0]"))
    picks.clear()
    answer = _test_connection(host, {"rerank_api": "utility"}, agent.context.id)
    assert answer["report"]["verdict"] == "ok" and picks == ["utility"]
    assert any("the open chat" in note for note in answer["report"]["notes"])  # asked the chat's model


def test_test_connection_with_a_bad_setting_names_it_and_picks_nothing(host, picks):
    answer = _test_connection(host, {"rerank_api": "nonsense"})
    assert not answer["ok"] and answer["report"]["setting"] == "rerank_api"
    assert picks == []


def test_the_status_tool_picks_once_with_its_probe_and_once_without(host, picks):
    agent, _ = enabled_store(host)
    set_plugin(host, rerank_api="lexical")
    tool = agent.get_tool(name="reranker_status", method=None, args={"probe": True}, message="", loop_data=None)
    probed = host.run(tool.execute(probe=True)).message
    assert "lexical" in probed.lower() and picks == ["lexical"]
    picks.clear()
    host.run(tool.execute(probe=False))
    assert picks == ["lexical"]


def test_the_status_api_warm_up_rerank_and_each_search_of_a_recall_pick_once_each(host, picks):
    agent, _ = enabled_store(host)
    set_plugin(host, rerank_api="lexical")
    reranker = host.import_plugin("helpers.reranker")
    assert host.run(host.call_api("plugins/a0_reranker/status", {})).get_json()["ok"]
    assert picks == ["lexical"]
    for call in (
        reranker.warm_up,
        lambda: host.run(reranker.arerank("grafana port", ["grafana listens on 3000", "the garden"])),
    ):
        picks.clear()
        call()
        assert picks == ["lexical"], call
    picks.clear()
    host.run(host.recall(agent, QUESTION, HISTORY))  # two calls of the host's search: memories, solutions
    assert picks == ["lexical", "lexical"]
