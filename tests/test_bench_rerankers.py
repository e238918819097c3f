"""The bench's simulated rerankers (bench/relevance_rerankers.py) know the calibration set as
they know the corpus: the answer is relevant, its four candidates and its unrelated
memories are not. Unlabelled, a noisy oracle scores a text by word overlap alone, without
its noise, and the calibration would read it as a trained model that keeps memories about
something else below the answer (it did, on LoCoMo, before AskedOracle knew them)."""

import pytest

from bench.relevance_corpus import load
from bench.relevance_rerankers import AskedOracle, NoisyOracle, Oracle
from helpers.scoring import calibration


def _own_bench_oracle() -> Oracle:
    """The own bench's oracle, as bench.relevance builds it (the corpus's ids win)."""
    memories, questions = load()
    return Oracle(questions, memories)


@pytest.mark.parametrize("oracle", [_own_bench_oracle(), AskedOracle()], ids=["Oracle", "AskedOracle"])
def test_the_oracles_label_every_calibration_text(oracle):
    for item in calibration.ITEMS:
        labels = [oracle.label(item.query, t) for t in (*item.candidates, *item.unrelated)]
        assert labels == [n == item.answer for n in range(len(labels))], item.query


@pytest.mark.parametrize("oracle", [_own_bench_oracle(), AskedOracle()], ids=["Oracle", "AskedOracle"])
def test_noise_of_sigma_4_puts_unrelated_memories_above_the_answer_as_often_as_its_traps(oracle):
    noisy = NoisyOracle(oracle, 4.0)
    answers = [[noisy(i.query, t) for t in (*i.candidates, *i.unrelated)] for i in calibration.ITEMS]
    assert calibration.unrelated_above(answers, calibration.ITEMS) > 2 * calibration.UNRELATED_AT_MOST
