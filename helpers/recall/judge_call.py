"""The utility-model judge in a recall: which memories it reads, and one call for both of
the recall's searches.

Which memories: the pool's first ones (the fused order first) while the judge's budget
lasts (scoring/judge.py ``fits``, the rule its prompt is built by). The rest of the pool is
*unjudged*: the judge never read it, so it is neither scored nor cached, and the relevance
floor never drops it; it keeps its fused place after what the judge read
(pipeline.apply_policies).

One call: the host's recall searches memories, then solutions, one after the other, in one
task. So the memories search also reads the pool the solutions search will read (pipeline
gathers it with the host's solutions filter) and asks the judge about both in one prompt,
the budget split by the prompt slots the host gives each (5 memories, 3 solutions); the
solutions search then takes its scores from that answer when its pool starts with what was
judged. A small model reads one short prompt per recall instead of two long ones.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, replace
from typing import Sequence

from ..scoring import judge, probing
from ..scoring.scorers import Choice
from ..deadline import Deadline
from ..errors import RerankError
from ..scoring.score import Scored, score_documents
from ..settings import Settings

# The host's own filter for the solutions search (_50_recall_memories.py, Memory.Area).
SOLUTIONS_FILTER = "area == 'solutions'"


@dataclass
class _Answer:
    query: str
    texts: list[str]
    scored: Scored | None
    failure: RerankError | None = None  # the call failed: the solutions search fails the same, without a second call


# The solutions' share of the memories search's answer, per recall task.
_answers: "weakref.WeakKeyDictionary[asyncio.Task, _Answer]" = weakref.WeakKeyDictionary()


def asks(choice: Choice | None) -> bool:
    """The scorer judges both of a recall's searches in one call (the utility judge), and no
    kept verdict keeps it out of recall."""
    return choice is not None and choice.scorer.judges_recall_at_once and not probing.keeps_out(choice)


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
    reused = _reused(settings, query, texts)
    if reused is not None:
        return reused
    budget = settings.judge_max_chars
    if solutions:
        budget = max(1, round(budget * slots[0] / max(1, sum(slots))))
    mine = readable(settings, texts, budget)
    spent = sum(judge.line_chars(n, t) for n, t in enumerate(mine))
    theirs = readable(settings, solutions, settings.judge_max_chars - spent, len(mine), minimum=0) if solutions else []
    task = asyncio.current_task() if theirs else None
    try:
        scored = await score_documents(choice, query, mine + theirs, deadline)
    except RerankError as exc:
        if task is not None:
            _answers[task] = _Answer(query, theirs, None, exc)
        raise
    if task is not None:
        _answers[task] = _Answer(
            query, theirs, replace(scored, scores=scored.scores[len(mine) :], latency_ms=None, same_call=True)
        )
    return replace(scored, scores=scored.scores[: len(mine)])


def _reused(settings: Settings, query: str, texts: Sequence[str]) -> Scored | None:
    """The solutions search's scores from the memories search's call, when this recall's
    pool starts with exactly what was judged there, for the same query; that call's
    failure, raised again, when it failed."""
    task = asyncio.current_task()
    answer = _answers.pop(task, None) if task is not None else None
    if answer is None or answer.query != query:
        return None
    shown = [judge.one_line(t, settings.judge_doc_chars) for t in texts[: len(answer.texts)]]
    if shown != answer.texts:
        return None
    if answer.failure is not None:
        raise answer.failure
    return answer.scored


def forget() -> None:
    """Testing switch: drop every answer kept for a solutions search."""
    _answers.clear()
