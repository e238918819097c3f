"""What Agent Zero's utility model as the judge (rerank_api: utility) costs a recall.

    python -m bench.judge_cost             # about a minute; writes bench/results/judge_cost.json

Through the stand-in Agent Zero: 60 memories and 10 solutions, every one read by recall
(threshold 0), a whole recall (the memories and the solutions search). The utility model is
a simulated judge (bench/relevance_judges.py) that answers after 1 s or 3 s, as a hosted
or local LLM might. Rows: the recall with the judge against the same recall with fusion
alone (added seconds and the ratio), and the prompt it is sent (characters / 4 as tokens,
system + message) per search and per recall, at the default budgets. The score cache is off,
so every recall asks again (with it on, a repeated question costs nothing).
"""

from __future__ import annotations

import statistics
import tempfile
import time

from bench.common import Row, report

LATENCIES = (1.0, 3.0)
REPEATS = 3


class _Recorded:
    """A judge that records what it is sent (one entry per utility call)."""

    def __init__(self, judge):
        self.judge, self.sent = judge, []

    def __call__(self, system: str, message: str):
        self.sent.append(len(system) + len(message))
        return self.judge(system, message)


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
            rows = _measure(host)
        finally:
            host.close()
    return rows


def _measure(host) -> list[Row]:
    from agent import Agent

    from bench.relevance_judges import perfect
    from tests.host.recall import enabled_store, memory_texts, set_plugin

    agent, _memory = enabled_store(host)
    texts = memory_texts()
    label = lambda query, document: "grafana" in document  # noqa: E731  (a judge of some accuracy; its accuracy is not measured here)

    def timed(rounds: int) -> float:
        return statistics.median(host.run(_recall_ms(host, agent)) for _ in range(rounds))

    set_plugin(host, rerank_api="auto")
    timed(1)  # warm
    fusion_ms = timed(REPEATS)
    rows: list[Row] = []
    for latency in LATENCIES:
        judge = _Recorded(perfect(label, texts, latency=latency))
        agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, judge)
        set_plugin(host, rerank_api="utility", rerank_timeout=latency + 5)
        timed(1)  # the probe, once per utility model
        judge.sent.clear()
        judged_ms = timed(REPEATS)
        added = (judged_ms - fusion_ms) / 1000
        rows.append(Row("judge", f"recall with a {latency:g} s utility-model judge vs fusion alone", round(judged_ms, 1), round(fusion_ms, 1),
                        round(judged_ms / fusion_ms, 1), note=f"adds {added:.1f} s a recall (two searches, each one utility call)"))
        if latency == LATENCIES[0]:
            per_call = statistics.median(judge.sent) / 4
            per_recall = sum(judge.sent) / REPEATS / 4
            rows.append(Row("judge", "prompt tokens per search (chars/4, system + message, default budgets)", round(per_call), None, None,
                            note="value in tokens, not ms"))
            rows.append(Row("judge", "prompt tokens per recall (memories + solutions search)", round(per_recall), None, None,
                            note=f"value in tokens, not ms; {len(judge.sent) // REPEATS} utility calls a recall"))
    return rows


def main() -> list[Row]:
    return report("judge_cost", measure())


if __name__ == "__main__":
    main()
