"""What Agent Zero's utility model as the judge (rerank_api: utility) costs a recall.

    python -m bench.judge_cost             # a few minutes; writes bench/results/judge_cost.json

Through the stand-in Agent Zero: 60 memories and 10 solutions, every one read by recall
(threshold 0), a whole recall (the memories and the solutions search), the default budgets.

- A simulated judge (bench/relevance_judges.py) answering after 1 s or 3 s: the recall
  against fusion alone (added seconds and the ratio), utility calls per recall, and the
  prompt (characters / 4 as tokens, system + message) per recall.
- A judge that needs 10 s where rerank_timeout gives it 8 (a small model on a CPU): the first
  recall, which learns it, and the recalls after it against fusion alone.
- The real SmolLM2-135M-Instruct (llama-cpp-python on 127.0.0.1, one thread, through
  LiteLLM as the host calls it) when .venv-llama is built (bash tests/run.sh builds it): the
  prompt of one recall in the model's own tokens, the seconds it takes to answer it, and
  what the probe decided.

The score cache is off, so every recall asks again (with it on, a repeated question costs
nothing).
"""

from __future__ import annotations

import statistics
import tempfile
import time

from bench.common import Row, report

LATENCIES = (1.0, 3.0)
TOO_SLOW_S, TIMEOUT_S = 10.0, 8.0
REPEATS = 3
# Recalls that ask no judge take milliseconds, and a median of 3 moves by 2x from run to run.
FAST_REPEATS = 21


class _Recorded:
    """A judge that records what it is sent (one entry per utility call)."""

    def __init__(self, judge):
        self.judge, self.sent = judge, []

    def __call__(self, system: str, message: str):
        self.sent.append((system, message))
        return self.judge(system, message)

    def recall_prompts(self) -> list[tuple[str, str]]:
        from tests.host.judges import is_probe

        return [(s, m) for s, m in self.sent if not is_probe(m)]


async def _recall_ms(host, agent) -> float:
    from tests.host.recall import HISTORY, QUESTION

    started = time.perf_counter()
    result = await host.recall(agent, QUESTION, HISTORY)
    assert result["error"] is None
    return (time.perf_counter() - started) * 1000


def measure() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="a0-bench-judge-") as tmp:
        from tests.host.harness import host_root

        host = host_root(tmp)
        try:
            rows = _measure(host, tmp)
        finally:
            host.close()
    return rows


def _measure(host, tmp: str) -> list[Row]:
    from agent import Agent

    from bench.relevance_judges import perfect
    from tests.host.recall import enabled_store, memory_texts, set_plugin

    from bench.relevance_rerankers import calibration_labels
    from tests.servers.scoring import calibration_label

    agent, _memory = enabled_store(host)
    # A judge of some accuracy; its accuracy is not measured here. It knows the calibration
    # set's answers, so it earns a say and is asked (one with no say is not: pipeline.score).
    texts = memory_texts() + [t for _, _, candidates in calibration_labels() for _, t in candidates]
    label = lambda query, document: calibration_label(query, document) or "grafana" in document  # noqa: E731
    forget = host.import_plugin("helpers.reranker").reset_state

    def timed(rounds: int) -> float:
        return statistics.median(host.run(_recall_ms(host, agent)) for _ in range(rounds))

    set_plugin(host, rerank_api="auto")
    timed(1)  # warm
    fusion_ms = timed(FAST_REPEATS)
    rows: list[Row] = []
    prompt = None
    for latency in LATENCIES:
        judge = _Recorded(perfect(label, texts, latency=latency))
        agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, judge)
        set_plugin(host, rerank_api="utility", rerank_timeout=latency + 5)
        timed(1)  # the probe, once per utility model
        judge.sent.clear()
        judged_ms = timed(REPEATS)
        added = (judged_ms - fusion_ms) / 1000
        calls = len(judge.recall_prompts()) / REPEATS
        rows.append(
            Row(
                "judge",
                f"recall with a {latency:g} s utility-model judge vs fusion alone",
                round(judged_ms, 1),
                round(fusion_ms, 1),
                round(judged_ms / fusion_ms, 1),
                note=f"adds {added:.1f} s a recall ({calls:g} utility call a recall)",
            )
        )
        if latency == LATENCIES[0]:
            prompt = judge.recall_prompts()[-1]
            chars = sum(len(s) + len(m) for s, m in judge.recall_prompts()) / REPEATS
            rows.append(
                Row(
                    "judge",
                    "prompt tokens per recall (chars/4, system + message, memories + solutions in one call)",
                    round(chars / 4),
                    None,
                    None,
                    note=f"value in tokens, not ms; {calls:g} utility call a recall",
                )
            )
    rows += _too_slow_rows(host, agent, fusion_ms, forget)
    rows += _real_model_rows(host, agent, prompt, tmp, forget)
    return rows


def _too_slow_rows(host, agent, fusion_ms: float, forget) -> list[Row]:
    """A judge needing longer than rerank_timeout: the first recall learns it, the rest pay
    fusion's time."""
    from agent import Agent

    from tests.host.recall import set_plugin
    from tests.host.judges import SlowJudge

    forget()
    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, SlowJudge(TOO_SLOW_S))
    set_plugin(host, rerank_api="utility", rerank_timeout=TIMEOUT_S)
    first_ms = host.run(_recall_ms(host, agent))
    after_ms = statistics.median(host.run(_recall_ms(host, agent)) for _ in range(FAST_REPEATS))
    what = f"a judge needing {TOO_SLOW_S:g} s, rerank_timeout {TIMEOUT_S:g} s"
    return [
        Row(
            "judge",
            f"first recall with {what} (learns it is too slow) vs fusion alone",
            round(first_ms, 1),
            round(fusion_ms, 1),
            round(first_ms / fusion_ms, 1),
            note="the probe's three trials are cut at rerank_timeout; the verdict is kept",
        ),
        Row(
            "judge",
            f"later recalls with {what} vs fusion alone",
            round(after_ms, 1),
            round(fusion_ms, 1),
            round(after_ms / fusion_ms, 2),
            aim="within 1.5x of fusion alone",
            met=after_ms <= 1.5 * fusion_ms,
            note="not asked: the fused order, fusion's prompt",
        ),
    ]


def _real_model_rows(host, agent, prompt, tmp: str, forget) -> list[Row]:
    """SmolLM2-135M-Instruct, when .venv-llama is built: the recall's one prompt in its own
    tokens, its seconds to answer it, and the probe's verdict."""
    from pathlib import Path

    from tests.real.llama_server import ALIAS, N_THREADS, LlamaProcess, missing_environment

    why = missing_environment()
    if why is not None or prompt is None:
        return [
            Row(
                "judge",
                "real model (SmolLM2-135M, llama.cpp): skipped",
                0.0,
                None,
                None,
                note=f"{why}; bash tests/run.sh builds it",
            )
        ]
    from agent import Agent
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    from tests.host.recall import set_plugin
    from tests.host.litellm_calls import litellm_utility_model

    # LiteLLM's logging queue is replayed when each asyncio.run ends its loop: not measured here.
    GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = lambda async_coroutine: async_coroutine.close()
    rows = []
    with LlamaProcess(Path(tmp)) as server:
        call = litellm_utility_model(server.api_base, stream=False, model=ALIAS)
        system, message = prompt
        tokens = server.count_tokens(system + "\n" + message)
        host.run(call(system, message))  # warm: the model's first call loads its caches
        seconds = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            host.run(call(system, message))
            seconds.append(time.perf_counter() - started)
        answer_s = statistics.median(seconds)
        rows.append(
            Row(
                "judge",
                f"real SmolLM2-135M ({N_THREADS} thread): prompt tokens per recall (its tokenizer, one call)",
                tokens,
                None,
                None,
                note="value in tokens, not ms; memories + solutions in one prompt",
            )
        )
        rows.append(
            Row(
                "judge",
                f"real SmolLM2-135M ({N_THREADS} thread): seconds to answer one recall's prompt",
                round(answer_s * 1000, 1),
                None,
                None,
                note=f"{answer_s:.1f} s a recall, one call",
            )
        )
        forget()
        judge = _Recorded(call)
        agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, judge)
        set_plugin(host, rerank_api="utility", rerank_timeout=TIMEOUT_S)
        first_ms = host.run(_recall_ms(host, agent))
        report_ = host.import_plugin("helpers.status_report")
        status = report_.collect(agent)
        verdict = (status.judge.not_used if status.judge is not None else None) or "passed the probe"
        rows.append(
            Row(
                "judge",
                f"real SmolLM2-135M: first recall (probe, {ALIAS}, rerank_timeout {TIMEOUT_S:g} s)",
                round(first_ms, 1),
                None,
                None,
                note=f"verdict: {verdict[:160]}",
            )
        )
    return rows


def main() -> list[Row]:
    return report("judge_cost", measure())


if __name__ == "__main__":
    main()
