"""The candidate pool and the orders made from it.

The pool: searching the host's real LangChain FAISS store several texts at once must find
exactly what a brute-force read of the store finds (each text's nearest memories that pass
the filter and the floor, best first), reconstruct the host's own result object for object,
take one scan of the index for both searches of a recall, and give the same answer on the
nearest-neighbour path that stores of another kind take.

The orders: reciprocal-rank fusion by its formula; the combination keeps both lists' best
in the first slots (property-tested); the host's first is kept in the prompt.
"""

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.host.recall import FILLER, memory_texts

AREAS = ["main", "fragments", "solutions"]
FILTERS = ["", "area == 'main' or area == 'fragments'", "area == 'solutions'", "area == 'fragments'"]


class SpreadEmbeddings:
    """Unit vectors in 8 dimensions, a fixed random one per text: similarities spread over
    the whole range (the pool's floors all matter) and no two memories tie."""

    def __new__(cls):
        import hashlib

        import numpy as np
        from langchain_core.embeddings import Embeddings

        class _Spread(Embeddings):
            def _one(self, text):
                seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
                v = np.random.default_rng(seed).normal(size=8)
                return (v / np.linalg.norm(v)).tolist()

            def embed_documents(self, texts):
                return [self._one(t) for t in texts]

            def embed_query(self, text):
                return self._one(text)

        return _Spread()


async def _store(host, n=300):
    agent = host.agent()
    memory = await host.memory(agent, embeddings=SpreadEmbeddings())
    texts = memory_texts(n)
    for area in AREAS:
        await host.insert(memory, [t for i, t in enumerate(texts) if AREAS[i % 3] == area], area=area)
    return memory


def _brute_force(memory, text, pool_size, floor, filter_):
    """Every stored memory with its relevance, the host's way, read one by one."""
    db = memory.db
    relevance_of = db._select_relevance_score_fn()
    vector = memory.db.embedding_function.embed_query(text)
    comparator = type(memory)._get_comparator(filter_) if filter_ else None
    scored = []
    for position, doc_id in db.index_to_docstore_id.items():
        stored = db.index.reconstruct(position)
        relevance = relevance_of(float(sum(a * b for a, b in zip(vector, stored))))
        doc = db.docstore.search(doc_id)
        if relevance >= floor and (comparator is None or comparator(doc.metadata)):
            scored.append((relevance, position, doc))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [doc for _, _, doc in scored[:pool_size]]


EVERY_20 = {"host": 20, "message": 20, "followup": 20}


def _queries(rng, n):
    return [" ".join(rng.sample(FILLER, rng.randint(1, 5))) + f" on the home server {i}" for i in range(n)]


@pytest.mark.parametrize("path", ["range search", "range search, sorted prefix of 7", "nearest neighbours"])
def test_the_pool_is_what_a_brute_force_read_finds_and_the_host_result_is_the_hosts(host, monkeypatch, path):
    async def main():
        memory = await _store(host)
        store_search = host.import_plugin("helpers.recall.store_search")
        texts = host.import_plugin("helpers.recall.texts")
        if path == "nearest neighbours":
            monkeypatch.setattr(store_search, "_inner_product_floor", lambda *a: None)
        elif path.endswith("prefix of 7"):  # most rows need more than the prefix: read past it
            monkeypatch.setattr(store_search, "_SCAN_PREFIX", 7)
        original = type(memory).search_similarity_threshold  # not wrapped in this test
        rng = random.Random(3)
        checked = 0
        for text in _queries(rng, 12):
            for filter_ in FILTERS:
                floor, threshold, limit = (
                    rng.choice([0.0, 0.55, 0.6]),
                    rng.choice([0.0, 0.6, 0.7]),
                    rng.choice([3, 8, 12]),
                )
                # each role's list as deep as asked: the message deeper than the host's query
                depths = {"host": rng.choice([5, 10, 20]), "message": rng.choice([5, 20, 40])}
                searches = texts.Searches(host=text, message=text.split(" on ")[0])
                found = await store_search.search(
                    memory, searches, depths, min(floor, threshold), limit, threshold, filter_
                )
                for role, query in searches.texts().items():
                    want = _brute_force(memory, query, depths[role], min(floor, threshold), filter_)
                    assert [id(d) for d, _ in found.lists[role]] == [id(d) for d in want], (role, query, filter_)
                host_result = await original(memory, text, limit, threshold, filter_)
                assert [id(d) for d in found.host_result] == [id(d) for d in host_result], (
                    text,
                    filter_,
                    limit,
                    threshold,
                )
                checked += 1
        assert checked == 48

    asyncio.run(main())


def test_both_searches_of_a_recall_share_one_scan_of_the_index(host):
    async def main():
        memory = await _store(host)
        store_search = host.import_plugin("helpers.recall.store_search")
        texts = host.import_plugin("helpers.recall.texts")
        scans = []
        index = memory.db.index
        real = index.range_search
        index.range_search = lambda queries, radius: scans.append(len(queries)) or real(queries, radius)
        searches = texts.Searches(
            host="the host's long query about grafana", message="grafana", followup="grafana\n\nand docker"
        )
        await store_search.search(memory, searches, EVERY_20, 0.55, 12, 0.7, FILTERS[1])
        await store_search.search(memory, searches, EVERY_20, 0.55, 8, 0.7, FILTERS[2])
        assert scans == [3]  # three texts, one call, for both searches
        await host.insert(memory, ["a new memory about grafana"], area="main")  # the store changed
        await store_search.search(memory, searches, EVERY_20, 0.55, 8, 0.7, FILTERS[2])
        assert scans == [3, 3]

    asyncio.run(main())


def test_a_search_with_nothing_above_the_floor_and_an_empty_store(host):
    async def main():
        memory = await _store(host, n=30)
        store_search = host.import_plugin("helpers.recall.store_search")
        texts = host.import_plugin("helpers.recall.texts")
        found = await store_search.search(memory, texts.Searches(host="zzzz qqqq"), EVERY_20, 0.99, 5, 0.99, FILTERS[1])
        assert found.lists == {"host": []} and found.host_result == []
        empty = await host.memory(host.agent(), subdir="empty")
        found = await store_search.search(
            empty, texts.Searches(host="grafana", message="grafana port"), EVERY_20, 0.0, 5, 0.0, ""
        )
        assert found.lists == {"message": [], "host": []} and found.host_result == []

    asyncio.run(main())


# --- fusion ------------------------------------------------------------------------------
def test_rrf_by_its_formula():
    from helpers.recall.fusion import fuse

    fused = fuse([["a", "b", "c"], ["c", "a"], ["d"]], key=lambda x: x, k=60)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d"] == pytest.approx(1 / 61)
    assert [x for x, _ in fused] == ["a", "c", "b", "d"] or [x for x, _ in fused] == ["a", "c", "d", "b"]
    assert [x for x, _ in fuse([["x", "y"], ["y", "x"]], key=lambda x: x)] == ["x", "y"]  # a tie: first appearance


orders = st.lists(st.integers(0, 30), unique=True, max_size=25)


@settings(max_examples=300, deadline=None)
@given(fused=orders, reranked=orders, slots=st.integers(1, 8))
def test_the_first_slots_hold_the_best_of_both_lists(fused, reranked, slots):
    """Whatever the reranker says, its first ⌈slots/2⌉ and fusion's first ⌊slots/2⌋ are
    in the first ``slots`` places; nothing is lost or repeated."""
    from helpers.recall.fusion import combine

    out = combine(fused, reranked, key=lambda x: x)
    assert sorted(out) == sorted(set(fused) | set(reranked))
    top = set(out[:slots])
    half = slots // 2
    assert set(fused[:half]) <= top and set(reranked[:half]) <= top
    assert set(fused[: (slots + 1) // 2]) <= top or set(reranked[: (slots + 1) // 2]) <= top


def test_combine_by_the_better_of_two_ranks():
    from helpers.recall.fusion import combine

    # a: fused 0, reranked 3 -> 0; x: reranked 0, fused 2 -> 0; at best rank 0 the one whose
    # other rank is better (x: 2) goes first; then b (1, 1), ...
    # c (fused 3) and d (reranked 2) each have one rank: d's is the better.
    assert combine(["a", "b", "x", "c"], ["x", "b", "d", "a"], key=lambda v: v) == ["x", "a", "b", "d", "c"]
    assert combine([], ["r1", "r2"], key=lambda v: v) == ["r1", "r2"]
    assert combine(["f1"], [], key=lambda v: v) == ["f1"]


def test_a_pick_pushes_out_the_fused_memory_the_reranker_scored_lowest():
    from helpers.recall.fusion import combine, make_room

    key = lambda v: v  # noqa: E731
    fused = ["f1", "f2", "f3", "f4", "gold", "f6"]
    picks = ["p"]  # a standout pick from deep in the pool
    scores = {"f1": 0.30, "f2": 0.02, "f3": 0.25, "f4": 0.001, "gold": 0.20, "f6": 0.5, "p": 0.9}
    merged = combine(fused, picks, key)
    assert merged[:5] == ["p", "f1", "f2", "f3", "f4"]  # by place alone the fifth, gold, makes way
    out = make_room(merged, fused, picks, 5, scores, key)
    # f4, the one it thinks least of, makes way; the rest keep their places; f6 is not
    # among the fused order's first five, so its score does not bring it in
    assert out[:5] == ["p", "f1", "f2", "f3", "gold"]
    assert sorted(out) == sorted(merged)


def test_making_room_keeps_a_place_for_the_hosts_first_and_stands_without_scores():
    from helpers.recall.fusion import combine, keep_first, make_room

    key = lambda v: v  # noqa: E731
    fused = ["f1", "f2", "f3", "f4", "f5", "host"]
    picks = ["p"]
    scores = {"f1": 0.35, "f2": 0.4, "f3": 0.001, "f4": 0.3, "f5": 0.2, "host": 0.0, "p": 0.9}
    merged = combine(fused, picks, key)
    out = keep_first(make_room(merged, fused, picks, 5, scores, key, reserved="host"), "host", 5, key)
    # the pick and the host's first take two places; of the fused five, f3 and f5 (its lowest) make way
    assert set(out[:5]) == {"p", "host", "f1", "f2", "f4"}
    # the host's first among the picks needs no place of its own
    assert (
        make_room(merged, fused, picks, 5, scores, key, reserved="p")[:5]
        == make_room(merged, fused, picks, 5, scores, key)[:5]
    )
    # a fused memory the reranker did not read (the judge's budget): the merged order stands
    unread = {k: v for k, v in scores.items() if k != "f2"}
    assert make_room(merged, fused, picks, 5, unread, key) == merged
    # no picks, or room for all of them: nothing to choose
    assert make_room(fused, fused, [], 5, scores, key) == fused
    assert make_room(merged, fused, picks, 8, scores, key) == merged
    # a score that is not a number counts as the lowest
    odd = dict(scores, f1=float("nan"))
    assert "f1" not in make_room(merged, fused, picks, 5, odd, key)[:5]


@settings(max_examples=300, deadline=None)
@given(
    fused=orders,
    picks=orders,
    slots=st.integers(1, 8),
    values=st.lists(st.floats(-10, 10), min_size=12, max_size=12),
)
def test_making_room_loses_nothing_and_keeps_every_pick_combine_placed(fused, picks, slots, values):
    from helpers.recall.fusion import combine, make_room

    key = lambda v: v  # noqa: E731
    scores = {name: values[i % len(values)] for i, name in enumerate(sorted(set(fused) | set(picks)))}
    merged = combine(fused, picks, key)
    out = make_room(merged, fused, picks, slots, scores, key)
    assert sorted(out) == sorted(merged)
    placed = {item for item in merged[:slots] if item in set(picks)}
    assert placed <= set(out[:slots])


def test_keep_first_moves_the_hosts_first_into_the_last_slot_only_when_it_is_below():
    from helpers.recall.fusion import keep_first

    key = lambda v: v  # noqa: E731
    assert keep_first(list("abcdefg"), "f", 3, key) == list("abfcdeg")
    assert keep_first(list("abcdefg"), "b", 3, key) == list("abcdefg")
    assert keep_first(list("abc"), "z", 2, key) == list("abc")
    assert keep_first(list("abc"), None, 2, key) == list("abc")


def test_called_relevant_is_the_models_own_line_and_other_scales_say_nothing():
    from helpers.scoring.relevant_line import called_relevant

    assert called_relevant([0.5, 0.49, 0.99, float("nan")], "probability") == [True, False, True, False]
    assert called_relevant([0.0, -0.01, 7.0, float("inf")], "logit") == [True, False, True, False]
    assert called_relevant([0.9, 0.99], "cosine") == [False, False]
    assert called_relevant([12.0], "bm25") == [False]
    assert called_relevant([3.0], "fused") == [False]
