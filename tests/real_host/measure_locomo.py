"""LoCoMo's recall@5 measured inside a real Agent Zero, with its real default embedder: the
check that the bench's figures (bench/relevance.py --locomo, on the stand-in host) are what a
real host gives. Run by run.sh when A0RR_LOCOMO_DIR is set (docs/real-host.md).

    python measure_locomo.py AGENT_ZERO_COPY REPORT_DIR LOCOMO_DIR [CONVERSATIONS] [MODES]

CONVERSATIONS: comma-separated names (default: all ten); MODES: host (the plugin toggled off),
default (on, its default settings: no server), lexical (rerank_api: lexical); default all three.
Each store is built as the bench builds it: LoCoMo's observations (bench/locomo.py, the same
memories and questions), no knowledge files, inserted with the host's Memory.insert_documents
under the bench's seed, timestamps set to the sessions' dates, the plugin's word index built
before the first question; the score cache off. Each question is the first message of a new
chat (the real greeting, then the question), run through every message_loop_prompts_after
extension; what counts is the memories the host put into the prompt (the recall's log item).
Only ids and counts are written (report: measure_locomo.jsonl), never LoCoMo's text.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if len(sys.argv) < 4:
    sys.exit(f"usage: {sys.argv[0]} AGENT_ZERO_COPY REPORT_DIR LOCOMO_DIR [CONVERSATIONS] [MODES]")
LOCOMO_DIR = Path(sys.argv[3]).resolve()
NAMES = [n for n in (sys.argv[4] if len(sys.argv) > 4 else "").split(",") if n]
MODES = (sys.argv[5] if len(sys.argv) > 5 else "host,default,lexical").split(",")
HELD_OUT = ("30", "42", "44", "48", "50")  # bench/relevance.py's held-out conversations

# bench/locomo.py by file: the repository's root would shadow the host's own helpers/ package.
_spec = importlib.util.spec_from_file_location("a0rr_bench_locomo", REPO / "bench" / "locomo.py")
locomo = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = locomo
_spec.loader.exec_module(locomo)

sys.argv = sys.argv[:3]
import host_session as hs  # noqa: E402

session = hs.open_host()  # the working directory, the host importable, the stubs
RECALL_TASK = importlib.import_module(
    "plugins._memory.extensions.python.message_loop_prompts_after._50_recall_memories"
).DATA_NAME_TASK


async def build_store(Memory, agent, conversation):
    """A fresh store holding the conversation's observations, as the bench builds it."""
    from langchain_core.documents import Document

    Memory.index.clear()
    shutil.rmtree(session.root / "usr/memory/default", ignore_errors=True)
    db = await Memory.get(agent)
    random.seed(f"a0rr-bench:{conversation.memories[0]['id']}")  # bench/relevance.py's seed
    ids = await db.insert_documents(
        [Document(page_content=m["text"], metadata={"area": m["area"]}) for m in conversation.memories]
    )
    by_id = dict(zip(ids, conversation.memories))
    for doc in db.db.docstore._dict.values():
        memory = by_id.get(doc.metadata.get("id"))
        if memory:
            doc.metadata["timestamp"] = memory["timestamp"]
    db._save_db()
    from usr.plugins.a0_reranker.helpers.recall import lexical_index

    wait, lexical_index.WAIT_S = lexical_index.WAIT_S, 3600.0  # built before the first question
    try:
        assert await lexical_index.ready(db.db) is not None, "the word index was not built"
    finally:
        lexical_index.WAIT_S = wait


async def ask(config, question, text_to_ids) -> dict:
    """One question as a new chat's first message; which memories reached the prompt."""
    from agent import AgentContext, UserMessage
    from helpers import extension

    context = AgentContext(config=config)
    agent = context.agent0
    try:
        agent.hist_add_user_message(UserMessage(message=question["message"]))
        agent.loop_data = loop_data = hs.new_loop_data(agent)
        first_log = len(context.log.logs)
        started = time.monotonic()
        await extension.call_extensions_async("message_loop_prompts_after", agent, loop_data=loop_data)
        task = agent.get_data(RECALL_TASK)  # the recall runs as a task the extension starts
        if task is not None and not task.done():
            await task
        seconds = time.monotonic() - started
        items = context.log.logs[first_log:]
        recall = next((i for i in items if i.type == "util"), None)
        kvps = (recall.output().get("kvps") if recall else None) or {}
        shown = [text_to_ids.get(text, []) for text in hs.prompt_lines(kvps)][:5]
        hit = any(set(ids) & set(question["relevant"]) for ids in shown)
        problems = [i.type for i in items if i.type in ("warning", "error")]
        return {"hit": hit, "seconds": round(seconds, 4), "shown": shown, "problems": problems}
    finally:
        AgentContext.remove(context.id)


async def main():
    import initialize
    from helpers import extension, plugins
    from plugins._memory.helpers.memory import Memory

    hs.enable_and_install_plugin()
    extension.call_extensions_sync(
        "_functions/__main__/init_a0/start", None, data={"args": (), "kwargs": {}, "result": None, "exception": None}
    )
    config = initialize.initialize_agent()
    config.knowledge_subdirs = []  # the bench's LoCoMo stores hold no knowledge files
    conversations = [c for c in locomo.load(LOCOMO_DIR) if not NAMES or c.name in NAMES]
    session.reports.mkdir(parents=True, exist_ok=True)
    records = (session.reports / "measure_locomo.jsonl").open("w", encoding="utf-8")
    totals: dict[tuple[str, str], list[int]] = {}
    for conversation in conversations:
        from agent import AgentContext

        builder = AgentContext(config=config)
        await build_store(Memory, builder.agent0, conversation)
        AgentContext.remove(builder.id)
        text_to_ids: dict[str, list[str]] = {}
        for memory in conversation.memories:
            text_to_ids.setdefault(memory["text"], []).append(memory["id"])
        for mode in MODES:
            plugins.toggle_plugin(hs.PLUGIN, mode != "host")
            if mode != "host":
                hs.save_config(rerank_cache=False, **({"rerank_api": "lexical"} if mode == "lexical" else {}))
            hits, times, problems = 0, [], 0
            for question in conversation.questions:
                answer = await ask(config, question, text_to_ids)
                hits += answer["hit"]
                times.append(answer["seconds"])
                record = {"conversation": conversation.name, "mode": mode, "question": question["id"]}
                records.write(json.dumps(record | {"class": question["class"]} | answer) + "\n")
                problems += bool(answer["problems"])
            count = len(conversation.questions)
            session.check(
                f"conversation {conversation.name} {mode}: no recall logged a warning or error",
                not problems,
                problems or None,
            )
            times.sort()
            print(
                f"RECALL conversation {conversation.name} {mode}: {hits}/{count} = {hits / count:.3f}"
                f" (median {times[count // 2]:.2f} s a recall)",
                flush=True,
            )
            for group in ("all", "held-out" if conversation.name in HELD_OUT else "tuning"):
                total = totals.setdefault((mode, group), [0, 0])
                total[0] += hits
                total[1] += count
    records.close()
    for (mode, group), (hits, count) in sorted(totals.items()):
        print(f"RECALL {group} {mode}: {hits}/{count} = {hits / count:.3f}", flush=True)
    session.results["recall"] = {f"{group} {mode}": [hits, count] for (mode, group), (hits, count) in totals.items()}


session.run(main, __file__)
