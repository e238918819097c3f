"""One computation of what a search changed versus Agent Zero's own result (report/changes.py),
read by the chat line, the shadow stats and the decision log's summary."""

from helpers.report.changes import versus_host


def test_the_same_order_changes_nothing():
    c = versus_host(["a", "b", "c"], ["a", "b", "c"], 3)
    assert (c.top_changed, c.from_below_cut, c.entered_top_k, c.top_k_changed) == (False, 0, 0, False)
    assert c.overlap_at_k == 1.0 and c.rank_correlation == 1.0 and c.moves == (0, 0, 0)


def test_a_memory_from_below_the_hosts_cut_takes_the_first_place():
    c = versus_host(["a", "b", "c", "d"], ["x", "a", "d"], 2)  # top 2: x (new), a
    assert c.top_changed and c.from_below_cut == 1 and c.entered_top_k == 1 and c.top_k_changed
    assert c.overlap_at_k == 0.5 and c.moves == (1,)  # a moved from first to second


def test_entered_the_top_k_counts_what_the_host_held_further_down():
    c = versus_host(["a", "b", "c"], ["c", "a"], 2)
    assert c.from_below_cut == 0 and c.entered_top_k == 1 and c.moves == (2, 1)
    assert c.impact() == {"top_changed": True, "overlap_at_k": 0.5, "from_below_cut": 0, "rank_correlation": -1.0}


def test_an_empty_host_result_or_an_empty_answer():
    assert versus_host([], ["a"], 5).top_changed and versus_host([], ["a"], 5).from_below_cut == 1
    assert versus_host(["a"], [], 5).top_changed and versus_host(["a"], [], 5).moves == ()
