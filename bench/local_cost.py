"""What the in-process cross-encoder (``rerank_api: local``) costs a search on the CPU, with
the query the plugin builds for it.

    python -m bench.local_cost     # about two minutes; writes bench/results/local_cost.json

The real ms-marco-MiniLM-L-12-v2 (built by ``python -m tests.real.reranker_model``, which
``bash tests/run.sh`` runs) scores one pool of 60 memories of 300 characters through the
plugin's own local scorer (helpers/scoring/scorers/local.py), with the default settings. The
reranker's query is built as a search's plan stage builds it (texts.reranker_query): for a
new chat the message alone; for a chat that has gone on, the message and the newest
conversation that fits the scorer's budget (``query_chars``: 400 on the CPU), against the same
with rerank_max_query_chars (2,000), the budget every scorer had before. Medians of a few
calls each, the two in alternation; the row's ratio is ours over that baseline.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from bench.common import Row, report
from bench.recall_rig import memory_texts

POOL = 60
REPEATS = 3


def _long_chat() -> str:
    """A chat that has gone on: 40 turns of the user and the agent, plain text as the
    history's conversation reads it."""
    turns = []
    for i in range(40):
        turns.append(f"user: turn {i}: can you check the backup job on the home server and the grafana alerts?")
        turns.append(f"ai: turn {i}: the backup ran at 02:00 and grafana raised no alert since the restart.")
    return "\n".join(turns)


async def _ms(score, query: str, documents: list[str]) -> float:
    started = time.perf_counter()
    await score(query, documents)
    return (time.perf_counter() - started) * 1000


async def _rows() -> list[Row]:
    from tests.real import reranker_model

    from helpers.recall import texts
    from helpers.scoring.scorers import LOCAL, local
    from helpers.settings import Settings

    # The default settings but a timeout long enough to time the longer query to its end.
    settings = Settings.from_mapping(
        {"rerank_api": "local", "rerank_local_model": str(reranker_model.model_dir()), "rerank_timeout": 120}
    )
    documents = memory_texts(POOL, chars=300)
    message = "which grafana settings did we use with the backup job on the home server?"
    history = _long_chat()

    async def score(query: str, docs: list[str]) -> None:
        await local.score(settings, query, docs, timeout=120)

    await score(message, documents[:3])  # the load, and a first forward pass
    rows = []
    for chat, hist in (("a new chat", ""), ("a chat that has gone on", history)):
        ours_query = texts.reranker_query(message, hist, "", LOCAL.query_chars(settings))
        before_query = texts.reranker_query(message, hist, "", settings.max_query_chars)
        ours, before = [], []
        for _ in range(REPEATS):  # in alternation: a busy moment costs both alike
            ours.append(await _ms(score, ours_query, documents))
            before.append(await _ms(score, before_query, documents))
        rows.append(
            Row(
                "local",
                f"real L-12 on the CPU, {POOL} memories, {chat}: the query the plugin builds "
                f"({len(ours_query)} chars) vs rerank_max_query_chars ({len(before_query)} chars)",
                round(statistics.median(ours), 1),
                round(statistics.median(before), 1),
                round(statistics.median(ours) / statistics.median(before), 3),
                "",
                None,
                f"the default rerank_timeout: {Settings.from_mapping({}).timeout:g} s",
            )
        )
    return rows


def measure() -> list[Row]:
    from tests.real import reranker_model

    missing = reranker_model.missing_environment()
    if missing is not None:
        raise SystemExit(f"bench.local_cost needs the real cross-encoder: {missing}")
    return asyncio.run(_rows())


if __name__ == "__main__":
    report("local_cost", measure())
