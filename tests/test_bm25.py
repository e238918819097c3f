from helpers.scoring import bm25, verdicts


def test_bm25_ranks_shared_rare_words_first():
    docs = ["Grafana listens on port 3001 on atlas.", "The user is vegetarian.", "Restart grafana with docker compose."]
    scores = bm25.bm25_scores("which port does grafana use", docs)
    assert scores[0] > scores[2] > scores[1] == 0.0


def test_bm25_passes_the_correctness_probe_honestly():
    rel, near, irr = bm25.bm25_scores(verdicts.PROBE_QUERY, verdicts.PROBE_DOCS)
    assert rel > near > irr == 0.0


def test_empty_inputs():
    assert bm25.bm25_scores("q", []) == []
    assert bm25.bm25_scores("", ["a b"]) == [0.0]
