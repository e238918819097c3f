"""Agent Zero's utility model as the judge, played by a real small model: SmolLM2-135M-Instruct
under llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (tests/real/llama_server.py),
called through LiteLLM the way the host calls its utility model (the stand-in host's
LiteLLM wrapper, non-streaming, the host's default kwargs).

What a real model shows that a scripted one cannot: its real answers through the reader,
its real speed against the probe and the recall's time, calls cut short while the server
keeps working on them, and that every way it falls short ends in exactly the fused order.
The model's quality is not asserted (a 135M model judges poorly); what recall does with
whatever it answers is.
If .venv-llama is missing these tests fail; A0RR_REAL_SERVERS=skip skips them instead.
"""

import os
import threading
import time

import httpx
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its cost map

from tests.real.llama_server import ALIAS, LlamaProcess, missing_environment  # noqa: E402
from tests.host.judges import contents, is_probe, recall  # noqa: E402
from tests.host.litellm_calls import litellm_logging_dropped, litellm_utility_model  # noqa: E402,F401
from tests.host.recall import enabled_store, fused_order, set_plugin  # noqa: E402


@pytest.fixture(autouse=True)
def _litellm_logging(litellm_logging_dropped):  # noqa: F811 (the fixture, by name)
    """Every test here calls LiteLLM: its logging worker is dropped (tests/host/litellm_calls.py)."""


pytestmark = pytest.mark.real_server


@pytest.fixture(scope="module")
def model_server(tmp_path_factory):
    why = missing_environment()
    if why is not None:
        if os.environ.get("A0RR_REAL_SERVERS") == "skip":
            pytest.skip(f"{why} (A0RR_REAL_SERVERS=skip)")
        pytest.fail(
            f"the real-model lane cannot run: {why}; bash tests/run.sh builds it "
            "(set A0RR_REAL_SERVERS=skip to leave the lane out)",
            pytrace=False,
        )
    with LlamaProcess(tmp_path_factory.mktemp("llama")) as server:
        yield server


class Counted:
    """The host's LiteLLM utility call to the real model, counting what it is asked."""

    def __init__(self, api_base: str):
        self.call = litellm_utility_model(api_base, stream=False, model=ALIAS)
        self.asked: list[str] = []
        self.answers: list[str] = []

    async def __call__(self, system: str, message: str) -> str:
        self.asked.append(message)
        answer = await self.call(system, message)
        self.answers.append(answer)
        return answer

    @property
    def probes(self) -> int:
        return sum(1 for m in self.asked if is_probe(m))

    @property
    def recalls(self) -> int:
        return len(self.asked) - self.probes


def use(host, agent, model) -> None:
    from agent import Agent

    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, model)


def judged_by_the_real_model(host, model_server, **config):
    """A store, the fused order it gives without a judge, and the real model (counted) as its
    agent's utility model and the plugin's judge."""
    agent, _ = enabled_store(host)
    expected = fused_order(host, agent)
    model = Counted(model_server.api_base)
    use(host, agent, model)
    set_plugin(host, rerank_api="utility", **config)
    return agent, expected, model


def verdict_of(host, agent):
    """(passed verdict or None, kept failure or None) for the agent's current settings."""
    probing = host.import_plugin("helpers.scoring.probing")
    scorers = host.import_plugin("helpers.scoring.scorers")
    settings = host.import_plugin("helpers.settings_cache").load_settings(None, agent)
    with host.import_plugin("helpers.scoring.calling_agent").asking(agent):
        choice = scorers.choose(settings)
        return probing.cached(choice), probing.kept_failure(choice)


def test_the_real_model_is_probed_once_and_recall_is_exactly_fused_unless_it_passed(host, model_server):
    agent, expected, model = judged_by_the_real_model(host, model_server, rerank_timeout=12.0)
    first, second = recall(host, agent), recall(host, agent)
    assert first["error"] is None and second["error"] is None
    assert model.probes == 3  # three trials, once for these settings, whatever the verdict
    passed, kept = verdict_of(host, agent)
    assert (passed is None) != (kept is None)
    if kept is not None:  # misranks or too slow: never asked on the recall path, exactly the fused order
        assert kept.verdict in ("misranks", "too_slow"), kept
        assert model.recalls == 0
        assert contents(first) == expected and contents(second) == expected
    else:  # it passed: at most one call per recall, the prompt as long as fusion's
        assert passed.latency_s is not None and model.recalls <= 2
        assert [len(part) for part in contents(first)] == [len(part) for part in expected]


def test_the_reader_takes_every_real_answer_as_a_list_of_shown_numbers_or_refuses_it(host, model_server):
    judge = host.import_plugin("helpers.scoring.judge")
    errors = host.import_plugin("helpers.errors")
    call = litellm_utility_model(model_server.api_base, stream=False, model=ALIAS)
    memories = [f"memory {i}: the user keeps notes on grafana port {3000 + i} on atlas" for i in range(6)]
    prompt = judge.build("which port does grafana use on atlas", memories, 3000, 240)
    read = []
    for _ in range(3):
        answer = host.run(call(prompt.system, prompt.message))
        assert isinstance(answer, str)
        try:
            listed = judge.read_answer(answer, prompt.shown)
        except errors.MalformedResponse:
            read.append(None)
            continue
        assert all(isinstance(n, int) and 0 <= n < prompt.shown for n in listed) and len(set(listed)) == len(listed)
        read.append(listed)
    assert len(read) == 3


def _hold_the_server(server, seconds_of_work: int) -> threading.Thread:
    """A long completion in flight, as the host's own utility call (or a call a client gave up
    on) keeps a one-slot local server busy: what is asked meanwhile waits behind it."""

    def work():
        httpx.post(
            server.api_base + "/chat/completions",
            timeout=300,
            json={
                "model": ALIAS,
                "max_tokens": seconds_of_work * 40,
                "temperature": 0,
                "messages": [{"role": "user", "content": "Write a long story about a lighthouse keeper. " * 40}],
            },
        )

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    time.sleep(1.0)  # let it reach the server first (not a timing assert: the order of arrival)
    return thread


def test_a_real_model_that_cannot_answer_in_time_is_kept_out_and_the_server_still_answers(host, model_server):
    agent, expected, model = judged_by_the_real_model(host, model_server, rerank_timeout=0.5)
    busy = _hold_the_server(model_server, 10)
    try:
        first = recall(host, agent)  # the probe's trials wait behind the long call: cut short at 0.5 s
    finally:
        busy.join(timeout=300)
    assert contents(first) == expected
    passed, kept = verdict_of(host, agent)
    assert passed is None and kept is not None and kept.verdict == "too_slow", kept
    assert "no answer within" in str(kept) and "rerank_timeout 0.5 s" in str(kept)
    asked = len(model.asked)
    for _ in range(2):
        assert contents(recall(host, agent)) == expected  # kept out: nothing asked, exactly the fused order
    assert len(model.asked) == asked
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert "too slow for recall" in line and "faster utility model" in line
    # the calls cut short did not wedge the server: the host's own utility call still answers
    answer = host.run(
        litellm_utility_model(model_server.api_base, stream=False, model=ALIAS)("Answer in one word.", "Say hello.")
    )
    assert isinstance(answer, str) and answer.strip()


def test_test_connection_asks_the_real_model_and_says_its_verdict_in_words(host, model_server):
    host.set_config(
        {"utility_model": {"provider": "openai", "name": ALIAS, "api_base": model_server.api_base, "api_key": "none"}},
        plugin="_model_config",
    )
    response = host.run(
        host.call_api(
            "plugins/a0_reranker/test_connection", {"config": {"rerank_api": "utility", "rerank_timeout": 12}}
        )
    )
    report = response.get_json()["report"]
    assert report["verdict"] in ("ok", "weak", "misranks", "too_slow"), report
    assert report["model"] == f"openai/{ALIAS}" and f"Agent Zero's utility model (openai/{ALIAS})" in report["reason"]
    assert any("model settings (openai/" in n for n in report["notes"])
