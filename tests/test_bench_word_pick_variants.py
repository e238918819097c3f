"""bench/word_pick_variants.py orders a recorded new-chat search again with the word picks'
rules changed one at a time (as before the episode and the standout, a narrower episode or
dense depth, the picks and what they push out by both ranks), and leaves every other search
(and one it cannot rebuild as shipped) in its shipped order."""

from bench import word_pick_variants as variants
from bench.score_fusion import recall
from helpers.recall import fusion

THRESHOLD = 0.6


def _search(**more) -> dict:
    """The embedder's list d1..d6 stored at 10-15; the words' best w (stored at 12 unless
    ``stored_at`` says otherwise) is in none of the dense lists."""
    search = {
        "area": "memories",
        "slots": 5,
        "new_chat": True,
        "words_led": False,
        "lists": {
            "message": [[f"d{i}", 0.9 - i / 100] for i in range(1, 7)],
            "lexical": [["w", 9.0], ["d6", 6.5]] + [[f"x{i}", 3.0 + i / 100] for i in range(10)],
        },
        "stored_at": {**{f"d{i}": 9 + i for i in range(1, 7)}, "w": 12},
        "best_word_coverage": 0.3,
        "host_first": None,
    }
    search.update(more)
    search["shipped"] = variants.rebuilt(variants.shipped_picks, variants.strong_or_standing_out, THRESHOLD)(search)
    return search


def _far(**more) -> dict:
    return _search(stored_at={**_search()["stored_at"], "w": 400}, **more)


def _question(search: dict, relevant: str = "w") -> dict:
    return {"id": "q", "half": "tuned", "classes": ["all", "temporal"], "relevant": [relevant], "searches": [search]}


def _rows(questions: list[dict]) -> dict:
    return dict(variants.rows(questions, THRESHOLD, variants.faithful(questions, THRESHOLD)))


def _answered(search: dict, row: str, relevant: str = "w") -> bool:
    questions = [_question(search, relevant)]
    return recall(questions, _rows(questions)[row], "tuned")["all"] == (1, 1)


# The word list's scores alike enough that the best does not stand out.
FLAT = [["w", 3.0], ["d6", 2.9]] + [[f"x{i}", 2.8 - i / 10] for i in range(10)]


def test_a_word_match_stored_beside_the_fused_orders_first_is_confirmed_by_its_episode():
    near = _search(lists={**_search()["lists"], "lexical": FLAT})
    far = _far(lists={**_search()["lists"], "lexical": FLAT})
    assert near["shipped"][:5] == ["d1", "d2", "d3", "w", "d6"]
    assert far["shipped"][:5] == ["d1", "d2", "d3", "d6", "d4"]
    assert _answered(near, "shipped") and not _answered(far, "shipped")
    assert not _answered(near, "before the episode and the standout")
    assert _answered(near, "its episode alone")
    # within 2 of d1..d3 (stored at 10-12): w at 14 is, at 15 is not
    assert _answered(
        _search(lists={**_search()["lists"], "lexical": FLAT}, stored_at={"d3": 12, "w": 14}), "its episode within 2"
    )
    assert not _answered(
        _search(lists={**_search()["lists"], "lexical": FLAT}, stored_at={"d3": 12, "w": 15}), "its episode within 2"
    )


def test_the_best_word_match_takes_a_place_where_its_score_stands_out():
    far = _far()  # w's 9.0 stands out from the rest's 3.0-3.1
    assert fusion.stands_out_of_words([(m, s) for m, s in far["lists"]["lexical"]])
    assert _answered(far, "shipped") and _answered(far, "the standout alone")
    assert not _answered(far, "before the episode and the standout") and not _answered(far, "its episode alone")
    flat = _far(lists={**_search()["lists"], "lexical": FLAT})
    assert not _answered(flat, "shipped")


def test_a_pick_confirmed_only_below_the_depth_is_not_taken():
    # The words' best, d6, is the dense list's sixth: confirmed within 10, not within 5.
    search = _search(lists={**_search()["lists"], "lexical": [["d6", 9.0], ["w", 8.5]]}, stored_at={})
    fused = ["d1", "d2", "d3", "d4", "d5", "d6"]
    words = [("d6", 9.0), ("w", 8.5)]
    assert variants.confirmed_within(10)(fused, words, search)[:5] == ["d1", "d2", "d3", "d6", "d4"]
    assert variants.confirmed_within(5)(fused, words, search)[:5] == ["d1", "d2", "d3", "d4", "d5"]
    assert _answered(search, "confirmed within the dense lists' first 10", relevant="d6")
    assert not _answered(search, "confirmed within the dense lists' first 5", relevant="d6")


def test_a_memory_both_searches_rank_high_keeps_its_place_before_a_pick_only_the_words_rank_high():
    # x0 and x1: the words' best two, the dense list's 13th and 14th; d4: both lists' fourth.
    dense = [[f"d{i}", 0.9 - i / 100] for i in range(1, 13)] + [[f"x{i}", 0.7 - i / 100] for i in range(2)]
    words = [["x0", 9.0], ["x1", 8.9], ["d1", 8.0], ["d4", 7.9]]
    search = _search(lists={"message": dense, "lexical": words}, stored_at={})
    fused, pairs = [m for m, _ in dense], [(m, s) for m, s in words]
    assert variants.shipped_picks(fused, pairs, search)[:5] == ["d1", "d2", "d3", "x0", "x1"]  # d4 pushed out
    assert variants.picked_by_both_ranks(fused, pairs, search)[:5] == ["d1", "d2", "d3", "d4", "x0"]
    assert not _answered(search, "shipped", relevant="d4")
    assert _answered(search, "the picks and the memories they push out, by both ranks", relevant="d4")


def test_other_searches_and_unfaithful_rebuilds_keep_their_shipped_order():
    for changed in ({"words_led": True}, {"new_chat": False}):
        search = _search(**changed)
        search["shipped"] = ["d1", "d2", "d3", "d4", "d5"]
        assert not _answered(search, "its episode within 2")
    stale = _search()
    stale["shipped"] = ["d5", "d4", "d3", "d2", "d1"]  # not what the shipped rules give
    assert variants.faithful([_question(stale)], THRESHOLD) == set()
    assert not _answered(stale, "its episode within 2")
