"""A reranker earns its say (helpers/scoring/calibration.py): measured on the calibration
set against Agent Zero's own embedder, said in plain words, and kept.

Driven the way a user meets it: Test connection (helpers/connection_test.py) against
wire-faithful servers on loopback, and recalls in the stand-in host."""

import asyncio
from dataclasses import replace

import pytest

from helpers.scoring import calibration
from tests.host.embeddings import HashEmbeddings
from tests.servers import start
from tests.servers.scoring import (
    calibration_question_in,
    fewest_known,
    partly_calibrated,
    partly_calibrated_mrr,
    relevance,
    word_overlap,
)
from tests.host.recall import HISTORY, QUESTION, enabled_store, pool_posts, set_plugin, spy_on_stage


# Each question's five candidates and three unrelated memories: eight scores asked for; five
# (the candidates alone) is as short an answer as one.
@pytest.mark.parametrize("answer", [[], [1.0], [1.0] * 5, [1.0] * 9])
def test_an_answer_of_the_wrong_length_leaves_the_say_unmeasured_and_never_raises(answer):
    from helpers.deadline import Deadline

    async def scores(query, documents, deadline):
        return answer

    result = asyncio.run(calibration.measure(scores, Deadline.after(5)))
    assert result.say == "unmeasured" and "scores for 8 calibration memories" in result.reason


def test_the_set_is_embedded_only_for_a_reranker_that_could_earn_a_say():
    """Embedding the set is the calibration's cost (about 8 s with all-MiniLM-L6-v2 on two
    cores, once per embedder): no embedder's figure can give a reranker below SOME_AT_LEAST a
    say, so one that scores below it is not compared with a fresh measurement."""
    from helpers.deadline import Deadline

    class CountingEmbedder(HashEmbeddings):
        texts = 0

        async def aembed_documents(self, texts):
            CountingEmbedder.texts += len(texts)
            return self.embed_documents(texts)

    async def alike(query, documents, deadline):  # every memory the same: each answer ranked last
        return [0.5] * len(documents)

    async def knowing(query, documents, deadline):  # the answer first, wherever it stands
        item = next(i for i in calibration.ITEMS if i.query == query)
        return [1.0 if d == item.candidates[item.answer] else 0.0 for d in documents]

    calibration.forget()
    hopeless = asyncio.run(calibration.measure(alike, Deadline.after(30), CountingEmbedder(256)))
    assert hopeless.say == "none" and hopeless.reranker < calibration.SOME_AT_LEAST
    assert CountingEmbedder.texts == 0 and hopeless.embedder == calibration.DEFAULT_EMBEDDER_MRR

    strong = asyncio.run(calibration.measure(knowing, Deadline.after(30), CountingEmbedder(256)))
    assert strong.say == "full" and strong.embedder_name == "Agent Zero's embedder"
    assert CountingEmbedder.texts == sum(1 + len(i.candidates) for i in calibration.ITEMS)
    # and the weak one is now shown beside the figure measured last
    again = asyncio.run(calibration.measure(alike, Deadline.after(30), CountingEmbedder(256)))
    assert again.embedder == strong.embedder and again.say == "none"
    calibration.forget()


def test_a_tie_counts_against_the_answer():
    assert calibration.reciprocal_rank([0.9, 0.1, 0.1], 0) == 1.0
    assert calibration.reciprocal_rank([0.5, 0.5, 0.5], 0) == pytest.approx(1 / 3)  # alike: the worst rank
    assert calibration.reciprocal_rank([0.2, 0.9, float("nan")], 0) == pytest.approx(1 / 3)
    assert calibration.reciprocal_rank([float("inf"), 0.1], 0) == 0.0


@pytest.mark.parametrize(
    "mrr, embedder, say",
    [
        (1.0, 0.41, "full"),
        (0.72, 0.41, "full"),
        (0.64, 0.41, "some"),
        (0.5, 0.41, "none"),
        (0.41, 0.41, "none"),
        (0.3, 0.41, "none"),
        (0.75, 0.6, "some"),
        (0.9, 0.6, "full"),
    ],
)
def test_the_say_follows_the_gain_over_the_embedder(mrr, embedder, say):
    assert calibration.say_for(mrr, embedder) == say


def test_the_set_is_hard_for_words_and_hides_no_answer_by_position():
    from helpers.scoring import bm25

    items = calibration.ITEMS
    assert len(items) >= 12 and all(len(i.candidates) == 5 for i in items)
    assert len({i.answer for i in items}) == 5  # the answer stands in every place
    lexical = sum(calibration.reciprocal_rank(bm25.bm25_scores(i.query, i.candidates), i.answer) for i in items) / len(
        items
    )
    assert lexical < calibration.DEFAULT_EMBEDDER_MRR
    positional = sum(calibration.reciprocal_rank([5 - n for n in range(5)], i.answer) for i in items) / len(items)
    assert calibration.say_for(positional, calibration.DEFAULT_EMBEDDER_MRR) == "none"


def _test_connection(form):
    from helpers import connection_test

    return asyncio.run(connection_test.run(form))["report"]


def test_test_connection_says_how_much_each_reranker_is_trusted_with_its_figures():
    host_embedder = HashEmbeddings(256)
    # Agent Zero's embedder as the recall measured it; an embedding model served as a reranker
    # scores the calibration questions exactly as that embedder does.
    embedder_mrr, _ = asyncio.run(calibration.embedder_score(host_embedder))
    with start("tei19") as perfect, start("llamacpp", scorer=lambda q, d: host_embedder.similarity(q, d)) as embedding:
        strong = _test_connection({"rerank_endpoint": perfect.url})
        alike = _test_connection({"rerank_endpoint": embedding.url})
    lexical = _test_connection({"rerank_api": "lexical"})
    sentences = [r["trust_text"] for r in (strong, alike, lexical)]
    assert len(set(sentences)) == 3
    assert strong["trust"]["say"] == "full" and strong["trust"]["reranker_mrr"] == 1.0
    # its line between relevant and not is read from its probe's scale: it calls none of the
    # unrelated memories relevant; an embedding model's cosines and BM25 have no such line
    assert strong["trust"]["unrelated_relevant"] == 0.0 and strong["trust"]["means_relevant"] is True
    assert alike["trust"]["means_relevant"] is False and lexical["trust"]["unrelated_relevant"] is None
    n = len(calibration.ITEMS)
    assert sentences[0].startswith(f"your TEI server is trusted fully: on {n} calibration questions it scored 1.00")
    assert alike["trust"]["say"] == "none" and alike["trust"]["reranker_mrr"] == pytest.approx(embedder_mrr, abs=1e-3)
    assert "it orders like an embedding model, not a reranker" in sentences[1]
    assert f"Agent Zero's embedder {embedder_mrr:.2f} ({n} calls, " in sentences[1]
    # BM25 scores below the stand-in's hashed words on the set (its traps are the words'); its
    # word weights are the call's, so the unrelated memories sent beside the candidates count.
    assert lexical["trust"]["say"] == "none" and lexical["trust"]["reranker_mrr"] == pytest.approx(0.409, abs=1e-3)
    assert sentences[2].startswith(
        f"the built-in word matcher (BM25) gets no say in recall: on {n} calibration questions it scored 0.41"
    )
    assert "so it did worse than the embedder" in sentences[2]


def _memories(result):
    return [d.page_content for d in result["memories"]]


def test_a_reranker_without_say_leaves_exactly_the_fused_order(host):
    agent, memory = enabled_store(host)
    set_plugin(host)
    fused = host.run(host.recall(agent, QUESTION, HISTORY))
    # Word overlap alone: it passes the probe, and orders the calibration set worse than the embedder.
    with start("tei19", scorer=word_overlap) as weak:
        set_plugin(host, rerank_endpoint=weak.url)
        judged = host.run(host.recall(agent, QUESTION, HISTORY))
        asked = [
            r for r in weak.requests if r.method == "POST" and (r.json or {}).get("query", "").startswith(QUESTION)
        ]
    assert asked, "the weak reranker was asked"
    assert _memories(judged) == _memories(fused)
    stats = host.import_plugin("helpers.report.stats").STATS.snapshot()["totals"]
    assert "reranked" not in stats


def test_a_reranker_that_earned_no_say_is_not_asked_until_it_is_measured_again(host):
    """Once its calibration says none, its scores could move nothing: the recalls after it
    do not ask it (its time is no longer theirs), return exactly the fused order and say so.
    A better model behind the same endpoint is measured again by Test connection, and the
    recalls after that ask it and have its say."""
    import time

    agent, memory = enabled_store(host)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    pools = []
    restore = spy_on_stage(
        pipeline, "pool", lambda real, memory, search: (real(memory, search), pools.append(search.pool))
    )
    set_plugin(host)
    fused = host.run(host.recall(agent, QUESTION, HISTORY))
    fusions_pools, pools[:] = list(pools), []
    cal = host.import_plugin("helpers.scoring.calibration")
    status = host.import_plugin("helpers.status_report")
    words = host.import_plugin("helpers.vocabulary")
    connection_test = host.import_plugin("helpers.connection_test")
    stats = host.import_plugin("helpers.report.stats").STATS
    with start("tei19", scorer=word_overlap) as server:
        set_plugin(host, rerank_endpoint=server.url)
        host.run(host.recall(agent, QUESTION, HISTORY))
        assert pool_posts(server, memory), "asked before its say is known"
        waited = time.monotonic() + 60
        while not cal._known and time.monotonic() < waited:
            time.sleep(0.05)
        server.clear()
        stats.forget()
        asked_pools, pools[:] = list(pools), []
        later = [host.run(host.recall(agent, QUESTION, HISTORY)) for _ in range(2)]
        assert not pool_posts(server, memory), "not asked once it earned no say"
        # ...and its lists are read no deeper than fusion alone reads them.
        assert len(asked_pools[0]) > len(fusions_pools[0]) and pools == fusions_pools * 2
        assert stats.snapshot()["totals"] == {"fused": 4}  # two recalls of two searches, nothing failed
        text = words.status_text(status.collect(agent))
        assert "gets no say in recall" in text and "recalls do not ask it" in text

        server.backend.scorer = relevance  # the user serves a better model and presses Test connection
        tested = host.run(connection_test.run({"rerank_endpoint": server.url}))["report"]
        assert tested["trust"]["say"] == "full"
        server.clear()
        host.run(host.recall(agent, QUESTION, HISTORY))
        assert pool_posts(server, memory), "asked again: its new say is full"
    restore()
    assert all(_memories(result) == _memories(fused) for result in later)
    assert stats.snapshot()["totals"].get("reranked") == 2


def test_the_calibration_runs_once_per_reranker_and_again_when_the_model_changes(host):
    agent, memory = enabled_store(host)
    with start("tei19") as srv:
        set_plugin(host, rerank_endpoint=srv.url)
        for _ in range(3):
            host.run(host.recall(agent, QUESTION, HISTORY))
        once = [
            r
            for r in srv.requests
            if r.method == "POST" and calibration_question_in((r.json or {}).get("query", "")) is not None
        ]
        set_plugin(host, rerank_endpoint=srv.url, rerank_model="another")
        host.run(host.recall(agent, QUESTION, HISTORY))
        twice = [
            r
            for r in srv.requests
            if r.method == "POST" and calibration_question_in((r.json or {}).get("query", "")) is not None
        ]
    assert len(once) == len(calibration.ITEMS)
    assert len(twice) == 2 * len(calibration.ITEMS)
    stats = host.import_plugin("helpers.report.stats").STATS.snapshot()["totals"]
    assert stats.get("reranked", 0) >= 4  # a capable reranker has its say from the first recall


def test_a_calibration_longer_than_a_recall_goes_on_apart_asks_each_question_once_and_then_has_its_say(host):
    """The whole set takes a CPU cross-encoder 20-25 s, more than a recall may wait: the
    recall keeps the fused order in its own time, the measurement goes on on the plugin's
    own loop (never started twice), and the recalls after it have the say."""
    import time

    agent, memory = enabled_store(host)

    def slow_on_calibration(query, document):
        if calibration_question_in(query) is not None:
            time.sleep(0.06)
        return relevance(query, document)

    cal = host.import_plugin("helpers.scoring.calibration")
    with start("tei19", scorer=slow_on_calibration) as srv:
        set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=1.0)
        first = host.run(host.recall(agent, QUESTION, HISTORY))
        # back before the measurement could finish (70 questions of ~5 candidates, 0.06 s each,
        # 4 questions at a time: ~5 s, against the recall's 1 s)
        assert cal._measuring and not cal._known
        second = host.run(host.recall(agent, QUESTION, HISTORY))
        deadline = time.monotonic() + 60
        while not cal._known and time.monotonic() < deadline:
            time.sleep(0.1)
        third = host.run(host.recall(agent, QUESTION, HISTORY))
        asked = [calibration_question_in((r.json or {}).get("query", "") or "") for r in srv.requests]
    asked = [q for q in asked if q is not None]
    assert first["error"] is None and second["error"] is None and third["error"] is None
    assert sorted(asked) == sorted(i.query for i in cal.ITEMS)  # every question once: never started twice
    stats = host.import_plugin("helpers.report.stats").STATS.snapshot()["totals"]
    assert stats.get("reranked", 0) >= 1  # the recall after the measurement has its say
    breaker = host.import_plugin("helpers.scoring.breaker").BREAKER.snapshot()
    assert all(not state["open_for_s"] for state in breaker.values())


def _knowing_enough_for(say: str, host) -> int:
    """How many calibration answers partly_calibrated must know to earn ``say`` against the
    stand-in host's embedder (the others' answers last: reciprocal rank 1/5)."""
    embedder, _ = asyncio.run(calibration.embedder_score(HashEmbeddings(256)))
    return fewest_known(lambda mrr: calibration.say_for(mrr, embedder) == say)


def test_some_say_moves_only_what_the_searches_also_found_near_the_top(host):
    agent, memory = enabled_store(host)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    seen = []
    restore = spy_on_stage(
        pipeline, "combine", lambda real, memory, search: (seen.append(search), real(memory, search))[1]
    )
    try:
        set_plugin(host, rerank_candidates=40, rerank_api="lexical")
        host.run(host.recall(agent, QUESTION, HISTORY))
        first = seen[0]
        deep = [d for d in first.pool if all(d is not f for f in first.fused[:20])]
        target = deep[0].page_content  # in the pool, not among the fused order's first 20

        def favour(scorer):
            return lambda q, d: 20.0 if d == target else scorer(q, d)

        shown = {}
        for label, known in (("some", _knowing_enough_for("some", host)), ("full", len(calibration.ITEMS))):
            with start("tei19", scorer=favour(partly_calibrated(known))) as srv:
                set_plugin(host, rerank_endpoint=srv.url, rerank_candidates=40)
                host.import_plugin("helpers.reranker").reset_state()
                seen.clear()
                result = host.run(host.recall(agent, QUESTION, HISTORY))
            assert seen[0].trust.say == label, seen[0].trust
            shown[label] = [d.page_content for d in result["memories"]]
    finally:
        restore()
    assert target not in shown["some"]  # it stands out, but the searches did not find it near the top
    assert target in shown["full"]


def test_the_status_tool_says_the_say_the_reranker_earned(host):
    agent, memory = enabled_store(host)
    with start("tei19", scorer=word_overlap) as srv:
        set_plugin(host, rerank_endpoint=srv.url)
        host.run(host.recall(agent, QUESTION, HISTORY))
        tool = agent.get_tool(name="reranker_status", method=None, args={}, message="", loop_data=None)
        text = host.run(tool.execute()).message
    line = next(row for row in text.splitlines() if row.startswith("say in recall: "))
    assert line.startswith(
        f"say in recall: your TEI server gets no say in recall: on {len(calibration.ITEMS)} calibration questions it "
        "scored"
    )
    assert "the plugin's fused order stands" in line


@pytest.mark.parametrize(
    "trust, raised",
    [
        # the real ms-marco-MiniLM-L-12-v2 against Agent Zero's embedder, on the 70 questions
        (calibration.Trust("none", 0.633, 0.546, questions=70), True),
        (calibration.Trust("none", 0.61, 0.546, questions=70), False),  # within twice a rerun's spread
        (calibration.Trust("none", 0.546, 0.546, questions=70), False),  # an embedding model as a reranker
        (calibration.Trust("none", 0.57, 0.45, questions=70), False),  # surely better, but below the floor 0.58
        # on the 12 the utility judge answers, the spread is wider: SOME_GAIN's bar again
        (calibration.Trust("none", 0.55, 0.406, questions=12), False),
        (calibration.Trust("some", 0.75, 0.546, questions=70), False),  # has its say already
        (calibration.Trust("unmeasured", questions=70), False),
    ],
)
def test_a_reranker_surely_better_than_the_embedder_is_lent_some_say(trust, raised):
    clean = replace(trust, unrelated_above=0.0)  # it keeps the set's unrelated memories below the answer
    lent = calibration.lend_say(clean, new_chat=True, words_led=False)
    assert clean.surely_better is raised and clean.lendable is raised
    assert (lent.say, lent.lent) == (("some", True) if raised else (trust.say, False))
    assert clean.as_dict()["surely_better"] is raised and lent.as_dict()["surely_better"] is raised
    # Not asked them (the utility model), or scoring them above the answer as noise does: nothing lent.
    for unsure in (trust, replace(trust, unrelated_above=0.24)):
        assert not unsure.lendable and not unsure.as_dict()["lendable"]
        assert all(calibration.lend_say(unsure, new_chat=True, words_led=led) == unsure for led in (False, True))
    assert calibration.lend_say(None, new_chat=True, words_led=True) is None
    # A conversation's search in a store whose embedder leads: nothing lent to anyone.
    assert calibration.lend_say(clean, new_chat=False, words_led=False) == clean


@pytest.mark.parametrize(
    "trust, led, anywhere_else",
    [
        # the real ms-marco-MiniLM-L-12-v2: 7 of the 210 unrelated memories at or above the answer
        (calibration.Trust("none", 0.633, 0.546, questions=70, unrelated_above=0.033), "full", "some"),
        # noise of σ 4: about as good on the five candidates, a quarter of the unrelated ones above the
        # answer: surely better than the embedder, but lent nothing
        (calibration.Trust("none", 0.687, 0.546, questions=70, unrelated_above=0.24), "none", "none"),
        (calibration.Trust("none", 0.633, 0.546, questions=70, unrelated_above=0.11), "none", "none"),  # just over
        (calibration.Trust("none", 0.633, 0.546, questions=70, unrelated_above=0.1), "full", "some"),  # at the bar
        (calibration.Trust("some", 0.75, 0.546, questions=70, unrelated_above=0.0), "full", "some"),
        (calibration.Trust("some", 0.75, 0.546, questions=70, unrelated_above=0.2), "some", "some"),
        (calibration.Trust("full", 0.9, 0.546, questions=70, unrelated_above=0.0), "full", "full"),
        # not better than the embedder: keeping unrelated memories below the answer is not enough
        (calibration.Trust("none", 0.546, 0.546, questions=70, unrelated_above=0.0), "none", "none"),
        (calibration.Trust("none", 0.61, 0.546, questions=70, unrelated_above=0.0), "none", "none"),
    ],
)
def test_a_reranker_that_keeps_unrelated_memories_below_the_answer_has_full_say_where_the_words_lead(
    trust, led, anywhere_else
):
    where_words_lead = calibration.lend_say(trust, new_chat=True, words_led=True)
    in_a_new_chat = calibration.lend_say(trust, new_chat=True, words_led=False)
    assert (where_words_lead.say, in_a_new_chat.say) == (led, anywhere_else)
    assert where_words_lead.lent is (led != trust.say)
    assert trust.as_dict()["full_where_words_lead"] is (led == "full" and trust.say != "full")
    assert where_words_lead.as_dict()["surely_better"] is trust.surely_better  # what it measured, not what it was lent


def test_each_question_carries_unrelated_memories_but_a_costly_scorer_is_not_sent_them():
    assert all(len(i.unrelated) == 3 and not set(i.unrelated) & set(i.candidates) for i in calibration.ITEMS)

    class Costly:  # the utility model declares the questions it answers
        calibration_questions = calibration.HAND_WRITTEN

    costly = calibration.items_for(Costly())
    assert [i.query for i in costly] == [i.query for i in calibration.ITEMS[: calibration.HAND_WRITTEN]]
    assert all(i.unrelated == () for i in costly)
    assert calibration.items_for(object()) is calibration.ITEMS


def test_the_unrelated_share_counts_ties_and_non_numbers_against_the_answer():
    items = [calibration.Item("t", "q", ("a", "b"), 0, ("x", "y")), calibration.Item("t", "q2", ("a",), 0)]
    assert calibration.unrelated_above([[1.0, 0.0, 0.5, 0.2], [1.0]], items) == 0.0
    assert calibration.unrelated_above([[1.0, 0.0, 1.0, float("nan")], [1.0]], items) == 1.0
    assert calibration.unrelated_above([[float("nan"), 0.0, 0.1, 0.2], [1.0]], items) == 1.0
    assert calibration.unrelated_above([[1.0]], items[1:]) is None  # none sent: unknown, never "clean"


def test_the_share_called_relevant_reads_the_scale_and_only_an_order_is_read_by_its_line():
    items = [calibration.Item("t", "q", ("a", "b"), 0, ("x", "y")), calibration.Item("t", "q2", ("a",), 0, ("z",))]
    answers = [[0.99, 0.2, 0.6, 0.01], [0.9, float("nan")]]
    assert calibration.unrelated_called_relevant(answers, items, "probability") == pytest.approx(1 / 3)
    assert calibration.unrelated_called_relevant([[9.0, 0.0, 0.0, -3.0], [9.0, -1.0]], items, "logit") == pytest.approx(
        1 / 3
    )
    for no_line in ("cosine", "bm25", None):  # a scale with no line between relevant and not says nothing
        assert calibration.unrelated_called_relevant(answers, items, no_line) is None
    assert (
        calibration.unrelated_called_relevant([[1.0, 0.0]], [calibration.Item("t", "q", ("a", "b"), 0)], "logit")
        is None
    )
    trained = calibration.Trust("none", 0.633, 0.546, questions=70, unrelated_above=0.033, unrelated_relevant=0.0)
    assert trained.means_relevant
    assert not replace(trained, unrelated_relevant=0.16).means_relevant  # noise of σ 2: it calls many relevant
    assert replace(trained, unrelated_relevant=calibration.UNRELATED_RELEVANT_AT_MOST).means_relevant  # at the bar
    assert not replace(trained, unrelated_relevant=None).means_relevant  # no line, or not sent them
    assert not replace(trained, unrelated_above=0.2).means_relevant  # an order first
    assert trained.as_dict()["means_relevant"] is True and trained.as_dict()["unrelated_relevant"] == 0.0


def test_a_reranker_surely_better_than_the_embedder_has_some_say_in_a_new_chat(host):
    """Short of some say on the calibration set, but better than the store's embedder by
    twice a rerun's spread, and keeps the set's unrelated memories below the answer: some
    say in a new chat's searches (the message alone, the set's
    kind of question), in a store whose words do not lead; none in a conversation's, where
    the fused order leans on what was said before. It is asked only where it has a say."""
    agent, memory = enabled_store(host)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    cal = host.import_plugin("helpers.scoring.calibration")
    seen = []

    def spy(real, memory, search):
        real(memory, search)
        if search.area == "memories":
            seen.append(search)

    restore = spy_on_stage(pipeline, "fuse", spy)
    try:
        set_plugin(host)
        plain = host.run(host.recall(agent, QUESTION, []))
        target = seen[0].fused[8].page_content  # near the top of the fused order, not in the prompt
        assert target not in _memories(plain)
        embedder, _ = asyncio.run(cal.embedder_score(memory.db.embedding_function))
        n = len(cal.ITEMS)
        known = fewest_known(lambda mrr: cal.Trust("none", mrr, embedder, questions=n).surely_better)
        assert cal.say_for(partly_calibrated_mrr(known), embedder) == "none"

        knowing = partly_calibrated(known, clean=True)
        with start("tei19", scorer=lambda q, d: 20.0 if d == target else knowing(q, d)) as srv:
            set_plugin(host, rerank_endpoint=srv.url)
            seen.clear()
            new_chat = host.run(host.recall(agent, QUESTION, []))
            asked_in_new_chat = pool_posts(srv, memory)
            srv.clear()
            conversation = host.run(host.recall(agent, QUESTION, HISTORY))
            asked_in_conversation = pool_posts(srv, memory)
    finally:
        restore()
    assert not any(s.words_led for s in seen)  # lent for the new chat, not for the store's words
    assert seen[0].new_chat and (seen[0].trust.say, seen[0].trust.lent) == ("some", True)
    assert target in _memories(new_chat)  # its pick moved up
    assert not seen[1].new_chat and seen[1].trust.say == "none" and seen[1].not_asked
    assert target not in _memories(conversation)
    assert asked_in_new_chat and not asked_in_conversation
