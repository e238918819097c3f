"""The utility judge's one call per recall hands the solutions search its share by what the
share is an answer to (recall/judge_call.py): the scorer's verdict key, the query and the
texts judged, within a recall's time; taken once. Not by the asyncio task the host happens
to run both searches in."""

import asyncio

import pytest

from helpers.errors import TransportError
from helpers.recall import deadlines, judge_call
from helpers.scoring import scorers
from helpers.scoring.score import Scored
from helpers.settings import Settings

SOLUTIONS = ["restart grafana with docker compose", "rotate the nginx logs weekly"]


def _choice(**more):
    return scorers.choose(Settings.from_mapping({"rerank_api": "utility", **more}))


def _shown(choice, texts):
    return judge_call.readable(choice.settings, texts, 10_000, minimum=0)


def _kept(choice, query="grafana port", failure=None):
    share = None if failure else Scored([0.9, 0.1], "judge", None, same_call=True)
    judge_call._keep(choice, query, judge_call._Answer(_shown(choice, SOLUTIONS), share, failure))


def test_the_share_goes_to_the_search_that_asks_the_same_and_only_once():
    choice = _choice()
    _kept(choice)
    assert judge_call._reused(choice, "another question", SOLUTIONS) is None  # another query
    _kept(choice)
    assert judge_call._reused(choice, "grafana port", SOLUTIONS[::-1]) is None  # another pool
    _kept(choice)
    other = _choice(rerank_judge_max_chars=900)
    assert judge_call._reused(other, "grafana port", SOLUTIONS) is None  # another verdict key
    assert judge_call._reused(choice, "grafana port", SOLUTIONS + ["a third"]).scores == [0.9, 0.1]
    assert judge_call._reused(choice, "grafana port", SOLUTIONS) is None  # taken


def test_a_failed_call_fails_the_solutions_search_without_a_second_call():
    choice = _choice()
    _kept(choice, failure=TransportError("down"))
    with pytest.raises(TransportError):
        judge_call._reused(choice, "grafana port", SOLUTIONS)


def test_a_share_older_than_a_recall_is_not_taken(monkeypatch):
    choice = _choice()
    _kept(choice)
    now = judge_call.time.monotonic()
    monkeypatch.setattr(judge_call.time, "monotonic", lambda: now + deadlines.RECALL_SECONDS + 1)
    assert judge_call._reused(choice, "grafana port", SOLUTIONS) is None


def test_the_share_is_taken_from_another_task_and_at_most_kept_at_most_are_kept():
    choice = _choice()
    _kept(choice)

    async def solutions_search():
        return judge_call._reused(choice, "grafana port", SOLUTIONS)

    assert asyncio.run(solutions_search()).same_call  # another task, another loop: still its share
    for n in range(judge_call.KEPT_AT_MOST + 5):
        _kept(choice, query=f"question {n}")
    assert len(judge_call._answers) == judge_call.KEPT_AT_MOST
    assert judge_call._reused(choice, "question 0", SOLUTIONS) is None  # the oldest went first
    assert judge_call._reused(choice, f"question {judge_call.KEPT_AT_MOST + 4}", SOLUTIONS) is not None
