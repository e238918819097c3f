"""The utility-model judge in a recall: which memories it reads, and one call for both of
the recall's searches.

Which memories: the pool's first ones (the fused order first) while the judge's budget
lasts (scoring/judge.py ``fits``, the rule its prompt is built by). The rest of the pool is
*unjudged*: the judge never read it, so it is neither scored nor cached, and the relevance
floor never drops it; it keeps its fused place after what the judge read
(pipeline.apply_policies).

One call: the host's recall searches memories, then solutions, one after the other. So the
memories search also reads the pool the solutions search will read (its joined sibling,
pipeline.Search.sibling, run through the pipeline's own joined stages with the host's
solutions filter) and asks the judge about both in one prompt, the budget split by the
prompt slots the host gives each (5 memories, 3 solutions). The answer's solutions share is
kept by what it is an answer to (the scorer's verdict key, the query, the texts judged);
the solutions search takes it when it asks the same about a pool that starts with those
texts, within the recall's time. A small model reads one short prompt per recall instead of
two long ones.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Sequence

from ..scoring import judge
from ..scoring.scorers import Choice
from ..deadline import Deadline
from ..errors import RerankError
from ..scoring.score import Scored, may_be_asked, score_documents
from ..settings import Settings
from .deadlines import RECALL_SECONDS

# The host's own filter for the solutions search (_50_recall_memories.py, Memory.Area).
SOLUTIONS_FILTER = "area == 'solutions'"


@dataclass
class _Answer:
    texts: list[str]  # the solutions as the judge was shown them
    scored: Scored | None
    failure: RerankError | None = None  # the call failed: the solutions search fails the same, without a second call
    at: float = 0.0  # time.monotonic() of the answer


# The solutions' share of the memories searches' answers, by (verdict key, query): the
# newest KEPT_AT_MOST, each for the time a recall has (its solutions search follows at once).
KEPT_AT_MOST = 32
_answers: "OrderedDict[tuple, _Answer]" = OrderedDict()
_answers_lock = threading.Lock()


def asks(choice: Choice | None) -> bool:
    """The scorer judges both of a recall's searches in one call (the utility judge), and a
    recall may ask it (score.may_be_asked: not kept out by its verdict or by a say of none)."""
    return may_be_asked(choice) and choice.scorer.judges_recall_at_once


def readable(
    settings: Settings, texts: Sequence[str], budget: int, first_number: int = 0, minimum: int = 1
) -> list[str]:
    """The first of ``texts`` the judge reads within ``budget``, each as it is shown."""
    shown = [judge.one_line(t, settings.judge_doc_chars) for t in texts]
    return shown[: judge.fits(shown, budget, settings.judge_doc_chars, first_number, minimum)]


async def score(
    choice: Choice,
    query: str,
    texts: Sequence[str],
    solutions: Sequence[str],
    slots: tuple[int, int],
    deadline: Deadline,
) -> Scored:
    """The judge's scores for the first of ``texts`` it reads (``len(scores)`` of them; the
    rest unjudged). ``solutions``: the pool the recall's solutions search will read, judged
    in the same call when given; ``slots``: the prompt slots (memories, solutions)."""
    settings = choice.settings
    reused = _reused(choice, query, texts)
    if reused is not None:
        return reused
    budget = settings.judge_max_chars
    if solutions:
        budget = max(1, round(budget * slots[0] / max(1, sum(slots))))
    mine = readable(settings, texts, budget)
    spent = sum(judge.line_chars(n, t) for n, t in enumerate(mine))
    theirs = readable(settings, solutions, settings.judge_max_chars - spent, len(mine), minimum=0) if solutions else []
    try:
        scored = await score_documents(choice, query, mine + theirs, deadline)
    except RerankError as exc:
        if theirs:
            _keep(choice, query, _Answer(theirs, None, exc))
        raise
    if theirs:
        share = replace(scored, scores=scored.scores[len(mine) :], latency_ms=None, same_call=True)
        _keep(choice, query, _Answer(theirs, share))
    return replace(scored, scores=scored.scores[: len(mine)])


def _keep(choice: Choice, query: str, answer: _Answer) -> None:
    answer.at = time.monotonic()
    with _answers_lock:
        _answers[(choice.key, query)] = answer
        _answers.move_to_end((choice.key, query))
        while len(_answers) > KEPT_AT_MOST:
            _answers.popitem(last=False)


def _reused(choice: Choice, query: str, texts: Sequence[str]) -> Scored | None:
    """The solutions search's scores from the memories search's call, when it asks the same
    scorer about the same query and its pool starts with exactly what was judged there,
    within a recall's time; that call's failure, raised again, when it failed."""
    with _answers_lock:
        answer = _answers.pop((choice.key, query), None)
    if answer is None or time.monotonic() - answer.at > RECALL_SECONDS:
        return None
    shown = [judge.one_line(t, choice.settings.judge_doc_chars) for t in texts[: len(answer.texts)]]
    if shown != answer.texts:
        return None
    if answer.failure is not None:
        raise answer.failure
    return answer.scored


def forget() -> None:
    """Testing switch: drop every answer kept for a solutions search."""
    with _answers_lock:
        _answers.clear()
