"""What the word index over the whole store (helpers/recall/lexical_index.py) and the
calibration of a reranker (helpers/scoring/calibration.py) cost.

    python -m bench.lexical_cost           # about 3 minutes; writes bench/results/lexical_cost.json

Index rows, at 1k, 10k and 100k memories of the recall cost rows (bench/recall_cost.py: hash
vectors, 200 characters of 20 topic words each, so a topic word is in about three memories
of four, the worst case for a posting list): the first build of the index in its worker
thread; its catch-up after the host inserted 10 memories, and after it deleted one (FAISS
rebuilds its id map: every id compared); one lexical search of a recall's message.

Stall rows: the longest gap between turns of a ticker coroutine on the loop (bench/loop_stall.py)
during a whole recall through the recall extension while the index of the store is built
from nothing (the recall waits for it up to ``WAIT_S``, then goes on without it) and until
that build is done, against the same recall with the index ready.

Calibration rows: the 12 calibration questions through the plugin's own scorer (the path a
recall takes once a reranker has passed its probe), against an instant loopback reranker
and one taking 50 ms per request; calls and seconds, as the status report states them. And
the embedder's own score on the set (all-MiniLM-L6-v2), which a recall's calibration also
pays once per embedder.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from bench.common import Row, report
from bench.loop_stall import GC_PAUSES, worst_gap_ms
from bench.recall_cost import _conversation, _host, _memory_config, _no_fallback, _store
from bench.recall_rig import memory_texts

SIZES = (1_000, 10_000, 100_000)
STALL_ADDED_MS = 150.0  # issue 23: no feature stalls the loop by more than this


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _info(name: str, ms: float, note: str = "") -> Row:
    return Row("lexical", name, round(ms, 3), None, None, "", None, note)


async def _caught_up_ms(index_module, db) -> float:
    started = time.perf_counter()
    assert await index_module.ready(db) is not None
    return _ms(started)


async def index_rows(host, memory, n: int) -> list[Row]:
    from plugins._memory.helpers.memory import Memory

    index = host.import_plugin("helpers.recall.lexical_index")
    index.WAIT_S = 3_600.0  # time the whole build, not the recall's wait
    db = memory.db
    builds = []
    for _ in range(1 if n >= 100_000 else 3):
        index.forget()
        builds.append(await _caught_up_ms(index, db))
    inserts, deletes = [], []
    embed = host.embeddings.embed_documents
    for round_ in range(10):
        texts = [f"added {round_}-{i}: " + t for i, t in enumerate(memory_texts(10, chars=200))]
        ids = [f"new-{round_}-{i}" for i in range(10)]
        db.add_embeddings(list(zip(texts, embed(texts))), metadatas=[{"area": "main", "id": i} for i in ids], ids=ids)
        inserts.append(await _caught_up_ms(index, db))
        if round_ < 5:
            db.delete([ids[0]])  # LangChain's FAISS rebuilds index_to_docstore_id
            deletes.append(await _caught_up_ms(index, db))
    message, _ = _conversation(1)
    store_search = host.import_plugin("helpers.recall.store_search")
    condition = "area == 'solutions'"
    solutions = store_search.remembering_comparator(Memory._get_comparator(condition), condition)  # as a recall asks
    searches = []
    for _ in range(10):
        started = time.perf_counter()
        assert await index.search(db, message, 40, solutions)
        searches.append(_ms(started))
    index.WAIT_S = 1.0
    label = f"{n:,} memories"
    return [
        _info(
            f"{label}: first build of the word index (worker thread)",
            statistics.median(builds),
            f"median of {len(builds)}",
        ),
        _info(f"{label}: catch-up after an insert of 10 memories", statistics.median(inserts), "median of 10"),
        _info(f"{label}: catch-up after a delete (the id map rebuilt)", statistics.median(deletes), "median of 5"),
        _info(
            f"{label}: one lexical search of a recall message, 40 deep, solutions filter",
            statistics.median(searches),
            "median of 10",
        ),
    ]


async def stall_rows(host, agent, n: int, windows: int = 5) -> list[Row]:
    """Each window is one recall (and, while the index is built, the build to its end); the
    row is the median of the windows' worst gaps, so one scheduler hiccup of a shared
    machine does not make the row, and the longest of them is in the note."""
    index = host.import_plugin("helpers.recall.lexical_index")
    recall = host.import_plugin("helpers.recall.wrapper")
    message, turns = _conversation(1)
    host.toggle(True)
    host.import_plugin("helpers.settings_cache").forget()

    async def one():
        result = await host.recall(agent, message, turns)
        assert result["error"] is None
        _no_fallback(recall)

    async def while_built():
        started = time.perf_counter()
        await one()
        for ix in list(index._indexes.values()):  # the build the recall started, to its end
            if ix.building is not None:
                await ix.building
        builds.append(_ms(started))

    await one()
    ready, built, builds, gcs = [], [], [], []
    for _ in range(windows):
        assert all(ix.current(db.index_to_docstore_id) for db, ix in index._indexes.items())
        ready.append(await worst_gap_ms(one, 1))
        index.forget()  # before the window: freeing a 100k index is the bench's doing, not a recall's
        built.append(await worst_gap_ms(while_built, 1))
        gcs.append(max(GC_PAUSES, default=0.0))
    worst, baseline = statistics.median(built), statistics.median(ready)
    note = (
        f"median of {windows} windows (longest {max(built):.1f} ms; index ready: {max(ready):.1f} ms); "
        f"recall and build {statistics.median(builds):.0f} ms; longest garbage collection {max(gcs):.1f} ms"
    )
    return [
        Row(
            "stall",
            f"{n:,} memories: whole recall while the word index is built, and until it is",
            round(worst, 3),
            round(baseline, 3),
            None,
            f"<= +{STALL_ADDED_MS:g} ms",
            worst - baseline <= STALL_ADDED_MS,
            note,
        )
    ]


async def store_rows(sizes=SIZES) -> list[Row]:
    rows = []
    for n in sizes:
        with _host() as host:
            _memory_config(host)
            assert host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
            agent = host.agent()
            memory = await _store(host, agent, n)
            host.set_config({})  # the shipped defaults: built-in fusion, no server
            rows += await index_rows(host, memory, n)
            rows += await stall_rows(host, agent, n)
            for row in rows[-5:]:
                print(f"  [{row.section}] {row.name}: {row.value_ms:.1f} ms", flush=True)
    return rows


async def calibration_rows(repeats: int = 5) -> list[Row]:
    from bench.remote_server import remote
    from helpers.deadline import Deadline
    from helpers.scoring import calibration, probing, score, scorers
    from helpers.settings import Settings

    rows = []
    for latency, label in ((0.0, "instant loopback reranker"), (0.05, "reranker taking 50 ms per request")):
        with remote("tei19", cheap_scorer=True, latency=latency) as srv:
            settings = Settings.from_mapping(
                {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_cache": False}
            )
            probing.forget()
            await probing.resolve(scorers.choose(settings), Deadline.after(10))
            results = []
            for _ in range(repeats + 1):  # the first also builds the loop's HTTP client
                calibration.forget()
                trust = await score.earned_say(scorers.choose(settings), Deadline.after(10))
                assert trust.say != calibration.UNMEASURED, trust.reason
                results.append(trust)
            results = results[1:]
            seconds = statistics.median(t.seconds for t in results)
            rows.append(
                Row(
                    "calibration",
                    f"the calibration of a reranker, once per reranker: {label}",
                    round(seconds * 1000, 3),
                    None,
                    None,
                    "",
                    None,
                    f"{results[0].calls} calls ({calibration.CONCURRENCY} at once), "
                    f"say '{results[0].say}'; median of {repeats}",
                )
            )
    rows.append(await embedder_row())
    return rows


async def embedder_row(repeats: int = 3) -> Row:
    """The other half of a calibration in a recall: Agent Zero's embedder's own score on the
    set (its 72 texts embedded once), measured once per embedder object."""
    from bench.relevance import minilm_path
    from helpers.scoring import calibration

    with _host():
        import models

        embeddings = models.LocalSentenceTransformerWrapper("huggingface", minilm_path(), device="cpu")
        await embeddings.aembed_documents(["the model loaded before the clock starts"])
        samples = []
        for _ in range(repeats):
            calibration.forget()
            started = time.perf_counter()
            await calibration.embedder_score(embeddings)
            samples.append(_ms(started))
    texts = sum(1 + len(item.candidates) for item in calibration.ITEMS)
    return Row(
        "calibration",
        "the embedder's own score on the calibration set, all-MiniLM-L6-v2 on the CPU, once per embedder",
        round(statistics.median(samples), 3),
        None,
        None,
        "",
        None,
        f"{texts} texts embedded; median of {repeats}",
    )


def measure() -> list[Row]:
    return asyncio.run(calibration_rows()) + asyncio.run(store_rows())


def main() -> list[Row]:
    return report("lexical_cost", measure())


if __name__ == "__main__":
    main()
