"""The word index over the whole store (helpers/recall/lexical_index.py), on the stand-in
host's real LangChain FAISS store: it finds by words what the embedder ranks low, follows
the store through inserts, deletes and a consolidation's delete-then-insert, applies the
caller's filter, reads each memory only to its cut, and does its work off the event loop."""

import threading
from types import SimpleNamespace

import pytest
from langchain_core.documents import Document

FILLER = [f"Notes on the garden, week {n}: watered the tomatoes and weeded the beds." for n in range(40)]
NEEDLE = "Invoice QX-7741 from Brightline Ltd was paid by bank transfer."


def _index(host):
    return host.import_plugin("helpers.recall.lexical_index")


async def _store(host, texts, area="main"):
    agent = host.agent()
    memory = await host.memory(agent)
    ids = await host.insert(memory, texts, area=area)
    return memory, ids


def _texts(found):
    return [doc.page_content for doc, _ in found]


def test_a_rare_word_finds_its_memory_first_whatever_the_store_holds(host):
    async def main():
        memory, _ = await _store(host, FILLER + [NEEDLE])
        found = await _index(host).search(memory.db, "did we pay QX-7741?", 5, None)
        assert _texts(found)[0] == NEEDLE
        assert all(score > 0 for _, score in found)
        # What shares no word with the store finds nothing, and says so with an empty list.
        assert await _index(host).search(memory.db, "zebra quantum", 5, None) == []

    host.run(main())


def test_the_index_follows_inserts_deletes_and_a_consolidation(host):
    async def main():
        index = _index(host)
        memory, ids = await _store(host, FILLER)
        assert await index.search(memory.db, "QX-7741", 5, None) == []
        new_ids = await host.insert(memory, [NEEDLE])  # an insert: only the new id is read
        assert _texts(await index.search(memory.db, "QX-7741", 5, None)) == [NEEDLE]
        await memory.delete_documents_by_ids(new_ids)  # a delete rebuilds the id map
        assert await index.search(memory.db, "QX-7741", 5, None) == []
        # A consolidation: the old memory deleted, a merged one inserted.
        await memory.delete_documents_by_ids(ids[:1])
        await host.insert(memory, ["Merged: invoice QX-7741 and the garden notes."])
        found = _texts(await index.search(memory.db, "QX-7741 garden", 50, None))
        assert found[0].startswith("Merged:") and FILLER[0] not in found

    host.run(main())


def test_an_edited_memory_is_found_by_its_new_words_not_its_old(host):
    """Agent Zero edits a memory (the memory dashboard, a consolidation's UPDATE) with
    Memory.update_documents: deleted and added again under the same id, new text."""

    async def main():
        index = _index(host)
        memory, ids = await _store(host, FILLER + [NEEDLE])
        assert _texts(await index.search(memory.db, "QX-7741", 5, None)) == [NEEDLE]
        old = memory.db.docstore.search(ids[-1])
        edited = Document("Invoice ZR-0193 from Brightline Ltd is still open.", metadata=dict(old.metadata))
        await memory.update_documents([edited])
        assert await index.search(memory.db, "QX-7741", 5, None) == []
        assert _texts(await index.search(memory.db, "ZR-0193", 5, None)) == [edited.page_content]
        # Edited again: the other memories keep what they were indexed from.
        again = Document(
            "Notes on the pond: the koi were fed twice.", metadata=dict(memory.db.docstore.search(ids[0]).metadata)
        )
        await memory.update_documents([again])
        assert _texts(await index.search(memory.db, "koi", 5, None)) == [again.page_content]
        assert _texts(await index.search(memory.db, "ZR-0193", 5, None)) == [edited.page_content]

    host.run(main())


def test_the_callers_filter_applies_even_when_few_memories_pass_it(host):
    async def main():
        memory, _ = await _store(host, FILLER + [NEEDLE])
        await host.insert(memory, ["Solution: resend invoice QX-7741 with the PO number."], area="solutions")
        from plugins._memory.helpers.memory import Memory

        solutions = Memory._get_comparator("area == 'solutions'")
        assert _texts(await _index(host).search(memory.db, "QX-7741", 5, solutions)) == [
            "Solution: resend invoice QX-7741 with the PO number."
        ]
        main_only = Memory._get_comparator("area == 'main'")
        assert _texts(await _index(host).search(memory.db, "QX-7741", 5, main_only)) == [NEEDLE]

    host.run(main())


def test_each_memory_is_read_only_to_its_cut(host):
    index = _index(host)
    late = "x " * index.DOC_CHARS + "Kestrelwood"

    async def main():
        memory, _ = await _store(host, FILLER + [late, "Kestrelwood is the name of the cabin."])
        assert _texts(await index.search(memory.db, "Kestrelwood", 5, None)) == [
            "Kestrelwood is the name of the cabin."
        ]

    host.run(main())


def test_building_and_searching_run_off_the_event_loop(host, monkeypatch):
    index = _index(host)
    threads = []
    for name in ("catch_up", "scores"):
        real = getattr(index.StoreIndex, name)

        def spy(self, *args, _real=real, **kwargs):
            threads.append(threading.current_thread() is threading.main_thread())
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(index.StoreIndex, name, spy)

    async def main():
        memory, _ = await _store(host, FILLER + [NEEDLE])
        assert _texts(await index.search(memory.db, "QX-7741", 1, None)) == [NEEDLE]

    host.run(main())
    assert threads and not any(threads)


def _held_catch_up(index, monkeypatch, wait_s: float) -> threading.Event:
    """The index's catch-up held until the returned event is set; a recall waits ``wait_s``."""
    release = threading.Event()
    real = index.StoreIndex.catch_up

    def slow(self, *args):
        release.wait(30)
        return real(self, *args)

    monkeypatch.setattr(index.StoreIndex, "catch_up", slow)
    monkeypatch.setattr(index, "WAIT_S", wait_s)
    return release


def test_a_store_not_indexed_in_time_is_searched_without_words_until_it_is(host, monkeypatch):
    index = _index(host)
    release = _held_catch_up(index, monkeypatch, 0.05)

    async def main():
        memory, _ = await _store(host, FILLER + [NEEDLE])
        assert await index.search(memory.db, "QX-7741", 5, None) is None  # not ready: no list
        release.set()
        building = index._index_of(memory.db).building
        if building is not None:
            await building
        assert _texts(await index.search(memory.db, "QX-7741", 5, None)) == [NEEDLE]

    host.run(main())


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_text_searches_nothing(host, text):
    async def main():
        memory, _ = await _store(host, FILLER)
        assert await _index(host).search(memory.db, text, 5, None) == []

    host.run(main())


def test_many_deletes_pack_the_index_and_it_follows_the_store_after(host, monkeypatch):
    index = _index(host)
    monkeypatch.setattr(index, "_PACK_AT_LEAST", 1)

    async def main():
        memory, ids = await _store(host, FILLER + [NEEDLE])
        assert _texts(await index.search(memory.db, "QX-7741", 5, None)) == [NEEDLE]
        await memory.delete_documents_by_ids(ids[:30])  # more deleted than left: packed
        found = _texts(await index.search(memory.db, "garden tomatoes", 50, None))
        assert sorted(found) == sorted(FILLER[30:])
        assert index._index_of(memory.db).dead == 0
        assert _texts(await index.search(memory.db, "QX-7741", 5, None)) == [NEEDLE]
        await host.insert(memory, ["Kestrelwood is the name of the cabin."])  # slots after the packing
        assert _texts(await index.search(memory.db, "Kestrelwood", 5, None)) == [
            "Kestrelwood is the name of the cabin."
        ]

    host.run(main())


def test_the_stored_order_follows_the_store_through_inserts_deletes_packing_and_an_edit(host, monkeypatch):
    """Where each memory sits in the order the store holds them (what fusion.word_led reads to
    tell one episode from another): the order they were stored in, whatever was deleted
    between them; an edited memory was stored again, last."""
    index = _index(host)
    monkeypatch.setattr(index, "_PACK_AT_LEAST", 1)

    async def main():
        memory, ids = await _store(host, FILLER)
        more = await host.insert(memory, [NEEDLE, "Kestrelwood is the name of the cabin."])

        async def order():
            at = await index.stored_order(memory.db, [*ids, *more, "not-a-memory"])
            return sorted(at, key=at.get)

        assert await order() == [*ids, *more]
        await memory.delete_documents_by_ids(ids[5:30])  # more deleted than left: packed
        assert index._index_of(memory.db).dead == 0
        assert await order() == [*ids[:5], *ids[30:], *more]
        edited = Document(
            "Notes on the pond: the koi were fed.", metadata=dict(memory.db.docstore.search(ids[0]).metadata)
        )
        await memory.update_documents([edited])
        assert await order() == [*ids[1:5], *ids[30:], *more, ids[0]]
        assert await index.stored_order(memory.db, []) == {}

    host.run(main())


def test_a_filter_few_memories_pass_is_read_deep_enough(host):
    async def main():
        loud = [f"Invoice QX-7741 reminder {n}: invoice QX-7741 is due, invoice QX-7741." for n in range(300)]
        memory, _ = await _store(host, loud)
        await host.insert(
            memory,
            ["Solution: the garden invoice mentioned QX-7741 once, with a long story about the beds."],
            area="solutions",
        )
        from plugins._memory.helpers.memory import Memory

        solutions = Memory._get_comparator("area == 'solutions'")
        found = await _index(host).search(memory.db, "invoice QX-7741", 3, solutions)
        assert [text.startswith("Solution:") for text in _texts(found)] == [True]

    host.run(main())


def test_the_postings_add_nothing_for_the_garbage_collector_to_track(host):
    """A full collection stops the host's loop; an index of 100k memories must not make one
    longer or trigger one (tens of thousands of tracked objects per build did)."""
    import gc

    async def main():
        memory, _ = await _store(host, [f"note {n}: unique word w{n}x" for n in range(50)])
        assert await _index(host).search(memory.db, "w7x", 1, None)
        postings = _index(host)._index_of(memory.db).postings
        assert len(postings) > 50 and not any(gc.is_tracked(p) for p in postings.values())

    host.run(main())


def test_ties_go_newest_stored_first_across_the_cut_and_as_the_filter_reads_deeper(host):
    async def main():
        same = "Invoice QX-7741 noted."
        memory, ids = await _store(host, [same] * 150)
        solution_ids = await host.insert(memory, [same] * 3, area="solutions")
        newest_first = (ids + solution_ids)[::-1]
        found = await _index(host).search(memory.db, "QX-7741", 3, None)
        assert [doc.metadata["id"] for doc, _ in found] == newest_first[:3]
        found = await _index(host).search(memory.db, "QX-7741", 70, None)  # past the cut of 64
        assert [doc.metadata["id"] for doc, _ in found] == newest_first[:70]
        from plugins._memory.helpers.memory import Memory

        main_area = Memory._get_comparator("area == 'main'")
        found = await _index(host).search(memory.db, "QX-7741", 5, main_area)  # reads deeper
        assert [doc.metadata["id"] for doc, _ in found] == ids[::-1][:5]

    host.run(main())


def test_ties_follow_the_stored_order_whatever_ids_the_host_draws(host, monkeypatch):
    """The real host draws its ids at random: which of two memories the words cannot tell
    apart comes first must not depend on them (the bench and the host would differ)."""
    from helpers import guids

    same = ["Invoice QX-7741 noted by Ann.", "Invoice QX-7741 noted by Bob.", "Invoice QX-7741 noted by Cy."]

    async def order_with(ids_drawn):
        drawn = iter(ids_drawn)
        monkeypatch.setattr(guids, "generate_id", lambda length=8: next(drawn))
        memory, _ = await _store(host, same)
        return _texts(await _index(host).search(memory.db, "QX-7741 invoice noted", 3, None))

    async def main():
        ascending = await order_with(["a1", "b2", "c3"])
        descending = await order_with(["z9", "y8", "x7"])
        assert ascending == descending == same[::-1]

    host.run(main())


def test_an_edited_memory_ties_as_the_newest(host):
    async def main():
        same = "Invoice QX-7741 noted."
        memory, ids = await _store(host, [same] * 3)
        assert await _index(host).search(memory.db, "QX-7741", 1, None)
        from langchain_core.documents import Document

        # Agent Zero edits a memory by deleting it and adding it back under its id.
        edited = Document(page_content="Invoice QX-7741 noted!", metadata={"id": ids[0], "area": "main"})
        await memory.update_documents([edited])
        found = await _index(host).search(memory.db, "QX-7741", 3, None)
        assert [doc.metadata["id"] for doc, _ in found] == [ids[0], ids[2], ids[1]]

    host.run(main())


def test_only_the_search_that_started_a_long_build_waits_for_it(host, monkeypatch):
    index = _index(host)
    release = _held_catch_up(index, monkeypatch, 60.0)

    async def main():
        import asyncio

        memory, _ = await _store(host, FILLER + [NEEDLE])
        first = asyncio.ensure_future(index.search(memory.db, "QX-7741", 5, None))
        await asyncio.sleep(0)  # the first search starts the build and waits for it
        building = index._index_of(memory.db)
        building.building_since -= 60.0  # as if its wait had run out long ago
        # A later search during the same build does not wait again (it would wait 60 s).
        assert await asyncio.wait_for(index.search(memory.db, "QX-7741", 5, None), 10) is None
        release.set()
        await first

    host.run(main())


def test_agent_zeros_knowledge_follows_the_users_memories_in_the_word_list(host):
    """Every store holds Agent Zero's knowledge chunks: long, and full of the words of any
    question about setting something up. Where the word list ranked one first, the word
    picks and a store whose words lead spent the prompt's places on what goes last in it
    anyway, and the store's tally read the chunk's coverage as the best word match's. A
    message that names Agent Zero keeps them where they rank, as the prompt does (the
    pipeline decides both: pipeline.about_agent_zero)."""
    users = "Grafana: port 3000."
    chunk = "Configuring the docker container: the web port, the docker proxy port, the SSH port. " * 4
    question = "which docker proxy port does grafana use?"

    async def main():
        store_search, texts = (
            host.import_plugin("helpers.recall.store_search"),
            host.import_plugin("helpers.recall.texts"),
        )
        memory = await host.memory(host.agent())
        await host.insert(memory, [*FILLER, users], area="main")
        await host.insert(memory, [chunk], area="main", knowledge_source=True, source_file="installation.md")
        depths = {texts.HOST: 5, texts.MESSAGE: 5, texts.LEXICAL: 5}

        pipeline = host.import_plugin("helpers.recall.pipeline")

        async def words(message):
            searches = texts.Searches(host=message, message=message)
            about = pipeline.about_agent_zero(SimpleNamespace(call=SimpleNamespace(message=message)))
            found = await store_search.search(
                memory, searches, depths, 0.0, 5, 0.0, "", message, knowledge_last=not about
            )
            return found.lists[texts.LEXICAL], found.best_word_coverage

        assert _texts(await _index(host).search(memory.db, question, 5, None)) == [chunk, users]  # by words alone
        listed, coverage = await words(question)
        assert _texts(listed) == [users, chunk]
        index = await _index(host).ready(memory.db)
        assert coverage == index.coverage(question, listed[0][0]) < index.coverage(question, listed[1][0])
        listed, _ = await words("which docker proxy port does Agent Zero use?")
        assert _texts(listed) == [chunk, users]

    host.run(main())
