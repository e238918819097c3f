"""Big inputs never stall the event loop every chat shares: BM25 reads each memory cut to
rerank_max_doc_chars, and tokenizes in a thread; the utility judge folds only the start of a
memory it shows; MMR over the host's vectors is numpy over the whole pool at once. What each
costs on the loop is measured in bench/loop_stall.py (big_input_rows), not timed here."""

import asyncio
import random
import threading

import numpy as np
import pytest

from helpers.recall import policies
from helpers.scoring import bm25, judge
from helpers.deadline import Deadline
from helpers.scoring.scorers.lexical import LEXICAL
from helpers.settings import Settings

QUERY = "which port does grafana use"
# The query's words only far past the budget: a memory of 250 KB, read as its first 8,000.
BIG = ("the user keeps notes on the garden and recipes. " * 5300) + "grafana listens on port 3001"
OTHER = "grafana moved to port 3002 last spring"


def _lexical_scores(documents, **config):
    settings = Settings.from_mapping({"rerank_api": "lexical", **config})
    return asyncio.run(LEXICAL.score(settings, None, QUERY, documents, Deadline.after(5)))


def test_bm25_scores_a_250_kb_memory_as_its_first_max_doc_chars():
    assert len(BIG) > 250_000
    scores = _lexical_scores([BIG, OTHER], rerank_max_doc_chars=8000)
    assert scores == bm25.bm25_scores(QUERY, [BIG[:8000], OTHER])
    assert scores[0] == 0.0 < scores[1]  # before: the whole memory was read, its late words counted


def test_bm25_tokenizes_in_a_thread_not_on_the_event_loop(monkeypatch):
    real, threads = bm25.bm25_scores, []
    monkeypatch.setattr(bm25, "bm25_scores", lambda q, docs: threads.append(threading.get_ident()) or real(q, docs))

    async def main():
        loop_thread = threading.get_ident()
        settings = Settings.from_mapping({"rerank_api": "lexical"})
        await LEXICAL.score(settings, None, QUERY, [BIG, OTHER], Deadline.after(5))
        return loop_thread

    loop_thread = asyncio.run(main())
    assert threads and loop_thread not in threads


class _CountingPattern:
    """judge._SPACE, counting how many characters it is asked to fold."""

    def __init__(self, pattern):
        self.pattern, self.folded = pattern, 0

    def sub(self, replacement, text):
        self.folded += len(text)
        return self.pattern.sub(replacement, text)


def test_the_judge_folds_only_the_start_of_a_big_memory(monkeypatch):
    counting = _CountingPattern(judge._SPACE)
    monkeypatch.setattr(judge, "_SPACE", counting)
    line = judge.one_line(BIG, 600)
    assert line == " ".join(BIG.split())[:600]
    assert counting.folded < 10 * 600  # before: all 250 KB were folded to keep 600 characters


@pytest.mark.parametrize("seed", range(200))
def test_the_judge_reads_the_same_line_as_folding_the_whole_memory(seed):
    rng = random.Random(seed)
    pieces = ["word", "x", " ", "  ", "\n\n\t", " " * rng.randint(50, 3000), "ünï", "\r\n"]
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
    budget = rng.choice([50, 64, 100, 500])
    assert judge.one_line(text, budget) == judge._SPACE.sub(" ", text).strip()[:budget]


def _case(rng: random.Random, n: int):
    vectors = np.array([[rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(5)] for _ in range(n)]).reshape(n, 5)
    matrix = vectors @ vectors.T
    relevance = [rng.choice([0.1, 0.5, 0.9, rng.random()]) for _ in range(n)]  # ties on purpose
    tiebreak = [rng.choice([1.0, 2.0, rng.random()]) for _ in range(n)]
    return matrix, relevance, tiebreak


@pytest.mark.parametrize("seed", range(100))
def test_mmr_over_a_matrix_picks_exactly_what_the_pure_loop_picks(seed):
    rng = random.Random(seed)
    matrix, relevance, tiebreak = _case(rng, rng.randint(0, 30))
    lam = rng.choice([0.0, 0.3, 0.5, 0.7, 1.0, rng.random()])
    pure = policies.mmr(relevance, lam, lambda i, j: float(matrix[i][j]), tiebreak)
    assert policies.mmr_matrix(relevance, lam, matrix, tiebreak) == pure


class _Doc:
    def __init__(self, text):
        self.page_content, self.metadata = text, {}


def test_diversity_over_the_hosts_vectors_never_runs_the_pure_loop(monkeypatch):
    rng = random.Random(5)
    matrix, relevance, _ = _case(rng, 40)
    docs = [_Doc(f"memory {i}") for i in range(40)]
    expected = policies.mmr(relevance, 0.7, lambda i, j: float(matrix[i][j]), relevance)

    def pure(*args, **kwargs):
        raise AssertionError("the O(n^2) Python loop ran over the host's vectors")

    monkeypatch.setattr(policies, "mmr", pure)
    settings = Settings.from_mapping({"rerank_mmr_lambda": 0.7})
    outcome = policies.order(settings, docs, relevance, "probability", similarities=lambda kept: matrix)
    assert outcome.docs == [docs[i] for i in expected]
