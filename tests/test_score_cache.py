"""The score cache (helpers/scoring/cache.py): a reranker's scores are only ever read back
by the same reranker, also for a call that was in flight while the cache started over."""

from helpers.scoring.cache import ScoreCache

QUERY, DOCS = "which port does grafana use", ["grafana listens on 3001", "the user is vegetarian"]


def test_a_call_in_flight_across_the_namespace_reset_never_stores_under_another_rerankers_name():
    cache = ScoreCache()
    reranker_a = ("http://a:8080", "model-a", "tei")
    keys_a = cache.keys(reranker_a, QUERY, DOCS)  # A's call starts: it has its keys
    assert cache.lookup(keys_a) == [None, None]
    for i in range(1024):  # meanwhile 1,024 other rerankers: the next one starts the numbers over
        cache.keys(("http://other", f"model-{i}", "tei"), QUERY, DOCS)
    reranker_b = ("http://b:8080", "model-b", "tei")
    keys_b = cache.keys(reranker_b, QUERY, DOCS)
    cache.store(keys_a, [0.9, 0.1], ttl=300, max_entries=1000)  # A's answer arrives
    # Before: B was given the number A had, and read A's scores as its own.
    assert cache.lookup(keys_b) == [None, None]
    assert keys_a[0][0] != keys_b[0][0]


def test_forget_does_not_hand_out_a_number_again_either():
    cache = ScoreCache()
    keys_a = cache.keys("reranker a", QUERY, DOCS)
    cache.forget()  # reset_state, while A's call is in flight
    keys_b = cache.keys("reranker b", QUERY, DOCS)
    cache.store(keys_a, [0.9, 0.1], ttl=300, max_entries=1000)
    assert cache.lookup(keys_b) == [None, None]


def test_the_same_reranker_still_reads_its_own_scores():
    cache = ScoreCache()
    keys = cache.keys("reranker a", QUERY, DOCS)
    cache.store(keys, [0.9, 0.1], ttl=300, max_entries=1000)
    assert cache.lookup(cache.keys("reranker a", QUERY, DOCS)) == [0.9, 0.1]
