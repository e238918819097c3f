"""bench/word_pick_variants.py orders a recorded new-chat search again with a word match
confirmed by its episode, or the best word match given a place where its score stands out,
leaves every other search (and one it cannot rebuild as shipped) in its shipped order."""

from bench import word_pick_variants as variants
from bench.score_fusion import recall

THRESHOLD = 0.6


def _search(**more) -> dict:
    """The embedder's list d1..d6 stored at 10-15; the words' best w (stored at ``w_at``)
    is in none of the dense lists."""
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
    search["shipped"] = variants.rebuilt(variants.confirmed_by_dense, variants.strong_by_coverage, THRESHOLD)(search)
    return search


def _question(search: dict, relevant: str = "w") -> dict:
    return {"id": "q", "half": "tuned", "classes": ["all", "temporal"], "relevant": [relevant], "searches": [search]}


def _rows(questions: list[dict]) -> dict:
    return dict(variants.rows(questions, THRESHOLD, variants.faithful(questions, THRESHOLD)))


def test_a_word_match_stored_beside_the_fused_orders_first_is_confirmed_by_its_episode():
    near, far = _search(), _search(stored_at={**_search()["stored_at"], "w": 400})
    assert "w" not in near["shipped"][:5]  # the dense lists do not confirm it: not shown
    fused = ["d1", "d2", "d3", "d4", "d5", "d6"]
    words = [("w", 9.0), ("d6", 6.5)]
    assert variants.confirmed_by_episode(2)(fused, words, near)[:5] == ["d1", "d2", "d3", "w", "d6"]
    assert variants.confirmed_by_episode(2)(fused, words, far)[:5] == ["d1", "d2", "d3", "d6", "d4"]
    rows = _rows([_question(near)])
    assert recall([_question(near)], rows["confirmed by its episode too, within 2"], "tuned")["all"] == (1, 1)
    assert recall([_question(far)], _rows([_question(far)])["confirmed by its episode too, within 2"], "tuned")[
        "all"
    ] == (0, 1)


def test_the_best_word_match_takes_a_place_where_its_score_stands_out():
    far = _search(stored_at={**_search()["stored_at"], "w": 400})
    questions = [_question(far)]
    rows = _rows(questions)
    assert recall(questions, rows["shipped"], "tuned")["all"] == (0, 1)
    assert recall(questions, rows["the best word match where it stands out"], "tuned")["all"] == (1, 1)
    # scores alike: nothing stands out
    flat = _search(
        stored_at={**_search()["stored_at"], "w": 400},
        lists={**far["lists"], "lexical": [["w", 3.0], ["d6", 2.9]] + [[f"x{i}", 2.8 - i / 10] for i in range(10)]},
    )
    assert recall([_question(flat)], _rows([_question(flat)])["the best word match where it stands out"], "tuned")[
        "all"
    ] == (0, 1)


def test_other_searches_and_unfaithful_rebuilds_keep_their_shipped_order():
    for changed in ({"words_led": True}, {"new_chat": False}):
        search = _search(**changed)
        search["shipped"] = ["d1", "d2", "d3", "d4", "d5"]
        questions = [_question(search)]
        assert recall(questions, _rows(questions)["both, within 5"], "tuned")["all"] == (0, 1)
    stale = _search(stored_at={**_search()["stored_at"], "w": 400})
    stale["shipped"] = ["d5", "d4", "d3", "d2", "d1"]  # not what the shipped rules give
    assert variants.faithful([_question(stale)], THRESHOLD) == set()
    assert recall([_question(stale)], _rows([_question(stale)])["both, within 5"], "tuned")["all"] == (0, 1)
