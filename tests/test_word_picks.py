"""The word search's say in the fused order (helpers/recall/fusion.py ``with_word_picks``,
applied by helpers/recall/pipeline.py ``fuse``): in a new chat, up to 2 of the prompt's
last places go to memories the words rank high and the dense searches confirm, or that
were stored beside the fused order's first; the best word match goes after the first 3
when it holds half the message's words or its score stands out; the fused order's first 3
always stand; in a conversation the fused order stands as it is. And the pool a reranker
reads holds what only the words find."""

from helpers.recall import fusion

key = str


def test_confirmed_word_matches_take_the_last_places_and_the_first_three_stand():
    fused = list("abcdefgh")
    words = [("g", 9.0), ("a", 8.5), ("h", 8.0), ("z", 7.9)]
    assert fusion.with_word_picks(fused, words, [fused], 5, key) == list("abcghdef")


def test_a_word_match_the_dense_searches_did_not_find_takes_no_place():
    fused = list("abcdefgh")
    assert fusion.with_word_picks(fused, [("z", 9.0), ("q", 8.0)], [fused], 5, key) == fused


def test_a_weak_word_match_takes_no_place():
    fused = list("abcdefgh")
    words = [("a", 10.0), ("g", 6.9), ("h", 7.0)]  # g is below 0.7 of the best
    assert fusion.with_word_picks(fused, words, [fused], 5, key) == list("abchdefg")


def test_a_short_prompt_keeps_the_fused_order():
    fused = list("abcdef")
    assert fusion.with_word_picks(fused, [("f", 9.0)], [fused], 3, key) == fused  # 3 slots: all the fused order's
    assert fusion.with_word_picks(fused, [("f", 9.0)], [fused], 4, key) == list("abcfde")


def test_confirmation_reads_only_the_dense_lists_first_twenty():
    fused = [f"m{n}" for n in range(30)]
    assert fusion.with_word_picks(fused, [("m25", 9.0)], [fused], 5, key) == fused
    assert fusion.with_word_picks(fused, [("m19", 9.0)], [fused], 5, key)[3] == "m19"


def test_a_word_match_stored_beside_the_fused_orders_first_is_confirmed_by_its_episode():
    fused = list("abcdefgh")
    words = [("z", 9.0), ("q", 8.0)]  # in none of the dense lists
    beside = {"a": 100, "b": 400, "c": 700, "z": 100 + fusion.EPISODE_REACH, "q": 700 - fusion.EPISODE_REACH}
    assert fusion.with_word_picks(fused, words, [fused], 5, key, beside) == list("abczqdefgh")
    apart = {**beside, "z": 101 + fusion.EPISODE_REACH, "q": 699 - fusion.EPISODE_REACH}
    assert fusion.with_word_picks(fused, words, [fused], 5, key, apart) == fused
    # beside the fused order's fourth only: not its first three
    assert fusion.with_word_picks(fused, words, [fused], 5, key, {**apart, "d": 110}) == fused
    # a place not known confirms nothing
    assert fusion.with_word_picks(fused, words, [fused], 5, key, {"z": 100, "q": 100}) == fused
    assert fusion.with_word_picks(fused, words, [fused], 5, key, {"a": 100}) == fused


def test_an_episode_confirms_but_a_weak_word_match_still_takes_no_place():
    fused = list("abcdefgh")
    words = [("y", 10.0), ("z", 6.9)]  # z is below 0.7 of the best; y is stored far from all
    assert fusion.with_word_picks(fused, words, [fused], 5, key, {"a": 5, "z": 6, "y": 900}) == fused


# --- through the stand-in host ----------------------------------------------------------
FILLER = [f"Notes on the garden, week {n}: watered the tomatoes and weeded the beds near the shed." for n in range(30)]
# The embedder (hashed words) ranks these by all their words alike; BM25 weighs the rare
# invoice number far above the common words.
GARDEN = [f"The garden plan for week {n}: the garden beds, the garden tomatoes, the garden shed." for n in range(8)]
NEEDLE = "The garden supplier: QX-7741 settled by transfer on Monday."  # 10th by the embedder, 1st by its words
QUESTION = "did the garden invoice QX-7741 get paid?"


def _recall(host, history, question=QUESTION, extra=(), **config):
    from tests.host.recall import set_memory_config, set_plugin, wrapped_module

    set_memory_config(host, memory_recall_similarity_threshold=0.0)
    agent = host.agent()
    memory = host.run(host.memory(agent))
    host.run(host.insert(memory, FILLER + GARDEN + list(extra) + [NEEDLE]))
    wrapped_module(host)
    host.toggle(True)
    set_plugin(host, **config)
    return host.run(host.recall(agent, question, history))


def _words(host):
    from tests.host.recall import spy_on_stage

    seen = []

    def spy(real, memory, search):
        real(memory, search)
        seen.append(search)

    return seen, spy_on_stage(host.import_plugin("helpers.recall.pipeline"), "fuse", spy)


def test_in_a_new_chat_the_word_search_is_searched_and_confirmed_picks_reach_the_prompt(host):
    seen, restore = _words(host)
    try:
        result = _recall(host, [])
    finally:
        restore()
    search = seen[0]
    words = [d.page_content for d, _ in search.found.lists["lexical"]]
    assert words[0] == NEEDLE
    dense_alone = _fused_alone(host, search, ("message", search.message_threshold))
    assert NEEDLE not in dense_alone[:5]  # the embedder alone would not show it
    assert NEEDLE in [d.page_content for d in result["memories"][:5]]


def _fused_alone(host, search, *roles):
    fused = host.import_plugin("helpers.recall.fusion").fuse(
        [[d for d, x in search.found.lists[r][:20] if x >= f] for r, f in roles],
        host.import_plugin("helpers.recall.store_search").doc_key,
    )
    return [d.page_content for d, _ in fused]


def test_in_a_conversation_the_fused_order_stands(host):
    seen, restore = _words(host)
    try:
        _recall(
            host,
            [
                ("user", "we talked about the garden"),
                ("ai", '{"tool_name": "response", "tool_args": {"text": "Yes, the garden."}}'),
            ],
        )
    finally:
        restore()
    search = seen[0]
    assert "followup" in search.found.lists and "lexical" in search.found.lists
    fused_only = _fused_alone(host, search, ("message", search.message_threshold), ("followup", search.fused_threshold))
    assert [d.page_content for d in search.fused] == fused_only


# --- a strong word match (fusion.with_strong_word_match) ---------------------------------
def test_a_strong_word_match_takes_the_place_after_the_first_three_even_when_the_embedder_missed_it():
    fused = list("abcdefgh")
    assert fusion.with_strong_word_match(fused, "z", 0.5, 5, key) == list("abczdefgh")
    assert fusion.with_strong_word_match(fused, "g", 0.9, 5, key) == list("abcgdefh")


def test_a_weak_or_already_shown_word_match_or_a_short_prompt_changes_nothing():
    fused = list("abcdefgh")
    assert fusion.with_strong_word_match(fused, "z", 0.49, 5, key) == fused
    assert fusion.with_strong_word_match(fused, "c", 1.0, 5, key) == fused  # already in the prompt
    assert fusion.with_strong_word_match(fused, "z", 1.0, 3, key) == fused  # the fused order keeps its 3
    assert fusion.with_strong_word_match(fused, None, 1.0, 5, key) == fused


def test_a_best_word_match_whose_score_stands_out_is_strong_whatever_its_share_of_the_words():
    fused = list("abcdefgh")
    assert fusion.with_strong_word_match(fused, "z", 0.2, 5, key, stands_out=True) == list("abczdefgh")
    assert fusion.with_strong_word_match(fused, "z", 0.2, 5, key, stands_out=False) == fused
    assert fusion.with_strong_word_match(fused, "c", 0.2, 5, key, stands_out=True) == fused  # shown already


def test_the_best_word_match_stands_out_by_the_rule_a_rerankers_pick_must_meet():
    apart = [("z", 12.0)] + [(f"m{n}", 4.0 + n / 10) for n in range(19, 0, -1)]
    assert fusion.stands_out_of_words(apart)
    close = [("z", 6.2)] + [(f"m{n}", 4.0 + n / 10) for n in range(19, 0, -1)]
    assert not fusion.stands_out_of_words(close)
    alike = [(f"m{n}", 3.0) for n in range(20)]
    assert not fusion.stands_out_of_words(alike)
    assert not fusion.stands_out_of_words([("z", 9.0), ("y", 1.0)])  # too few to say
    assert not fusion.stands_out_of_words([])


def test_coverage_is_the_idf_weighted_share_of_the_message_words_a_memory_holds(host):
    from langchain_core.documents import Document

    index_module = host.import_plugin("helpers.recall.lexical_index")
    index = index_module.StoreIndex()
    texts = {
        "a": "the garden invoice QX-7741 was paid",
        "b": "the garden was watered",
        "c": "QX-7741 paid",
        "d": "nothing in common here",
    }
    for doc_id, text in texts.items():
        index._add(doc_id, text)
    for n in range(20):  # "garden" is common in this store, "qx-7741" rare
        index._add(f"f{n}", f"garden notes {n}")
    doc = lambda doc_id: Document(page_content=texts[doc_id], metadata={"id": doc_id})  # noqa: E731
    question = "was the garden invoice QX-7741 paid"
    assert index.coverage(question, doc("a")) == 1.0
    assert index.coverage(question, doc("d")) == 0.0
    assert index.coverage(question, doc("c")) > 0.5 > index.coverage(question, doc("b")) > 0.0
    assert index.coverage(question, Document(page_content="x", metadata={"id": "not indexed"})) == 0.0
    assert index.coverage("", doc("a")) == 0.0


# Memories the embedder ranks above the needle for this message (they share its common
# words), none holding its rare one.
ECHOES = [f"When was the supplier settled? In week {n} the supplier was settled when it came." for n in range(30)]
SUPPLIER = "when was the supplier QX-7741 settled?"


def test_in_a_new_chat_a_strong_word_match_reaches_the_prompt_though_no_dense_list_holds_it(host):
    seen, restore = _words(host)
    try:
        result = _recall(host, [], SUPPLIER, extra=ECHOES)
    finally:
        restore()
    search = seen[0]
    dense = [d.page_content for d, _ in search.found.lists["message"][:20]]
    assert NEEDLE not in dense  # the embedder's list does not hold it: no word pick can confirm it
    assert search.found.best_word_coverage >= fusion.STRONG_COVERAGE
    assert [d.page_content for d in search.fused].index(NEEDLE) == fusion.FUSED_KEEPS
    assert len(search.fused_scores) == len(search.fused)
    assert NEEDLE in [d.page_content for d in result["memories"][:5]]


def test_in_a_conversation_a_strong_word_match_takes_no_place(host):
    seen, restore = _words(host)
    try:
        _recall(
            host,
            [("user", "we talked about suppliers"), ("ai", '{"tool_name": "response", "tool_args": {"text": "Yes."}}')],
            SUPPLIER,
            extra=ECHOES,
        )
    finally:
        restore()
    assert NEEDLE not in [d.page_content for d in seen[0].fused[:5]]


# --- a word match confirmed by its episode, a best word match that stands out -----------
ASKS = [
    f"Which manager, which bank and what method did the supplier use in week {n}: the usual ones." for n in range(30)
]
LOTS = [f"Report QX-7741 filed for lot {n}." for n in range(12)]  # stored long before
BESIDE = "Report QX-7741 filed for lot 99."  # stored in the middle of the ASKS
LOT_QUESTION = "which manager paid report QX-7741 and by which bank and what method?"


def _recall_store(host, memories, question):
    from tests.host.recall import set_memory_config, set_plugin, wrapped_module

    set_memory_config(host, memory_recall_similarity_threshold=0.0)
    agent = host.agent()
    memory = host.run(host.memory(agent))
    host.run(host.insert(memory, memories))
    wrapped_module(host)
    host.toggle(True)
    set_plugin(host)
    return host.run(host.recall(agent, question, []))


def test_in_a_new_chat_a_word_match_stored_beside_the_embedders_first_reaches_the_prompt(host):
    seen, restore = _words(host)
    try:
        result = _recall_store(host, LOTS + FILLER + ASKS[:15] + [BESIDE] + ASKS[15:], LOT_QUESTION)
    finally:
        restore()
    search = seen[0]
    key = host.import_plugin("helpers.recall.store_search").doc_key
    words = search.found.lists["lexical"]
    # Every report scores alike, nothing stands out, none holds half the message's words, and
    # the embedder's list holds none of them: only their places in the store tell them apart.
    assert {round(score, 6) for _, score in words[:13]} == {round(words[0][1], 6)}
    assert not fusion.stands_out_of_words(words) and search.found.best_word_coverage < fusion.STRONG_COVERAGE
    assert not {d.page_content for d, _ in search.found.lists["message"][:20]} & {BESIDE, *LOTS}
    at = search.found.stored_at[key(next(d for d, _ in words if d.page_content == BESIDE))]
    heads = [search.found.stored_at[key(d)] for d in search.fused[: fusion.FUSED_KEEPS]]
    assert any(abs(at - head) <= fusion.EPISODE_REACH for head in heads)  # the embedder's first three: ASKS
    shown = [d.page_content for d in result["memories"][:5]]
    assert BESIDE in shown and not set(LOTS) & set(shown)  # the reports stored apart stay out


def test_in_a_new_chat_a_best_word_match_that_stands_out_reaches_the_prompt(host):
    names = [
        "Brightwater sent a letter about the fence.",
        "Tamsin called about the hedge.",
        "Oakhurst quoted for the paving.",
    ]
    question = (
        "when was the supplier QX-7741 settled, and by which manager and which bank and what method: "
        "Brightwater, Tamsin or Oakhurst?"
    )
    seen, restore = _words(host)
    try:
        result = _recall(host, [], question, extra=ECHOES + ASKS + names)
    finally:
        restore()
    search = seen[0]
    words = search.found.lists["lexical"]
    assert words[0][0].page_content == NEEDLE
    assert search.found.best_word_coverage < fusion.STRONG_COVERAGE  # not a strong word match
    assert fusion.stands_out_of_words(words)
    assert NEEDLE not in [d.page_content for d, _ in search.found.lists["message"][:20]]  # no word pick can take it
    assert [d.page_content for d in search.fused].index(NEEDLE) == fusion.FUSED_KEEPS
    assert NEEDLE in [d.page_content for d in result["memories"][:5]]
