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


def _store(host, texts):
    from tests.host.recall import set_memory_config, set_plugin, wrapped_module

    set_memory_config(host, memory_recall_similarity_threshold=0.0)
    agent = host.agent()
    memory = host.run(host.memory(agent))
    host.run(host.insert(memory, texts))
    wrapped_module(host)
    host.toggle(True)
    set_plugin(host)
    return agent


def _searches(host):
    from tests.host.recall import spy_on_stage

    seen = []

    def spy(real, memory, search):
        real(memory, search)
        if search.area == "memories":
            seen.append(search)

    return seen, spy_on_stage(host.import_plugin("helpers.recall.pipeline"), "fuse", spy)


def test_after_three_strong_word_matches_the_embedder_missed_the_words_lead_a_new_chat(host):
    agent = _store(host, FILLER + ECHOES + NEEDLES)
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
    agent = _store(host, FILLER + ECHOES + PLAIN)
    seen, restore = _searches(host)
    try:
        for question in PLAIN_QUESTIONS * 2:
            host.run(host.recall(agent, question, []))
    finally:
        restore()
    assert all(s.found.best_word_coverage >= fusion.STRONG_COVERAGE for s in seen)
    assert not any(s.words_led for s in seen)


def test_in_a_conversation_the_fused_order_stands_in_a_word_led_store(host):
    agent = _store(host, FILLER + ECHOES + NEEDLES)
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
    agent = _store(host, FILLER + ECHOES + NEEDLES)
    seen, restore = _searches(host)
    try:
        for question in QUESTIONS:
            host.run(host.recall(agent, question, []))
        host.import_plugin("helpers.reranker").reset_state()
        host.run(host.recall(agent, QUESTIONS[3], []))
    finally:
        restore()
    assert seen[3].words_led and not seen[4].words_led
