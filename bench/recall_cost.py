"""What the plugin adds to a whole recall (the memories and the solutions search, as the
recall extension makes them), by store size and with the host's real embedder.

    python -m bench.recall_cost            # about 2 minutes; writes bench/results/recall_cost.json

Sizes: 1k to 100k stored memories with deterministic HashEmbeddings vectors (384 wide, like
all-MiniLM-L6-v2), three areas, the host's recall settings. Each row times the recall with
the plugin off (the host alone) and on, call by call in alternation, and compares what the
plugin adds with the host's own search time. ``threshold 0`` is the worst case for the
plugin: every memory passes the similarity floor, so each of its searches reads on until
its pool is full instead of stopping where relevance falls off.

The real-embedder row: the relevance corpus (191 memories) embedded with all-MiniLM-L6-v2
through the host's own wrapper, a corpus question with its conversation recorded the host's
way, an instant reranker server; the whole recall with the plugin against without.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import time
import types

import yaml

from bench.common import Row, ratio_row, report
from bench.paired import paired_ms
from bench.recall_rig import TOPICS, memory_texts

SIZES = (1_000, 10_000, 20_000, 50_000, 100_000)
AREAS = ("main",) * 6 + ("fragments",) * 2 + ("solutions",) * 2


@contextlib.contextmanager
def _host():
    from tests.host.harness import host_root

    with tempfile.TemporaryDirectory(prefix="a0-bench-") as tmp:
        host = host_root(tmp)
        try:
            yield host
        finally:
            host.close()


def _memory_config(host, **overrides) -> None:
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config({**defaults, **overrides}, plugin="_memory")


async def _store(host, agent, n: int):
    """``n`` memories with hash vectors, added to FAISS directly (no per-document embedding
    call: the store's contents, not how they got there, is what a search pays for)."""
    from tests.host.embeddings import HashEmbeddings

    host.embeddings = HashEmbeddings(384)
    memory = await host.memory(agent)
    texts = memory_texts(n, chars=200)
    vectors = host.embeddings.embed_documents(texts)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    metadatas = [{"area": AREAS[i % len(AREAS)], "id": f"m{i}", "timestamp": stamp} for i in range(n)]
    memory.db.add_embeddings(list(zip(texts, vectors)), metadatas=metadatas, ids=[m["id"] for m in metadatas])
    return memory


def _conversation(i: int) -> tuple[str, list[tuple[str, str]]]:
    rng = random.Random(i)
    a, b = rng.choice(TOPICS), rng.choice(TOPICS)
    turns = [
        ("user", f"we set up {rng.choice(TOPICS)} on the home server last week"),
        (
            "ai",
            '{"thoughts": ["recap"], "headline": "Answering", "tool_name": "response", '
            '"tool_args": {"text": "Yes, with ' + rng.choice(TOPICS) + ' in front of it."}}',
        ),
    ]
    return f"which {a} settings did we use with {b} on the home server?", turns


def _no_fallback(recall_module) -> None:
    """A timing of the fallback path would flatter the plugin: refuse to report it."""
    stats = recall_module.STATS.snapshot()
    if stats["totals"].get("fallback") or stats["totals"].get("reranker_unavailable"):
        raise RuntimeError(f"the plugin fell back during the benchmark: {stats['last_error']}")


async def _pair(host, agent, repeats: int, recall_module) -> tuple[float, float]:
    """(median ms of a recall with the plugin, without), in alternation."""
    message, turns = _conversation(1)

    async def on():
        host.toggle(True)
        host.import_plugin("helpers.settings_cache").forget()
        result = await host.recall(agent, message, turns)
        assert result["error"] is None
        _no_fallback(recall_module)

    async def off():
        host.toggle(False)
        result = await host.recall(agent, message, turns)
        assert result["error"] is None

    return await paired_ms(on, off, repeats)


async def _host_search_ms(host, memory, repeats: int) -> float:
    """The host's own two recall searches (unwrapped), as the extension makes them."""
    from bench.common import median_ms

    Memory = type(memory)
    original = Memory.search_similarity_threshold.__wrapped__
    query = 'user: {"user_message": "which nginx settings did we use with docker?"}\n\n' + "history " * 200
    settings = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())

    async def both():
        await original(
            memory,
            query,
            settings["memory_recall_memories_max_search"],
            settings["memory_recall_similarity_threshold"],
            "area == 'main' or area == 'fragments'",
        )
        await original(
            memory,
            query,
            settings["memory_recall_solutions_max_search"],
            settings["memory_recall_similarity_threshold"],
            "area == 'solutions'",
        )

    return await median_ms(both, repeats)


async def by_size(repeats: int = 15) -> list[Row]:
    rows = []
    for n in SIZES:
        for threshold, label in ((None, "host threshold 0.7"), (0.0, "threshold 0, worst case")):
            with _host() as host:
                overrides = {} if threshold is None else {"memory_recall_similarity_threshold": threshold}
                _memory_config(host, **overrides)
                recall = host.import_plugin("helpers.recall.wrapper")
                assert recall.ensure_wrapped()
                agent = host.agent()
                memory = await _store(host, agent, n)
                host.set_config({})  # the shipped defaults: built-in fusion, no server
                on, off = await _pair(host, agent, repeats, recall)
                search = await _host_search_ms(host, memory, repeats)
                added = on - off  # negative: the plugin made the recall faster
                rows.append(
                    ratio_row(
                        "cost",
                        f"{n:,} memories, {label}: plugin's added time per recall vs the host's own searches",
                        added,
                        search,
                        "<= 2x",
                        2.0,
                        f"recall {off:.2f} ms without, {on:.2f} ms with",
                    )
                )
                print(
                    f"  {n:>7,} {label:24} host search {search:7.2f} ms  recall {off:7.2f} -> {on:7.2f} ms", flush=True
                )
    return rows


async def real_embedder(repeats: int = 10) -> list[Row]:
    from bench.relevance import _build_store, host_turns, minilm_path
    from bench.relevance_corpus import load
    from bench.remote_server import remote

    memories, questions = load()
    with _host() as host, remote("tei19", max_client_batch_size=1000, cheap_scorer=True) as srv:
        import models

        _memory_config(host)
        recall = host.import_plugin("helpers.recall.wrapper")
        vectors = host.import_plugin("helpers.recall.query_vectors")
        assert recall.ensure_wrapped()
        embeddings = models.LocalSentenceTransformerWrapper("huggingface", minilm_path(), device="cpu")
        # _build_store takes the store's embedder as ``.as_langchain``; unmemoised here, since
        # what the host and the plugin pay to embed is what this row measures.
        agent, _, _ = await _build_store(host, types.SimpleNamespace(as_langchain=embeddings), memories, None)
        rows = []
        for config, label in (
            ({}, "built-in fusion, no server"),
            ({"rerank_endpoint": srv.url, "rerank_cache": False}, "instant reranker server"),
        ):
            host.set_config(config)
            question = questions[0]
            turns = host_turns(question["history"])

            async def on(question=question, turns=turns):  # this question's, bound now
                host.toggle(True)
                vectors.MEMO.forget()  # a fresh recall: nothing embedded yet
                host.import_plugin("helpers.settings_cache").forget()
                assert (await host.recall(agent, question["message"], turns))["error"] is None
                _no_fallback(recall)

            async def off(question=question, turns=turns):
                host.toggle(False)
                assert (await host.recall(agent, question["message"], turns))["error"] is None

            ours, theirs = await paired_ms(on, off, repeats, warmup=2)
            rows.append(
                ratio_row(
                    "cost",
                    f"whole recall, all-MiniLM-L6-v2 embedder, {label}, vs the host alone",
                    ours,
                    theirs,
                    "<= 1.5x",
                    1.5,
                    "191 memories, a 3-7k character conversation",
                )
            )
        return rows


def measure() -> list[Row]:
    import asyncio

    return asyncio.run(real_embedder()) + asyncio.run(by_size())


def main() -> list[Row]:
    return report("recall_cost", measure())


if __name__ == "__main__":
    main()
