"""Agent Zero's utility model as the judge (rerank_api: utility), through real recalls in the
stand-in host: the agent's utility model is a scripted judge that reads the plugin's own
prompt. A judge that works reorders the pool; every way of failing (garbage, a refusal,
prose without a list, an answer too late, an error, numbers it was never shown, no agent to
ask) ends in exactly the fused order, which is what rerank_api auto with no endpoint gives."""

import asyncio
import re

import pytest

from tests.host.judges import (
    Judge,
    SlowJudge,
    contents,
    is_ours,
    is_probe,
    judged,
    probe_answer,
    recall,
    shown_memories,
    use_utility_model,
)
from tests.host.recall import QUESTION, enabled_store, fused_order, set_memory_config, set_plugin


@pytest.fixture
def chat(host):
    agent, memory = enabled_store(host)
    return host, agent, memory


# --- a judge that works -------------------------------------------------------------------
def test_a_perfect_judge_brings_the_memory_it_names_from_deep_in_the_pool_to_the_top(chat):
    host, agent, _ = chat
    fused_memories, _ = fused_order(host, agent)
    seen = {}

    def pick(memories):
        deepest = last_memory(memories)  # the fused order put it lowest
        seen.setdefault("target", deepest[1])
        return f"[{deepest[0]}]"

    judge = Judge(pick)
    result, stats = judged(host, agent, judge)
    target = seen["target"]
    memories = [d.page_content for d in result["memories"]]
    assert target not in fused_memories
    assert target in memories[:2]  # merged with the fused order: at the better of its two ranks
    assert stats["totals"]["reranked"] == 1  # the solutions: the judge listed none of them, so the fused order stands
    assert len(judge.recall_calls) == 1  # one utility call per recall: the memories and the solutions in one prompt


def last_memory(shown):
    """The last of the memories search's pool in a prompt that shows the solutions after it."""
    return [m for m in shown if m[1].startswith("memory ")][-1]


def test_the_prompt_shows_the_message_the_newest_conversation_and_numbered_memories_within_the_budget(chat):
    host, agent, _ = chat
    judge = Judge(lambda memories: "[]")
    judged(host, agent, judge, rerank_judge_max_chars=1000, rerank_judge_doc_chars=60)
    system, message = judge.recall_calls[0]
    assert "JSON array" in system
    assert QUESTION in message and "lisbon timezone" in message  # the message and the newest conversation
    memories = shown_memories(message)
    line_chars = host.import_plugin("helpers.scoring.judge").line_chars
    assert [n for n, _ in memories] == list(range(len(memories)))  # numbered from 0, in pool order
    assert all(len(text) <= 60 for _, text in memories)
    # a hard cap, each memory's number and line break included: the next one would not fit
    spent = sum(line_chars(n, text) for n, text in memories)
    assert 1000 - line_chars(len(memories), "x" * 60) < spent <= 1000
    assert any(t.startswith("memory ") for _, t in memories) and any(t.startswith("solution ") for _, t in memories)


def test_a_noisy_judge_still_reorders_and_nothing_breaks(chat):
    host, agent, _ = chat
    fused_memories, _ = fused_order(host, agent)
    judge = Judge(lambda memories: str([n for n, _ in memories][::-3][:6]))  # every third from the bottom
    result, stats = judged(host, agent, judge)
    memories = [d.page_content for d in result["memories"]]
    assert memories != fused_memories and len(memories) == len(fused_memories)
    assert stats["totals"]["reranked"] == 2


def test_prose_and_code_fences_around_the_list_are_read(chat):
    host, agent, _ = chat
    fused_memories, _ = fused_order(host, agent)
    seen = {}

    def pick(memories):
        n, text = last_memory(memories)
        seen.setdefault("target", text)
        return f"Sure! The useful memories are:\n```json\n[{n}, 999, {n}]\n```\nHope that helps."

    result, stats = judged(
        host, agent, Judge(pick, probe=lambda m: f"<think>maybe [1, 2]?</think> Answer: {probe_answer(m)}")
    )
    assert seen["target"] in [d.page_content for d in result["memories"]][:2]
    assert seen["target"] not in fused_memories
    assert stats["totals"]["reranked"] == 1


# --- every failure: exactly the fused order -----------------------------------------------
def _raises(system, message):
    raise ConnectionError("provider unreachable at https://api.example.invalid key sk-secret-abcdef0123456789")


FAILURES = {
    "garbage": Judge(lambda memories: "lorem ipsum dolor sit amet"),
    "refusal": Judge(lambda memories: "I can't help with that."),
    "refuses the probe": Judge(lambda memories: "[0]", probe=lambda message: "I'm sorry, I can't help with that."),
    "garbage at the probe": Judge(lambda memories: "[0]", probe=lambda message: '{"useful": "yes"}'),
    "misranks the probe": Judge(lambda memories: "[0]", probe=lambda message: "[0, 1, 2]"),
    "numbers it was never shown": Judge(lambda memories: "[500, 501]"),
    "an error": _raises,
    "too slow": SlowJudge(2.0),
    "too slow after a good probe": None,  # built in the test: quick for the probe only
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_judge_that_fails_leaves_exactly_the_fused_order(chat, case):
    host, agent, _ = chat
    expected = fused_order(host, agent)
    model = FAILURES[case]
    if case == "too slow after a good probe":

        async def model(system, message):  # noqa: F811
            if not is_probe(message):
                await asyncio.sleep(2.0)
            return probe_answer(message) if is_probe(message) else "[0]"

    result, stats = judged(host, agent, model, rerank_timeout=0.5)
    assert contents(result) == expected
    assert stats["totals"].get("reranked", 0) == 0
    assert stats["totals"]["fused"] == 2
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert "Agent Zero's utility model" in line or "no agent" in line
    assert "sk-secret" not in line and "example.invalid" not in line


def test_with_no_agent_to_ask_the_judge_is_unavailable_and_the_public_api_keeps_the_callers_order(host):
    reranker = host.import_plugin("helpers.reranker")
    score = host.import_plugin("helpers.scoring.score")
    scorers = host.import_plugin("helpers.scoring.scorers")
    errors = host.import_plugin("helpers.errors")
    settings = reranker.load_settings({"rerank_api": "utility"})
    with pytest.raises(errors.RerankError) as raised:
        host.run(score.score_documents(scorers.choose(settings), "q", ["a", "b"]))
    assert "no agent to ask" in str(raised.value)
    assert host.run(reranker.arerank("q", ["a", "b"], config={"rerank_api": "utility"})) is None


def test_the_recall_line_names_the_judge_and_warns_when_the_hosts_post_filter_judges_too(chat):
    host, agent, _ = chat
    set_memory_config(host, memory_recall_similarity_threshold=0.0, memory_recall_post_filter=True)
    judge = Judge(
        lambda shown: str([0] + [n for n, text in shown if text.startswith("solution ")][:1])
    )  # a memory and a solution
    use_utility_model(agent, judge)
    set_plugin(host, rerank_api="utility")
    result = recall(host, agent)
    assert result["error"] is None
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert line.startswith("judged by Agent Zero's utility model; Agent Zero's memory post-filter is on too"), line
    assert re.search(r"memories: .*, judged in \d+\.\d s; solutions: .*, judged in the same call$", line), line
    assert "post-filter is on too" in line
    # the host's own post-filter asked the same model once more, with its own prompt
    assert len([m for _, m in judge.calls if not is_ours(m)]) == 1
    assert len(judge.recall_calls) == 1


def test_a_judge_that_earned_no_say_is_not_called_by_the_recalls_after_it(chat):
    """A judge that answers the probe but not the calibration questions earns no say: the
    recall that measured it paid for its call; the recalls after it make no utility call
    (not even the joined solutions search's), return the fused order and say why."""
    host, agent, _ = chat
    fused = contents(recall(host, agent))
    judge = Judge(lambda memories: "[3, 1]", calibrated=False)
    first, _ = judged(host, agent, judge)
    assert len(judge.recall_calls) == 1  # asked once, while its say was measured
    judge.calls.clear()
    later, stats = judged(host, agent, judge)
    assert judge.calls == []  # no utility call at all
    assert contents(later) == contents(first) == fused
    assert stats["totals"] == {"fused": 2}
    line = dict(agent.context.log.logs[-1].kvps).get("reranker", "") if agent.context.log.logs else ""
    assert "has no say" in line and "so recalls ask it no longer" in line, line


def test_a_second_identical_recall_is_answered_from_the_score_cache(chat):
    host, agent, _ = chat
    judge = Judge(lambda memories: "[3, 1]")
    use_utility_model(agent, judge)
    set_plugin(host, rerank_api="utility", rerank_cache=True)
    first = recall(host, agent)
    calls = len(judge.recall_calls)
    second = recall(host, agent)
    assert contents(first) == contents(second)
    assert calls == 1 and len(judge.recall_calls) == 1  # no new utility call


def test_the_breaker_counts_the_judges_failures_by_utility_model(chat):
    host, agent, _ = chat
    judge = Judge(lambda memories: "garbage")
    use_utility_model(agent, judge)
    set_plugin(host, rerank_api="utility", rerank_breaker_failures=2, rerank_breaker_cooldown=600)
    recall(host, agent)  # one call per recall: the solutions search shares the memories search's failure
    assert len(judge.recall_calls) == 1
    recall(host, agent)  # the second failure opens the breaker
    asked = len(judge.calls)
    recall(host, agent)
    assert len(judge.calls) == asked  # skipped while open: not asked again
    breaker = host.import_plugin("helpers.scoring.breaker").BREAKER.snapshot()
    assert any(name.endswith("|utility") and state["open_for_s"] for name, state in breaker.items()), breaker
