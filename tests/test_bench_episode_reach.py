"""bench/episode_reach.py orders a recorded word-led search again with the plugin's own
fusion.word_led at each reach (the embedder's guess keeps the last slot only when stored
beside a word match above it), leaves every other search as shipped, and refuses a dump
whose word-led orders are not what the shipped reach gives."""

import pytest

from bench import episode_reach
from bench.score_fusion import recall
from helpers.recall import fusion

THRESHOLD = 0.6


def _search(guess_at: int, **more) -> dict:
    """Words w1..w5 stored at 100-103 and 300; the embedder's guess g at ``guess_at``."""
    words = [["w1", 9.0], ["w2", 8.0], ["w3", 7.0], ["w4", 6.0], ["w5", 5.0]]
    search = {
        "area": "memories",
        "slots": 5,
        "lists": {"message": [["g", 0.9], ["w2", 0.8], ["low", 0.5]], "lexical": words},
        "stored_at": {"w1": 100, "w2": 101, "w3": 102, "w4": 103, "w5": 300, "g": guess_at},
        "host_first": None,
        "words_led": True,
    }
    search["shipped"] = episode_reach.word_led(search, fusion.EPISODE_REACH, THRESHOLD)
    return {**search, **more}


def test_the_guess_keeps_the_last_slot_only_within_the_reach():
    near, far = _search(103 + 3), _search(103 + 30)
    assert episode_reach.word_led(near, 3, THRESHOLD)[:5] == ["w1", "w2", "w3", "w4", "g"]
    assert episode_reach.word_led(far, 3, THRESHOLD)[:5] == ["w1", "w2", "w3", "w4", "w5"]
    assert episode_reach.word_led(far, episode_reach.ALWAYS, THRESHOLD)[:5] == ["w1", "w2", "w3", "w4", "g"]
    # the message's memories below its threshold are no guess
    below = _search(500, lists={"message": [["low", 0.5]], "lexical": far["lists"]["lexical"]})
    assert episode_reach.word_led(below, episode_reach.ALWAYS, THRESHOLD)[:5] == ["w1", "w2", "w3", "w4", "w5"]


def test_searches_the_words_did_not_lead_keep_their_shipped_order():
    search = _search(133, words_led=False, shipped=["x", "y"])
    assert episode_reach.reach_order(1, THRESHOLD)(search) == ["x", "y"]


def test_a_dump_whose_word_led_order_is_not_the_shipped_reachs_is_refused():
    questions = [{"id": "q", "half": "held", "classes": ["all", "a"], "relevant": ["w5"], "searches": [_search(133)]}]
    assert episode_reach.check(questions, THRESHOLD) == 1
    stale = _search(133)
    stale["shipped"] = ["w1", "w2", "w3", "w4", "g", "w5"]
    with pytest.raises(SystemExit, match="not the shipped one"):
        episode_reach.check([{**questions[0], "searches": [stale]}], THRESHOLD)
    far = recall(questions, episode_reach.reach_order(fusion.EPISODE_REACH, THRESHOLD), "held")
    always = recall(questions, episode_reach.reach_order(episode_reach.ALWAYS, THRESHOLD), "held")
    assert far["all"] == (1, 1) and always["all"] == (0, 1)


def test_the_message_threshold_is_the_recalls():
    assert episode_reach.message_threshold() == min(0.7, 0.6)
