"""A store whose embedder misses the strong word matches lets the words lead its new-chat
searches (helpers/recall/store_agreement.py, fusion.word_led, applied by pipeline.fuse): the
rule that reads the tally, the order it gives, and both through the stand-in host, where a
new store starts with the embedder leading and a conversation's fused order never changes."""

from helpers.recall import fusion, store_agreement

key = str


class Store:  # any object a store can be: the tally is kept per object, weakly
    pass


def test_a_new_store_and_a_few_misses_leave_the_embedder_leading():
    store = Store()
    assert not store_agreement.words_lead(store)
    store_agreement.note(store, False)
    store_agreement.note(store, False)
    assert not store_agreement.words_lead(store)  # 2 seen: fewer than MIN_SEEN
    store_agreement.note(store, False)
    assert store_agreement.words_lead(store)  # 3 missed of 3


def test_the_share_is_drawn_toward_the_prior_so_chance_misses_do_not_switch():
    one_held, two_held = Store(), Store()
    for held in (True, False, False, False, False):
        store_agreement.note(one_held, held)
    for held in (True, True, False, False, False):
        store_agreement.note(two_held, held)
    assert store_agreement.words_lead(one_held)  # (1 + 4) / 10 < 0.6
    assert not store_agreement.words_lead(two_held)  # (2 + 4) / 10 = 0.6: not below the bar


def test_only_the_newest_window_counts_and_forget_starts_every_store_again():
    store = Store()
    for _ in range(store_agreement.WINDOW):
        store_agreement.note(store, False)
    assert store_agreement.words_lead(store)
    for _ in range(store_agreement.WINDOW):  # the store changed: its embedder now holds them
        store_agreement.note(store, True)
    assert not store_agreement.words_lead(store)
    for _ in range(store_agreement.WINDOW):
        store_agreement.note(store, False)
    store_agreement.forget()
    assert not store_agreement.words_lead(store)


def test_a_search_counts_only_with_a_strong_word_match_held_within_the_embedders_first_five():
    store, hits = Store(), list("abcdefgh")
    for _ in range(5):
        store_agreement.note_search(store, "f", fusion.STRONG_COVERAGE - 0.01, hits, key)  # weak: not counted
        store_agreement.note_search(store, None, 1.0, hits, key)  # no word match: not counted
    assert not store_agreement.words_lead(store)
    for _ in range(3):
        store_agreement.note_search(store, "f", fusion.STRONG_COVERAGE, hits, key)  # 6th: missed
    assert store_agreement.words_lead(store)
    held = Store()
    for _ in range(10):
        store_agreement.note_search(held, "e", 1.0, hits, key)  # 5th: held
    assert not store_agreement.words_lead(held)


def test_a_store_that_cannot_be_weakly_referenced_is_never_word_led():
    for _ in range(10):
        store_agreement.note(None, False)
        store_agreement.note(7, False)
    assert not store_agreement.words_lead(None) and not store_agreement.words_lead(7)


def test_the_words_lead_the_first_places_and_the_embedders_best_keeps_the_last():
    fused = list("abcdefgh")
    words = [("w", 9.0), ("c", 8.0), ("x", 7.0), ("y", 6.0), ("z", 5.0)]
    assert fusion.word_led(fused, words, 5, key) == list("wcxyazbdefgh")
    # the embedder's best already among the word matches: the next fused one takes its place
    assert fusion.word_led(fused, [("a", 9.0), ("w", 8.0)], 5, key) == list("awbcdefgh")
    assert fusion.word_led(fused, [], 5, key) == fused
    assert fusion.word_led([], words, 5, key) == list("wcxyz")


def test_the_embedders_best_keeps_the_last_place_only_when_stored_beside_the_word_matches():
    fused = list("abcdefgh")
    words = [("w", 9.0), ("c", 8.0), ("x", 7.0), ("y", 6.0), ("z", 5.0)]
    lead = {"w": 100, "c": 40, "x": 101, "y": 102, "z": 300}
    reach = fusion.EPISODE_REACH
    # stored within the reach of one of the word matches above it: one episode, it stays
    for at in (40 - reach, 40 + reach, 102 + reach):
        assert fusion.word_led(fused, words, 5, key, {**lead, "a": at}) == list("wcxyazbdefgh")
    # stored apart from all of them: a lone guess, the next word match goes before it
    for at in (0, 40 + reach + 1, 100 - reach - 1, 102 + reach + 1, 300):  # beside z, which is not above it
        assert fusion.word_led(fused, words, 5, key, {**lead, "a": at}) == list("wcxyzabdefgh")
    # a place not known: as before
    assert fusion.word_led(fused, words, 5, key, {k: v for k, v in lead.items() if k != "x"} | {"a": 0}) == list(
        "wcxyazbdefgh"
    )
    assert fusion.word_led(fused, words, 5, key, lead) == list("wcxyazbdefgh")
    assert fusion.word_led(fused, words, 5, key, {}) == list("wcxyazbdefgh")
    # no word match after the lead: nothing goes before the guess
    assert fusion.word_led(fused, words[:4], 5, key, {**lead, "a": 0}) == list("wcxyabdefgh")


# --- through the stand-in host ----------------------------------------------------------
# The embedder (hashed words) ranks the echoes above the needle for this message (they
# share its common words); BM25 weighs the rare invoice number above them: a strong word
# match the embedder's first five miss.
ECHOES = [f"When was the supplier settled? In week {n} the supplier was settled when it came." for n in range(30)]
FILLER = [f"Notes on the garden, week {n}: watered the tomatoes and weeded the beds near the shed." for n in range(30)]
NEEDLES = [
    f"The supplier {code}: settled by transfer on Monday." for code in ("QX-7741", "QX-8852", "QX-9963", "QX-1074")
]
QUESTIONS = [f"when was the supplier {code} settled?" for code in ("QX-7741", "QX-8852", "QX-9963", "QX-1074")]
# A store where the embedder finds it too: the message is the memory's own words.
PLAIN = [
    f"The supplier {code} was settled on Monday by bank transfer."
    for code in ("QX-7741", "QX-8852", "QX-9963", "QX-1074")
]
PLAIN_QUESTIONS = [text.rstrip(".") for text in PLAIN]


def _store(host, texts, embeddings=None, threshold=0.0):
    """A store of ``texts`` (the host's embedder, or ``embeddings``), the plugin on, the
    host's recall threshold ``threshold``."""
    from tests.host.recall import set_memory_config, set_plugin, wrapped_module

    set_memory_config(host, memory_recall_similarity_threshold=threshold)
    agent = host.agent()
    memory = host.run(host.memory(agent, embeddings=embeddings))
    host.run(host.insert(memory, texts))
    wrapped_module(host)
    host.toggle(True)
    set_plugin(host)
    return agent, memory


def _searches(host):
    from tests.host.recall import spy_on_stage

    seen = []

    def spy(real, memory, search):
        real(memory, search)
        if search.area == "memories":
            seen.append(search)

    return seen, spy_on_stage(host.import_plugin("helpers.recall.pipeline"), "fuse", spy)


def test_after_three_strong_word_matches_the_embedder_missed_the_words_lead_a_new_chat(host):
    agent, memory = _store(host, FILLER + ECHOES + NEEDLES)
    seen, restore = _searches(host)
    try:
        results = [host.run(host.recall(agent, question, [])) for question in QUESTIONS]
    finally:
        restore()
    assert all(s.found.best_word_coverage >= fusion.STRONG_COVERAGE for s in seen)
    assert all(NEEDLES[n] not in [d.page_content for d, _ in s.found.lists["message"][:5]] for n, s in enumerate(seen))
    assert [s.words_led for s in seen] == [False, False, False, True]
    last = seen[-1]
    words = [d.page_content for d, _ in last.found.lists["lexical"]]
    fused = [d.page_content for d in last.fused]
    assert fused[:4] == words[:4] and fused[0] == NEEDLES[3]
    assert fused[4] not in words[:4]  # the embedder's best keeps the prompt's last place
    assert results[-1]["memories"][0].page_content == NEEDLES[3]
    # and the chat says so, for that search only
    lines = [_chat_line(agent, n) for n in range(len(QUESTIONS))]
    vocabulary = host.import_plugin("helpers.vocabulary")
    assert [vocabulary.WORDS_LED in line for line in lines] == [False, False, False, True]


def _chat_line(agent, recall: int) -> str:
    """The plugin's line on the chat's log item of the ``recall``-th recall."""
    items = [i for i in agent.context.log.logs if i.type == "util" and "found" in i.heading]
    return dict(items[recall].kvps)["reranker"]


def test_a_store_whose_embedder_holds_the_word_matches_keeps_the_embedder_leading(host):
    agent, memory = _store(host, FILLER + ECHOES + PLAIN)
    seen, restore = _searches(host)
    try:
        for question in PLAIN_QUESTIONS * 2:
            host.run(host.recall(agent, question, []))
    finally:
        restore()
    assert all(s.found.best_word_coverage >= fusion.STRONG_COVERAGE for s in seen)
    assert not any(s.words_led for s in seen)


def test_in_a_conversation_the_fused_order_stands_in_a_word_led_store(host):
    agent, memory = _store(host, FILLER + ECHOES + NEEDLES)
    seen, restore = _searches(host)
    history = [
        ("user", "we talked about suppliers"),
        ("ai", '{"tool_name": "response", "tool_args": {"text": "Yes."}}'),
    ]
    try:
        for question in QUESTIONS[:3]:
            host.run(host.recall(agent, question, []))
        host.run(host.recall(agent, QUESTIONS[3], history))
    finally:
        restore()
    conversation = seen[-1]
    assert "followup" in conversation.found.lists and not conversation.words_led
    assert NEEDLES[3] not in [d.page_content for d in conversation.fused[:5]]


def test_reset_state_starts_the_store_again_with_the_embedder_leading(host):
    agent, memory = _store(host, FILLER + ECHOES + NEEDLES)
    seen, restore = _searches(host)
    try:
        for question in QUESTIONS:
            host.run(host.recall(agent, question, []))
        host.import_plugin("helpers.reranker").reset_state()
        host.run(host.recall(agent, QUESTIONS[3], []))
    finally:
        restore()
    assert seen[3].words_led and not seen[4].words_led


# --- the survey: a store's first questions need no warm-up ----------------------------------
# A store whose embedder sees none of its words: each text its own direction (drawn from a
# hash of the whole text), as far from its neighbours in words as from any other memory.
PHRASES = ["oh wow so fun", "ha ha yes me too", "aw that is so sad", "ok see you soon", "no way is it", "so cool omg"]
TOPICS = ("kayaking", "pottery", "marathon", "violin", "orchids", "bouldering")


def _turns(count):
    return [
        f"Mel: {PHRASES[n % len(PHRASES)]}, {TOPICS[(n // 2) % len(TOPICS)]}{n // 2} next weekend" for n in range(count)
    ]


def _wordless_embeddings():
    import hashlib
    import random

    from langchain_core.embeddings import Embeddings

    class WordlessEmbeddings(Embeddings):
        same_as: dict = {}  # text -> the text whose vector it gets

        def _vector(self, text):
            text = self.same_as.get(text, text)
            seed = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
            draw = random.Random(seed)
            return [draw.gauss(0.0, 1.0) for _ in range(64)]

        def embed_documents(self, texts):
            return [self._vector(t) for t in texts]

        def embed_query(self, text):
            return self._vector(text)

    return WordlessEmbeddings()


def _turn_store(host, count):
    return _store(host, _turns(count), embeddings=_wordless_embeddings())


def test_a_store_whose_embedder_and_words_disagree_is_word_led_from_its_first_question(host):
    agent, memory = _turn_store(host, 120)
    seen, restore = _searches(host)
    try:
        result = host.run(host.recall(agent, "how did the pottery7 go next weekend?", []))
    finally:
        restore()
    agreement = host.import_plugin("helpers.recall.store_agreement")
    assert agreement._surveys[memory.db].agreement < agreement.SURVEY_BAR
    assert seen[0].words_led
    assert result["memories"][0].page_content == _turns(120)[14]  # the first of pottery7's two turns
    assert vocabulary_of(host).WORDS_LED in _chat_line(agent, 0)


def vocabulary_of(host):
    return host.import_plugin("helpers.vocabulary")


# A surveyed word-led store of chat turns where the words find one episode (turns 50-53) and
# a fifth match elsewhere (turn 90), and the embedder's best guess for the question is a turn
# of its choosing (the question and that turn share a vector; every other text is its own).
EPISODE = {
    50: "Mel: the zephyr glaze cracked in the kiln",
    51: "Ann: oh no, the zephyr glaze again?",
    52: "Mel: yes the kiln ran hot",
    53: "Ann: kiln trouble is the worst",
    90: "Mel: my old kiln is for sale at last, come and see it some time",
}
EPISODE_QUESTION = "what happened with the zephyr glaze in the kiln?"


def _episode_store(host, guess: int):
    """The store, with turn ``guess`` the embedder's best for EPISODE_QUESTION."""
    texts = [EPISODE.get(n, text) for n, text in enumerate(_turns(120))]
    embeddings = _wordless_embeddings()
    embeddings.same_as = {EPISODE_QUESTION: texts[guess]}
    agent, _ = _store(host, texts, embeddings=embeddings, threshold=0.99)  # the host itself finds nothing
    return agent, texts


def test_in_a_word_led_store_the_embedders_guess_stored_apart_from_the_word_matches_goes_after_the_next_one(host):
    for guess, fifth in ((10, [90, 10]), (54, [54, 90])):  # stored apart from turns 50-53, then beside them
        agent, texts = _episode_store(host, guess)
        seen, restore = _searches(host)
        try:
            host.run(host.recall(agent, EPISODE_QUESTION, []))
        finally:
            restore()
        search = seen[0]
        assert search.words_led
        assert [d.page_content for d, _ in search.found.lists["lexical"][:5]] == [
            texts[n] for n in (50, 51, 53, 52, 90)
        ]
        assert [d.page_content for d in search.fused[:6]] == [texts[n] for n in (50, 51, 53, 52, *fifth)]
        host.import_plugin("helpers.reranker").reset_state()


def test_a_store_too_small_to_survey_starts_with_the_embedder_leading(host):
    agent, memory = _turn_store(host, store_agreement.SURVEY_LEAST - 1)
    seen, restore = _searches(host)
    try:
        host.run(host.recall(agent, "how did the pottery7 go next weekend?", []))
    finally:
        restore()
    assert host.import_plugin("helpers.recall.store_agreement")._surveys[memory.db].agreement is None
    assert not seen[0].words_led


def test_a_store_whose_embedder_and_words_agree_is_surveyed_and_left_to_the_embedder(host):
    agent, memory = _store(host, FILLER + ECHOES + PLAIN)  # hashed words: the embedder reads the words
    seen, restore = _searches(host)
    try:
        host.run(host.recall(agent, PLAIN_QUESTIONS[0], []))
    finally:
        restore()
    agreement = host.import_plugin("helpers.recall.store_agreement")
    assert agreement._surveys[memory.db].agreement >= agreement.SURVEY_BAR
    assert not seen[0].words_led


class _Index:
    """What the survey reads of a FAISS index: its size and its vectors by position."""

    def __init__(self, vectors, broken=False):
        self.vectors, self.ntotal, self.broken = vectors, len(vectors), broken

    def reconstruct(self, position):
        if self.broken:
            raise RuntimeError("reconstruct not implemented for this type of index")
        return self.vectors[position]


class _Docstore:
    def __init__(self, docs):
        self.docs = docs

    def search(self, doc_id):
        return self.docs.get(doc_id, f"ID {doc_id} not found.")


class _Db:
    def __init__(self, texts, vectors, knowledge=(), broken=False):
        from langchain_core.documents import Document

        self.index = _Index(vectors, broken)
        self.index_to_docstore_id = {n: f"d{n}" for n in range(len(texts))}
        self.docstore = _Docstore(
            {
                f"d{n}": Document(page_content=t, metadata={"knowledge_source": True} if n in knowledge else {})
                for n, t in enumerate(texts)
            }
        )


def _disagreeing(count):
    """Turns and vectors that see none of their words: each its own random direction."""
    import numpy as np

    return _turns(count), np.random.default_rng(7).normal(size=(count, 64)).astype(np.float32)


def _surveyed(db) -> None:
    """``db``'s survey, waited for to its end. A search waits SURVEY_WAIT_S for it and lets
    it go on; on a loaded machine it takes longer, and asyncio.run would cancel it with its
    loop (these tests failed so under a parallel run)."""
    import asyncio

    async def whole() -> None:
        await store_agreement.survey(db)
        running = store_agreement._surveying.get(db)
        if running is not None:
            await running

    asyncio.run(whole())


def test_a_surveyed_word_led_store_goes_back_to_the_embedder_once_it_holds_two_matches():

    db = _Db(*_disagreeing(120))
    _surveyed(db)
    assert store_agreement.words_lead(db)  # no search seen yet
    store_agreement.note(db, True)
    assert store_agreement.words_lead(db)  # (1 + 2.5) / 6 < 0.6
    store_agreement.note(db, True)
    assert not store_agreement.words_lead(db)  # (2 + 2.5) / 7 >= 0.6


def test_the_survey_leaves_out_knowledge_files_and_says_nothing_of_an_index_it_cannot_read():

    texts, vectors = _disagreeing(120)
    mostly_knowledge = _Db(texts, vectors, knowledge=set(range(store_agreement.SURVEY_LEAST, 120)))
    _surveyed(mostly_knowledge)  # 40 memories of the user's: enough
    assert store_agreement._surveys[mostly_knowledge].agreement is not None
    mostly_knowledge = _Db(texts, vectors, knowledge=set(range(store_agreement.SURVEY_LEAST - 1, 120)))
    _surveyed(mostly_knowledge)  # 39: too few
    assert store_agreement._surveys[mostly_knowledge].agreement is None
    broken = _Db(texts, vectors, broken=True)
    _surveyed(broken)
    assert store_agreement._surveys[broken].agreement is None and not store_agreement.words_lead(broken)


def test_a_store_is_surveyed_again_only_once_it_has_doubled():

    import numpy as np

    texts, vectors = _disagreeing(120)
    db = _Db(texts, vectors)
    _surveyed(db)
    first = store_agreement._surveys[db]
    db.index.ntotal = 239
    _surveyed(db)
    assert store_agreement._surveys[db] is first
    more = texts + texts
    db2 = _Db(more, np.concatenate([vectors, vectors]))
    db2.index.ntotal = 120
    _surveyed(db2)
    assert store_agreement._surveys[db2].size == 120
    db2.index.ntotal = 240
    _surveyed(db2)
    assert store_agreement._surveys[db2].size == 240


def test_agreement_is_high_where_vectors_follow_the_words_and_low_where_they_do_not():
    import numpy as np

    texts, wordless = _disagreeing(120)
    by_topic = np.zeros((120, 60), dtype=np.float32)
    for n in range(120):
        by_topic[n, n // 2] = 1.0
    assert store_agreement.agreement_of(wordless, texts) < 0.5
    assert store_agreement.agreement_of(by_topic, texts) >= 1.0


def test_a_survey_that_fails_costs_the_recall_nothing(host, monkeypatch):
    agent, memory = _turn_store(host, 120)
    agreement = host.import_plugin("helpers.recall.store_agreement")
    question = "how did the pottery7 go next weekend?"
    seen, restore = _searches(host)
    try:
        host.run(host.recall(agent, question, []))  # surveyed: the words lead
        host.import_plugin("helpers.reranker").reset_state()

        async def broken(db):
            raise RuntimeError("the index is of another kind")

        monkeypatch.setattr(agreement, "_survey_once", broken)
        result = host.run(host.recall(agent, question, []))
    finally:
        restore()
    assert seen[0].words_led and not seen[1].words_led  # no survey: the embedder leads, as before it
    assert memory.db not in agreement._surveys and result["memories"]
    stats = host.import_plugin("helpers.report.stats").STATS.snapshot()
    assert stats["totals"].get("fallback", 0) == 0  # the plugin's own order, not the host's fallback


# --- a reranker's say where the words lead (calibration.lend_say) ---------------------------
def test_a_reranker_that_keeps_unrelated_memories_below_the_answer_has_full_say_where_the_words_lead(host):
    """A reranker short of some say on the calibration set but better than the store's
    embedder by twice a rerun's spread. Scoring the set's unrelated memories below the
    answer (an order, not noise): full say in a word-led store's new chat, so a pick that
    stands out reaches the prompt though the searches did not find it near the top; none in
    a conversation there, where the fused order is the embedder's. Scoring them above the
    answer as noise does: no say lent anywhere, and not asked."""
    import asyncio

    from tests.host.recall import pool_posts, set_plugin
    from tests.servers import start
    from tests.servers.scoring import fewest_known, partly_calibrated, partly_calibrated_mrr

    calibration = host.import_plugin("helpers.scoring.calibration")
    agent, memory = _turn_store(host, 120)
    question = "how did the pottery7 go next weekend?"
    history = [
        ("user", "we talked about the weekend"),
        ("ai", '{"tool_name": "response", "tool_args": {"text": "Yes."}}'),
    ]
    seen, restore = _searches(host)
    try:
        set_plugin(host, rerank_api="lexical", rerank_candidates=40)
        host.run(host.recall(agent, question, []))
        deep = [d for d in seen[0].pool if all(d is not f for f in seen[0].fused[:20])]
        target = deep[0].page_content  # in the pool sent, not among the fused order's first 20
        embedder, _ = asyncio.run(calibration.embedder_score(memory.db.embedding_function))
        n = len(calibration.ITEMS)
        known = fewest_known(lambda mrr: calibration.Trust("none", mrr, embedder, questions=n).surely_better)
        assert calibration.say_for(partly_calibrated_mrr(known), embedder) == "none"
        shown, said, asked = {}, {}, {}
        for clean in (True, False):
            knowing = partly_calibrated(known, clean=clean)
            with start("tei19", scorer=lambda q, d, knowing=knowing: 20.0 if d == target else knowing(q, d)) as srv:
                set_plugin(host, rerank_endpoint=srv.url, rerank_api="auto", rerank_candidates=40)
                host.import_plugin("helpers.reranker").reset_state()
                seen.clear()
                shown[clean] = [d.page_content for d in host.run(host.recall(agent, question, []))["memories"][:5]]
                srv.clear()
                conversation = host.run(host.recall(agent, question, history))
                asked[clean] = pool_posts(srv, memory)
                srv.clear()
                again = host.run(host.recall(agent, question, []))
                asked_again = pool_posts(srv, memory)
                tool = agent.get_tool(name="reranker_status", method=None, args={}, message="", loop_data=None)
                said[clean] = next(
                    line for line in host.run(tool.execute()).message.splitlines() if line.startswith("say in recall: ")
                )
            assert seen[0].trust.measured_say == "none" and seen[0].trust.keeps_unrelated_below is clean
            assert seen[0].words_led and seen[0].trust.lent is clean
            assert seen[0].trust.say == ("full" if clean else "none")
            assert not seen[1].words_led and seen[1].trust.say == "none"
            assert target not in [d.page_content for d in conversation["memories"][:5]]
            assert (target in [d.page_content for d in again["memories"][:5]]) is clean
            assert bool(asked_again) is clean  # the noisy one is asked no more once its say is known
    finally:
        restore()
    assert target in shown[True] and target not in shown[False]
    assert not asked[True] and not asked[False]  # a conversation's search lends nothing
    assert vocabulary_of(host).FULL_SAY_WHERE_WORDS_LEAD in said[True]
    assert vocabulary_of(host).FULL_SAY_WHERE_WORDS_LEAD not in said[False]
    assert "as noise does, so no search lends it a say" in said[False]
