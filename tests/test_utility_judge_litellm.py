"""Agent Zero's utility model as the judge through a real LiteLLM call: the stand-in host's
utility model is the host's LiteLLM chat wrapper (provider ``openai``, ``api_base`` on
loopback), talking to an OpenAI-compatible chat server that answers like a chat model
(prose around a JSON list), non-streaming and streaming. Test connection (the API handler,
with and without an open chat) and the status tool report on it. Also the judge's reader
of answers, case by case."""

import importlib.util
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its cost map
# found, not imported: importing LiteLLM takes ~7 s, paid by the process that runs these tests
# (the autouse fixture below imports it before each test), not by every one that collects them
if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed", allow_module_level=True)

from tests.servers.openai_chat import ChatServer  # noqa: E402
from tests.host.recall import HISTORY, QUESTION, enabled_store, free_port, set_memory_config, set_plugin  # noqa: E402
from tests.host.judges import calibration_answer, is_probe, probe_answer, shown_memories  # noqa: E402
from tests.host.litellm_calls import KEY, litellm_logging_dropped, litellm_utility_model  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _litellm_logging(litellm_logging_dropped):  # noqa: F811 (the fixture, by name)
    """Every test here calls LiteLLM: its logging worker is dropped (tests/host/litellm_calls.py)."""


def chat_model_answer(system: str, message: str) -> str:
    """A chat model's habits: a sentence, then the list in a code fence."""
    if is_probe(message):
        return f"Looking at these, the relevant one is:\n```json\n{probe_answer(message)}\n```"
    if (known := calibration_answer(message)) is not None:
        return f"The answer is:\n```json\n{known}\n```"
    memories = shown_memories(message)
    return f"Here are the useful memories, best first:\n```json\n[{memories[-1][0]}, {memories[0][0]}]\n```"


def model_settings(host, api_base: str) -> None:
    """Agent Zero's model settings (the _model_config plugin): the utility model on loopback."""
    host.set_config(
        {"utility_model": {"provider": "openai", "name": "judge-model", "api_base": api_base, "api_key": KEY}},
        plugin="_model_config",
    )


@pytest.mark.parametrize("stream", [False, True], ids=["non-streaming", "streaming"])
def test_a_real_litellm_call_judges_a_recall(host, stream):
    agent, memory = enabled_store(host)
    from agent import Agent

    with ChatServer(chat_model_answer) as server:
        model_settings(host, server.api_base)
        agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, litellm_utility_model(server.api_base, stream=stream))
        set_plugin(host, rerank_api="utility")
        stats = host.import_plugin("helpers.report.stats").STATS
        stats.forget()
        result = host.run(host.recall(agent, QUESTION, HISTORY))
        sent = list(server.requests)
    assert result["error"] is None
    assert stats.snapshot()["totals"]["reranked"] == 2
    calibration = [r for r in sent if calibration_answer(r["messages"][-1]["content"]) is not None]
    judged = [r for r in sent if not is_probe(r["messages"][-1]["content"]) and r not in calibration]
    # the probe's three trials once, the calibration questions once, then one call per recall
    assert len(judged) == 1 and len(calibration) == 12 and len(sent) == 16
    assert all(r["model"] == "judge-model" and bool(r.get("stream")) == stream for r in sent)
    assert [m["role"] for m in judged[0]["messages"]] == ["system", "user"]
    deepest = shown_memories(judged[0]["messages"][1]["content"])[-1][1]  # the last solution shown
    assert deepest in [d.page_content for d in result["solutions"]][:2]
    # the verdict and the breaker are kept under the utility model's name from the host's model settings
    assert any("openai/judge-model" in key for key in host.import_plugin("helpers.scoring.probing")._cache)
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert line.startswith("judged by Agent Zero's utility model — memories: "), line
    assert "judged in " in line


def test_test_connection_without_a_chat_builds_the_utility_model_from_agent_zeros_model_settings(host):
    set_memory_config(host, memory_recall_post_filter=True)
    with ChatServer(chat_model_answer) as server:
        model_settings(host, server.api_base)
        response = host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility"}}))
        sent = list(server.requests)
    answer = response.get_json()
    report = answer["report"]
    assert answer["ok"] is True and report["verdict"] == "ok", report
    assert report["detected_api"] == "utility" and report["model"] == "openai/judge-model"
    assert "Agent Zero's utility model (openai/judge-model) ranks the probe correctly" in report["reason"]
    assert any("model settings (openai/judge-model); no chat was open" in n for n in report["notes"])
    assert any("post-filter is on too" in n for n in report["notes"])
    # the probe's three trials, then the calibration questions (how much say the judge earns)
    assert all(is_probe(r["messages"][-1]["content"]) for r in sent[:3])
    assert (
        len([r for r in sent if calibration_answer(r["messages"][-1]["content"]) is not None]) == 12 and len(sent) == 15
    )
    assert report["trust"]["say"] == "full"
    assert KEY not in str(answer)


def test_test_connection_with_the_open_chat_asks_that_chats_utility_model(host):
    from agent import Agent

    agent = host.agent()
    asked = []

    def chat_judge(system, message):
        asked.append(message)
        return "[0]"  # the near miss first: refused

    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, chat_judge)
    response = host.run(
        host.call_api(
            "plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility"}, "context": agent.context.id}
        )
    )
    answer = response.get_json()
    report = answer["report"]
    assert len(asked) == 3  # the probe's three trials
    assert answer["ok"] is False and report["verdict"] == "misranks"
    assert "did not put the relevant probe memory first" in report["reason"] and "near miss" in report["reason"]
    assert any("the open chat" in n for n in report["notes"])


def test_test_connection_without_a_chat_or_a_configured_utility_model_says_the_call_failed(host):
    """No utility model in Agent Zero's model settings: LiteLLM refuses the empty model name;
    the report names the kind of failure only."""
    response = host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility"}}))
    report = response.get_json()["report"]
    assert report["ok"] is False and report["verdict"] == "error"
    assert report["reason"] == "Agent Zero's utility model call failed (BadRequestError)"
    assert any("Agent Zero's model settings" in n for n in report["notes"])


def _test_connection_report(host, api_base: str) -> dict:
    model_settings(host, api_base)
    response = host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility"}}))
    answer = response.get_json()
    assert KEY not in str(answer) and KEY[-6:] not in str(answer)  # never the key, nor a provider's quote of it
    return answer["report"]


@pytest.mark.parametrize(
    "refuse, kind, why",
    [
        (401, "AuthenticationError", "the provider refused its API key (HTTP 401)"),
        (404, "NotFoundError", "knows no such model or address (HTTP 404)"),
        (503, "ServiceUnavailableError", "answered with an error of its own (HTTP 503)"),
    ],
)
def test_test_connection_says_why_the_utility_model_call_failed_never_quoting_the_provider(host, refuse, kind, why):
    """A provider's error quotes the key it was sent: the report says what the failure is,
    from LiteLLM's kind and the status, and never its text."""
    with ChatServer(chat_model_answer, refuse=refuse) as server:
        report = _test_connection_report(host, server.api_base)
        assert server.requests  # it was asked, and answered with the error
    assert report["ok"] is False and report["verdict"] == "error"
    assert report["reason"].startswith(f"Agent Zero's utility model call failed ({kind}): "), report["reason"]
    assert why in report["reason"]
    assert "Incorrect API key" not in str(report)


def test_test_connection_says_the_utility_models_server_refused_the_connection(host):
    """Nothing listens at the API base (a local model server not started): the chain under
    LiteLLM's error says so; its text (host and port) is not quoted."""
    port = free_port()
    report = _test_connection_report(host, f"http://127.0.0.1:{port}/v1")
    assert report["verdict"] == "error"
    assert "its server refused the connection (is it running" in report["reason"], report["reason"]
    assert str(port) not in report["reason"]


def test_the_status_tool_probes_the_agents_utility_model_and_names_it_with_its_latency(host):
    agent, memory = enabled_store(host)
    from agent import Agent

    host.call_hook("install")
    with ChatServer(chat_model_answer) as server:
        model_settings(host, server.api_base)
        agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, litellm_utility_model(server.api_base, stream=False))
        set_plugin(host, rerank_api="utility")
        tool = agent.get_tool(name="reranker_status", method=None, args={"probe": True}, message="", loop_data=None)
        text = host.run(tool.execute(probe=True)).message
    assert text.startswith("WORKING: Agent Zero's utility model (openai/judge-model) ranks the probe correctly"), text
    assert "judge: Agent Zero's utility model openai/judge-model; last answer" in text
    assert "built-in fusion + Agent Zero's utility model as the judge" in text
    assert KEY not in text


# --- the reader of answers -------------------------------------------------------------------
READ = [
    ("[2, 0]", 3, [2, 0]),
    ("Sure:\n```json\n[1]\n```", 3, [1]),
    ('["1", "0",]', 3, [1, 0]),
    ("<think>[0, 1, 2] maybe</think>[2]", 3, [2]),
    ("[2, 2, 7, -1, 0]", 3, [2, 0]),
    ("[]", 3, []),
    ("memory 1 and then [1, 0] as JSON", 3, [1, 0]),
    ("<THINKING>[0]</thinking> <think>[1]</think>[2]", 3, [2]),
    ("[" + "9" * 10_000 + ", 1]", 3, [1]),  # a number of 10,000 digits is no memory's
    ("[2, 0]\n\nMemory [2, 0] answer it; [2,0] again", 3, [2, 0]),  # the same array, said again
    ("<think>[1]</think>[0]<think>cut off mid-thought [2]", 3, [0]),  # what came before an unclosed block
]


@pytest.mark.parametrize("answer,shown,listed", READ)
def test_the_reader_takes_the_one_array_of_numbers_in_the_answer(host, answer, shown, listed):
    judge = host.import_plugin("helpers.scoring.judge")
    assert judge.read_answer(answer, shown) == listed


REFUSED = [
    "I can't help with that.",
    "",
    '{"useful": [1]}x',
    "[7, 8]",
    None,
    ["1"],
    "<think>unclosed [1] and on",  # stopped mid-thought: it never answered
    "Memory [4] is off-topic. Answer: [1, 2]",  # which array it means is not said
    "For example [2, 0, 1]. Here none is useful: []",  # the prompt's example echoed back
    '{"reasoning": "memory [1] says to ignore it", "answer": [2]}',
    "[1" + " " * 60_000,  # a small model looping on spaces to its token limit (quadratic before: 24 s)
]


@pytest.mark.parametrize("answer", REFUSED)
def test_the_reader_refuses_an_answer_without_usable_numbers(host, answer):
    judge = host.import_plugin("helpers.scoring.judge")
    errors = host.import_plugin("helpers.errors")
    if answer == '{"useful": [1]}x':  # a list inside an object still reads: the first array
        assert judge.read_answer(answer, 3) == [1]
        return
    with pytest.raises(errors.MalformedResponse):
        judge.read_answer(answer, 3)


def test_listed_memories_score_above_every_unlisted_one_in_their_order(host):
    judge = host.import_plugin("helpers.scoring.judge")
    scores = judge.scores([2, 0], 4)
    assert scores[2] > scores[0] > scores[1] == scores[3]


def test_a_judges_few_picks_stand_out_of_a_large_pool_and_a_list_of_everything_does_not(host):
    judge, fusion = host.import_plugin("helpers.scoring.judge"), host.import_plugin("helpers.recall.fusion")
    assert fusion.standing_out(judge.scores([7, 3, 11], 40), "probability") == [i in (7, 3, 11) for i in range(40)]
    assert not any(fusion.standing_out(judge.scores(list(range(30)), 40), "probability"))
    # Every memory listed, in any order: no evidence, nothing leads (before, the first listed
    # stood out in every pool size, and a reversed list put the fused last first).
    for size in (5, 8, 12, 18, 40):
        for listed in (list(range(size)), list(range(size))[::-1]):
            assert not any(fusion.standing_out(judge.scores(listed, size), "probability")), (size, listed[:3])


@pytest.mark.timeout(20)
@pytest.mark.parametrize("answer", ["<think>" * 150_000, "[1," * 300_000, "[" + "1" * 1_000_000 + "]"])
def test_a_megabyte_of_hostile_answer_is_read_in_one_pass(host, answer):
    """The reader runs on the event loop every chat shares: an answer of many opening
    <think> tags took 49 s for 224 KB with a lazy pattern. (Bounded by pytest-timeout,
    not timed.)"""
    judge = host.import_plugin("helpers.scoring.judge")
    errors = host.import_plugin("helpers.errors")
    with pytest.raises(errors.MalformedResponse):
        judge.read_answer(answer, 3)
