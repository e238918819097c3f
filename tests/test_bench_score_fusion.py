"""bench/score_fusion.py fuses a recorded search's dense and word lists by their z-scores (a
memory one list missed gets that list's lowest), places the score fusion's first before
the shipped order only where the shipped order did not already rest on another list, and
counts a question answered when a relevant memory is within its search's slots."""

from bench.score_fusion import combsum, recall, score_fusion_first, zscores


def _search(dense, words, shipped, **more):
    return {"area": "memories", "slots": 2, "lists": {"message": dense, "lexical": words}, "shipped": shipped, **more}


# m1 leads the dense list by a little, m2 leads the word list by far; m3 only the dense list has.
DENSE = [["m1", 0.80], ["m2", 0.78], ["m3", 0.70]]
WORDS = [["m2", 12.0], ["m4", 3.0], ["m1", 2.0]]
SHIPPED = ["m1", "m3", "m2", "m4"]


def test_zscores_are_distances_from_the_mean_in_deviations():
    assert zscores([1.0, 3.0]) == [-1.0, 1.0]
    assert zscores([5.0]) == [0.0]
    assert zscores([2.0, 2.0, 2.0]) == [0.0, 0.0, 0.0]


def test_a_far_lead_in_one_list_outweighs_a_small_lead_in_the_other():
    assert combsum(_search(DENSE, WORDS, SHIPPED), 0.5)[0] == "m2"
    assert combsum(_search(DENSE, WORDS, SHIPPED), 1.0)[:3] == ["m1", "m2", "m3"]


def test_a_memory_missing_from_a_list_gets_that_lists_lowest():
    order = combsum(_search(DENSE, WORDS, SHIPPED), 0.5)
    # m3: dense z of its 3rd place plus the word list's lowest; m4: the word list's 2nd, the dense lowest.
    assert set(order) == {"m1", "m2", "m3", "m4"} and order.index("m3") > order.index("m1")


def test_the_score_fusions_first_go_before_the_shipped_order_without_repeating():
    order = score_fusion_first(1, 0.5, word_led_too=False)(_search(DENSE, WORDS, SHIPPED))
    assert order == ["m2", "m1", "m3", "m4"]


def test_the_shipped_order_stays_where_it_rests_on_a_followup_or_the_words():
    with_followup = _search(DENSE, WORDS, SHIPPED)
    with_followup["lists"]["followup"] = DENSE
    first = score_fusion_first(1, 0.5, word_led_too=False)
    assert first(with_followup) == SHIPPED
    assert first(_search(DENSE, WORDS, SHIPPED, words_led=True)) == SHIPPED
    assert score_fusion_first(1, 0.5, word_led_too=True)(_search(DENSE, WORDS, SHIPPED, words_led=True))[0] == "m2"


def test_recall_counts_a_relevant_memory_within_the_slots_per_class_and_half():
    questions = [
        {"half": "held", "classes": ["all", "a"], "relevant": ["m3"], "searches": [_search(DENSE, WORDS, SHIPPED)]},
        {"half": "held", "classes": ["all", "b"], "relevant": ["m4"], "searches": [_search(DENSE, WORDS, SHIPPED)]},
        {"half": "tuned", "classes": ["all", "a"], "relevant": ["m1"], "searches": [_search(DENSE, WORDS, SHIPPED)]},
    ]
    held = recall(questions, lambda s: s["shipped"], "held")
    assert held == {"all": (1, 2), "a": (1, 1), "b": (0, 1)}
    assert recall(questions, lambda s: s["shipped"], "tuned") == {"all": (1, 1), "a": (1, 1)}
