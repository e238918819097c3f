"""The word search's say in the fused order (helpers/recall/fusion.py ``with_word_picks``,
applied by helpers/recall/pipeline.py ``fuse``): in a new chat, up to 2 of the prompt's
last places go to memories the words rank high and the dense searches confirm; the fused
order's first 3 always stand; in a conversation the fused order stands as it is. And the
pool a reranker reads holds what only the words find."""

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


# --- through the stand-in host ----------------------------------------------------------
FILLER = [f"Notes on the garden, week {n}: watered the tomatoes and weeded the beds near the shed." for n in range(30)]
# The embedder (hashed words) ranks these by all their words alike; BM25 weighs the rare
# invoice number far above the common words.
GARDEN = [f"The garden plan for week {n}: the garden beds, the garden tomatoes, the garden shed." for n in range(8)]
NEEDLE = "The garden supplier: QX-7741 settled by transfer on Monday."  # 10th by the embedder, 1st by its words
QUESTION = "did the garden invoice QX-7741 get paid?"


def _recall(host, history):
    from tests.host.recall import set_memory_config, set_plugin, wrapped_module

    set_memory_config(host, memory_recall_similarity_threshold=0.0)
    agent = host.agent()
    memory = host.run(host.memory(agent))
    host.run(host.insert(memory, FILLER + GARDEN + [NEEDLE]))
    wrapped_module(host)
    host.toggle(True)
    set_plugin(host)
    return host.run(host.recall(agent, QUESTION, history))


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
        [[d for d, x in search.found.lists[r][:20] if x >= f] for r, f in roles], host.import_plugin("helpers.recall.store_search").doc_key)
    return [d.page_content for d, _ in fused]


def test_in_a_conversation_the_fused_order_stands(host):
    seen, restore = _words(host)
    try:
        _recall(host, [("user", "we talked about the garden"), ("ai", '{"tool_name": "response", "tool_args": {"text": "Yes, the garden."}}')])
    finally:
        restore()
    search = seen[0]
    assert "followup" in search.found.lists and "lexical" in search.found.lists
    fused_only = _fused_alone(host, search, ("message", search.message_threshold), ("followup", search.fused_threshold))
    assert [d.page_content for d in search.fused] == fused_only
