"""bench/rescore.py ships a recorded pool with each say the way pipeline.combine does (with
the policies off): no say is the fused order, some say only for standout picks the fused
order also holds near the top, full say for every standout pick, and the host's first and
Agent Zero's knowledge placed as in the recall."""

from bench.rescore import shipped


def _search(pool, fused, host_first=None, slots=5, limit=12):
    return {
        "candidates": pool,
        "fused": fused,
        "host_first": host_first,
        "slots": slots,
        "limit": limit,
        "area": "memories",
        "message": "which one?",
        "rerank_query": "which one?",
    }


POOL = [f"m{n}" for n in range(40)]
FUSED = POOL[:25]
# m3 (4th in the fused order) and m30 (deep in the pool, outside it) stand far out; the rest
# is noise. A pick takes the better of its two places, the one whose other place is better first.
SCORES = [10.0 if doc in ("m30", "m3") else (n % 7) * 0.1 for n, doc in enumerate(POOL)]


def test_no_say_is_the_fused_order_with_the_hosts_first_kept():
    assert shipped(_search(POOL, FUSED), SCORES, "logit", "none") == FUSED[:5]
    assert shipped(_search(POOL, FUSED, host_first="m20"), SCORES, "logit", "none") == ["m0", "m1", "m2", "m3", "m20"]


def test_full_say_lets_every_standout_pick_take_the_better_of_its_places():
    # m3 and m30 take their places; the other three are the best-scored of the fused
    # order's own first five (m0 0.0, m1 0.1, m2 0.2, m4 0.4): m0 makes way (fusion.make_room)
    assert shipped(_search(POOL, FUSED), SCORES, "logit", "full") == ["m3", "m30", "m1", "m2", "m4"]


def test_some_say_takes_only_the_standout_picks_the_fused_order_holds_near_the_top():
    # m30 is not in the fused order's first 20: only m3 is taken, already among the first
    # five, so no memory makes way
    assert shipped(_search(POOL, FUSED), SCORES, "logit", "some") == ["m3", "m0", "m1", "m2", "m4"]


def test_alone_is_the_rerankers_own_order_and_knowledge_goes_last_otherwise():
    assert shipped(_search(POOL, FUSED), SCORES, "logit", "alone")[:2] == ["m3", "m30"]
    fused = ["k:a.md#1", *FUSED]
    assert shipped(_search(POOL + ["k:a.md#1"], fused), SCORES + [0.0], "logit", "none") == FUSED[:5]


def test_the_hosts_first_takes_one_of_the_places_the_picks_leave():
    # m3, m30 and the host's m20 hold three places; the two left go to the best-scored of
    # the fused order's own first five (m2, m4)
    shipped_full = shipped(_search(POOL, FUSED, host_first="m20"), SCORES, "logit", "full")
    assert shipped_full == ["m3", "m30", "m2", "m4", "m20"]


def test_some_say_also_takes_a_pick_the_reranker_calls_relevant_when_its_line_can_be_read():
    # m30, deep in the pool, stands out at a logit of 10: the model calls it relevant. From a
    # reranker that kept the calibration's unrelated memories below the answer and called
    # none of them relevant it comes in with some say; from one that did not (or was not
    # asked them), only the fused order's first 20 count
    search = _search(POOL, FUSED)
    assert "m30" in shipped(search, SCORES, "logit", "some", unrelated_above=0.03, unrelated_relevant=0.0)
    assert "m30" not in shipped(search, SCORES, "logit", "some", unrelated_above=0.2)
    # one that calls the unrelated memories relevant too: its line cannot be read
    assert "m30" not in shipped(search, SCORES, "logit", "some", unrelated_above=0.03, unrelated_relevant=0.16)
    assert "m30" not in shipped(search, SCORES, "logit", "some")
    # a standout pick it does not call relevant (a logit below 0) still needs the fused order
    shy = [score - 10.5 for score in SCORES]  # m30 and m3 at -0.5, the rest far below
    assert "m30" not in shipped(search, shy, "logit", "some", unrelated_above=0.03, unrelated_relevant=0.0)


def test_a_reranker_that_keeps_unrelated_below_and_calls_its_best_relevant_leads_a_new_chat():
    # m3 and m30 at a logit of 10: called relevant. In a new chat's search (or a word-led
    # one) its order leads (ties in pool order: m6, m13, m20 at 0.6), with some say or full;
    # the host's first still keeps a place
    search = {**_search(POOL, FUSED), "new_chat": True}
    for say in ("some", "full"):
        assert shipped(search, SCORES, "logit", say, unrelated_above=0.03, unrelated_relevant=0.0) == [
            "m3",
            "m30",
            "m6",
            "m13",
            "m20",
        ]
        words_led = {**_search(POOL, FUSED), "words_led": True}
        assert shipped(words_led, SCORES, "logit", say, unrelated_above=0.03, unrelated_relevant=0.0) == [
            "m3",
            "m30",
            "m6",
            "m13",
            "m20",
        ]
    kept = shipped(
        {**search, "host_first": "m1"}, SCORES, "logit", "full", unrelated_above=0.03, unrelated_relevant=0.0
    )
    assert kept == ["m3", "m30", "m6", "m13", "m1"]
    # in a conversation (its query holds the conversation too): the standout rule
    in_conversation = _search(POOL, FUSED)
    assert shipped(in_conversation, SCORES, "logit", "full", unrelated_above=0.03, unrelated_relevant=0.0) == [
        "m3",
        "m30",
        "m1",
        "m2",
        "m4",
    ]
    # no say, a reranker not known to keep unrelated memories below (or one that does not),
    # one that calls them relevant too (noise of σ 2), or a best memory it does not call
    # relevant: the standout rule, as before
    noisy = shipped(search, SCORES, "logit", "full", unrelated_above=0.03, unrelated_relevant=0.16)
    assert noisy == ["m3", "m30", "m1", "m2", "m4"]
    assert shipped(search, SCORES, "logit", "none", unrelated_above=0.03, unrelated_relevant=0.0) == FUSED[:5]
    for unrelated_above in (None, 0.2):
        assert shipped(search, SCORES, "logit", "full", unrelated_above=unrelated_above) == [
            "m3",
            "m30",
            "m1",
            "m2",
            "m4",
        ]
    shy = [score - 10.5 for score in SCORES]
    assert shipped(search, shy, "logit", "full", unrelated_above=0.03, unrelated_relevant=0.0) == [
        "m3",
        "m30",
        "m1",
        "m2",
        "m4",
    ]
    # cosine and BM25 scales have no line between relevant and not: they never lead
    assert shipped(search, SCORES, "bm25", "full", unrelated_above=0.03, unrelated_relevant=0.0) != [
        "m3",
        "m30",
        "m6",
        "m13",
        "m20",
    ]
