"""The relevance bench's weak judges (bench/relevance_judges.py) fail the way they are meant
to, on the plugin's own judge prompt, and still pass the connection probe."""

import asyncio
import json

from bench import relevance_judges as judges
from helpers.scoring import judge
from helpers.scoring.verdicts import IRRELEVANT, NEAR_MISS, PROBE_QUERY, RELEVANT

QUERY = "Where did Marisol's cousin Teodoro open his bakery?"
ANSWER = "Her mother's nephew runs a bread shop in Oaxaca now."  # a paraphrase: no shared word
DISTRACTOR = "Marisol and Teodoro argued about the bakery's opening hours."
OTHERS = ["The user jogs every morning.", "A cat sleeps on the sofa.", "Teodoro likes jazz."]
POOL = [*OTHERS, DISTRACTOR, ANSWER]


def _label(query, document):
    return document == ANSWER if query.startswith(QUERY) else None


def _answer(j, query, documents) -> list[int]:
    prompt = judge.build(query, documents, 6000, 400)
    return json.loads(j.answer(prompt.message))


def test_the_rare_words_judge_lists_the_distractor_first_and_never_the_paraphrase():
    listed = _answer(judges.word_overlap(_label, POOL, picks=3), QUERY, POOL)
    assert listed[0] == POOL.index(DISTRACTOR)
    assert POOL.index(ANSWER) not in listed
    assert len(listed) <= 3


def test_the_positional_judge_lists_the_first_memories_shown():
    assert _answer(judges.positional(_label, POOL, picks=3), QUERY, POOL) == [0, 1, 2]


def test_every_weak_judge_puts_the_probes_relevant_memory_first():
    order = [NEAR_MISS, IRRELEVANT, RELEVANT]
    for j in (
        judges.word_overlap(_label, POOL),
        judges.positional(_label, POOL),
        judges.slow(_label, POOL, per_char=0.0),
    ):
        assert _answer(j, PROBE_QUERY, order)[0] == order.index(RELEVANT)


def test_the_slow_judge_is_right_and_takes_longer_the_longer_its_prompt(monkeypatch):
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    monkeypatch.setattr(judges.asyncio, "sleep", sleep)
    j = judges.slow(_label, POOL, per_char=judges.SLOW_PER_CHAR)
    probe = judge.build(PROBE_QUERY, [NEAR_MISS, IRRELEVANT, RELEVANT], 6000, 400)
    pool = judge.build(QUERY, POOL * 40, 6000, 400)  # the judge's budget of memories, full
    asyncio.run(j(probe.system, probe.message))
    assert json.loads(asyncio.run(j(pool.system, pool.message)))[0] == POOL.index(ANSWER)
    assert waits == [judges.SLOW_PER_CHAR * len(probe.message), judges.SLOW_PER_CHAR * len(pool.message)]
    assert waits[0] < 8.0 < waits[1]  # the probe within rerank_timeout's default, a pool past it
