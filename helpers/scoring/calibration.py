"""How much say a reranker earns in recall: measured on a labelled set, never assumed.

The probe (verdicts.py) only asks whether one relevant document outranks one irrelevant
one; every reranker people actually point the plugin at passes it, a weak one as well as a
strong one. So once a scorer has passed its probe, it is also asked to order the
calibration set (calibration_set.json): short questions, each with one memory that answers
it and four that do not, in the traps embeddings and keywords fall into (a problem told
without its name, the current fact beside an outdated or a staging one, the wrong person,
date or number with the right words, negation). Its mean reciprocal rank of the answer is
compared with that of Agent Zero's own embedder on the same set, and the difference is
its say:

    none   not clearly better than the embedder: the fused order stands as it is
    some   clearly better: its picks that stand out take the better of their two places when
           the searches also found them near the top (the fused order's first 20)
    full   much better: its picks that stand out take the better of their two places

Each question also carries three memories about something else entirely: a reranker that
keeps them below the answer orders, a noisy one puts them above it as often as the traps
(UNRELATED_AT_MOST). One with no say that is still surely better than the embedder (by
more than a rerun could move it) and keeps them below has some say in the searches the set
speaks for and where the embedder is not what the fused order rests on (lend_say): a new
chat, whose search is the set's kind of question (the message alone), and a store whose
words lead (recall/store_agreement.py); there, one better than the embedder by either bar
that keeps them below has full say. One that keeps them below and calls few of them
relevant in its own terms (UNRELATED_RELEVANT_AT_MOST, relevant_line.py) has a line between
relevant and not that recall may read (Trust.means_relevant): a pick it calls relevant
counts with some say, and in a new chat whose best memory it calls relevant its own order
leads (recall/pipeline.reranker_leads).

A tie among scores counts against the answer (a judge that scores everything alike gets
the worst rank), so a reranker that cannot tell the memories apart earns nothing.

The set has two parts: 12 questions written by hand in those traps, and 58 drawn from the
relevance bench's tuning half (`python -m bench.calibration --write`): each with its first
relevant memory and the two wrong memories the embedder ranks highest and the two BM25
does. With 12 a noisy reranker's say moved between "none" and "full" from one run to the
next (σ 4: none 13 %, some 42 %, full 45 % of 200 runs); with 70 its MRR's spread is a third.

A reranker is measured on the plugin's own loop (own_loop.py), apart from the recall that
asked: a CPU cross-encoder takes 30-45 s over the 70 questions (560 pairs with their
unrelated memories; the real L-12 42 s on two busy cores), longer than a recall may
wait. The recall waits for it within its own time and keeps the fused order if it is not
done; the recalls after it has finished have its say. The utility model answers only the
12 written by hand (its calls are costly), within the recall, as its scorer declares.

The result is kept per probe verdict key (the endpoint, model, API, key, scorer's own key),
so a change of any of them measures again; a measurement that did not finish is tried
again after a cool-down that doubles, so a slow judge is not asked on every recall.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from ..deadline import GRACE_S, Deadline
from ..errors import RerankError
from ..vocabulary import scorer_words as words
from . import own_loop, relevant_line
from .single_flight import SingleFlight

if TYPE_CHECKING:
    from .scorers import Choice

NONE, SOME, FULL, UNMEASURED = "none", "some", "full", "unmeasured"

# How far above the embedder's mean reciprocal rank a reranker must reach. A reranker
# that orders at random scores about 0.46 on five candidates (one answer), with a spread of
# about 0.09 over twelve questions; the embedder scores below that on these traps, so the
# bars are also absolute: no say below 0.58, full say from 0.7. Measured on the bench's
# simulated rerankers (bench/relevance_rerankers.py): noise of σ 1 scores 1.00, σ 2 0.72,
# σ 4 0.64; Agent Zero's embedder 0.41 and the built-in BM25 0.30.
SOME_GAIN, SOME_AT_LEAST = 0.15, 0.58
FULL_GAIN, FULL_AT_LEAST = 0.25, 0.7

# A reranker surely better than the embedder (Trust.surely_better) that keeps the set's
# unrelated memories below the answer (Trust.lendable) earns some say (the
# say that keeps the fused order's floor: a pick must also be near the top of the fused
# order) in two kinds of search (lend_say): a new chat's, where the reranker reads the
# message alone against the memories, as it read the set's questions; and a store whose
# words lead (recall/store_agreement.py: its embedder misses the memories its words find),
# where the fused order rests on the word list, not on the embedder this set compares a
# reranker with. Surely better: by twice the spread a rerun gives a noisy reranker's MRR
# (σ 4: sd 0.035 over the 70 questions; the spread grows as 1/sqrt(questions), so on the 12
# the utility judge answers the bar is SOME_GAIN's again). A follow-up's search keeps the
# measured say: its fused order leans on the conversation, and a CPU cross-encoder reads
# message and conversation cut to a few hundred characters. Measured with the real
# ms-marco-MiniLM-L-12-v2 (MRR 0.633 against the embedder's 0.546) on the bench's sets:
# docs/relevance.md.
RERUN_SPREAD, RERUN_SPREAD_QUESTIONS = 0.035, 70

# What tells a trained reranker from a noisy one where the set's MRR cannot: each question
# is sent with three memories about something else entirely after its five candidates
# (other questions' answers, the ones the embedder finds least like it; bench/calibration.py
# picks them), never counted in its reciprocal rank. A trained cross-encoder scores them
# below the answer (ms-marco-MiniLM-L-12-v2: 7 of 210 at or above it, in questions where it
# did not know the answer either), noise as often as it does the set's traps (σ 4: 0.24 of
# them, the lowest of 200 reruns 0.148; σ 3: 0.17, lowest 0.086: `python -m
# bench.calibration`), though on the five candidates σ 4's MRR (0.687) is above the trained
# model's (0.633). A reranker that keeps them below the answer
# (at most this share of them at or above it) and is better than the embedder on the set
# (surely, or by the some-say bar) has full say where the store's words lead (lend_say):
# in chat stored message by message its order alone is far better than the fused one,
# which rests there on a word search (docs/relevance.md).
UNRELATED_AT_MOST = 0.1
# ... and, for its own line between relevant and not to be read (relevant_line.py: a
# search it leads, a pick it calls relevant), calls at most this share of those unrelated
# memories relevant. Between a trained model and noise that still orders: the real L-12
# calls none of 210 relevant, noise of σ 2 (0.08 of them above the answer, so it may keep
# them below) about 0.16 and σ 1 about 0.02; σ 2 leading a new chat would cost LoCoMo
# 0.07 and MemoryBank 0.13 (docs/relevance.md).
UNRELATED_RELEVANT_AT_MOST = 0.05

# Agent Zero's default embedder (all-MiniLM-L6-v2) on the whole set and on the 12 written
# by hand, for when the embedder in use cannot be asked (Test connection outside a chat):
# `python -m bench.calibration` (and `--hand-written-only`).
DEFAULT_EMBEDDER = words.DEFAULT_EMBEDDER
DEFAULT_EMBEDDER_MRR = 0.546
DEFAULT_EMBEDDER_MRR_HAND_WRITTEN = 0.406
HAND_WRITTEN = 12  # the set's first items, written by hand; the rest drawn from the bench's tuning half
# How long a measurement apart from the recall may take, on the plugin's own loop.
MEASURE_SECONDS = 120.0

RETRY_AFTER_S, RETRY_AT_MOST_S = 60.0, 3600.0
# At most this many calibration calls at once: a local server with one slot keeps working on
# a call the client gave up on, and the recall's own calls must not queue behind many.
CONCURRENCY = 4
# A recall starts a calibration only with this much of its call's time left (or 0.8 of
# rerank_timeout, when that is shorter); with less, the reranker has no say in that recall
# and the calibration waits for one with more.
MIN_SECONDS = 2.0


@dataclass(frozen=True)
class Item:
    trap: str
    query: str
    candidates: tuple[str, ...]
    answer: int
    # Memories about something else entirely (other questions' answers): sent after the
    # candidates, never counted in the reciprocal rank; see UNRELATED_AT_MOST.
    unrelated: tuple[str, ...] = ()


def _load() -> tuple[Item, ...]:
    data = json.loads((Path(__file__).with_name("calibration_set.json")).read_text(encoding="utf-8"))
    return tuple(
        Item(i["trap"], i["query"], tuple(i["candidates"]), int(i["answer"]), tuple(i.get("unrelated", ())))
        for i in data["items"]
    )


ITEMS = _load()


@dataclass(frozen=True)
class Trust:
    """What a reranker earned on the calibration set."""

    say: str  # none | some | full | unmeasured
    reranker: float | None = None  # its mean reciprocal rank of the answer
    embedder: float | None = None  # Agent Zero's embedder's, on the same set
    embedder_name: str = DEFAULT_EMBEDDER
    calls: int = 0
    seconds: float = 0.0
    reason: str = ""  # why it is unmeasured
    questions: int = 0  # how many calibration questions it was measured on
    lent: bool = False  # its say is lent by the search (lend_say), not the one it measured
    unrelated_above: float | None = None  # the share of unrelated memories it scored at or above the answer
    unrelated_relevant: float | None = None  # the share it called relevant (None: a scale with no such line)

    @classmethod
    def from_figures(cls, reranker: float, embedder: float, **measured: Any) -> Trust:
        """The say ``reranker``'s MRR earns against ``embedder``'s (say_for), with the rest
        of what was measured."""
        return cls(say_for(reranker, embedder), reranker, embedder, **measured)

    @property
    def has_say(self) -> bool:
        return self.say in (SOME, FULL)

    @property
    def measured_say(self) -> str:
        """The say its figures earn on the set, whatever a search lent it."""
        if self.reranker is None or self.embedder is None:
            return self.say
        return say_for(self.reranker, self.embedder)

    @property
    def surely_better(self) -> bool:
        """No say on the set, but surely better than the embedder: with ``lendable``, some
        say in a new chat and in a store whose words lead (lend_say)."""
        if self.measured_say != NONE or self.reranker is None or self.embedder is None or self.questions <= 0:
            return False
        margin = 2 * RERUN_SPREAD * math.sqrt(RERUN_SPREAD_QUESTIONS / self.questions)
        return self.reranker >= max(self.embedder + min(margin, SOME_GAIN), SOME_AT_LEAST)

    @property
    def keeps_unrelated_below(self) -> bool:
        """It scored the set's unrelated memories below the answer (UNRELATED_AT_MOST): an
        order, not noise. Unknown (False) for a scorer not asked them (the utility model)."""
        return self.unrelated_above is not None and self.unrelated_above <= UNRELATED_AT_MOST

    @property
    def means_relevant(self) -> bool:
        """Its own line between relevant and not can be read (relevant_line.py): it keeps
        the set's unrelated memories below the answer and calls at most
        UNRELATED_RELEVANT_AT_MOST of them relevant. False for a scale with no such line
        and for a scorer not asked them (the utility model)."""
        return (
            self.keeps_unrelated_below
            and self.unrelated_relevant is not None
            and self.unrelated_relevant <= UNRELATED_RELEVANT_AT_MOST
        )

    @property
    def lendable(self) -> bool:
        """Some say lent in a new chat and where the words lead (lend_say): surely better
        than the embedder, and an order, not noise. Noise of σ 4 is surely better on the set
        in most reruns, and its lent picks cost a few questions where its luck ran out."""
        return self.surely_better and self.keeps_unrelated_below

    @property
    def full_where_words_lead(self) -> bool:
        """Full say in a store whose words lead (lend_say): better than the embedder on the
        set, surely or by the some-say bar, and keeps unrelated memories below the answer."""
        return self.keeps_unrelated_below and (self.measured_say == SOME or self.surely_better)

    def as_dict(self) -> dict[str, Any]:
        return {
            "say": self.say,
            "reranker_mrr": _round(self.reranker),
            "embedder_mrr": _round(self.embedder),
            "embedder": self.embedder_name,
            "calls": self.calls,
            "seconds": round(self.seconds, 2),
            "questions": self.questions,
            "reason": self.reason,
            "surely_better": self.surely_better,
            "unrelated_above": _round(self.unrelated_above),
            "unrelated_relevant": _round(self.unrelated_relevant),
            "means_relevant": self.means_relevant,
            "lendable": self.lendable,
            "full_where_words_lead": self.full_where_words_lead,
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def reciprocal_rank(scores: Sequence[float], answer: int) -> float:
    """1 / the answer's rank, every tie counted above it (a tie earns nothing)."""
    mine = scores[answer]
    if not relevant_line.finite(mine):
        return 0.0
    above = sum(1 for i, s in enumerate(scores) if i != answer and (not relevant_line.finite(s) or s >= mine))
    return 1.0 / (1 + above)


def has_no_say_anywhere(trust: Trust | None) -> bool:
    """Measured, with no say on the set and none lent in any search either: no search's
    order can take anything from its scores (a search does not ask it)."""
    return trust is not None and trust.say == NONE and not trust.lendable


def lend_say(trust: Trust | None, *, new_chat: bool, words_led: bool) -> Trust | None:
    """``trust`` in a search of a new chat or of a store whose words lead, the searches it
    may be lent say in: full say where the words lead for a reranker that has earned it
    there (Trust.full_where_words_lead), some say where it is surely better than the
    embedder and keeps unrelated memories below the answer (Trust.lendable); in any other
    search, and otherwise, as measured."""
    if trust is None or not (new_chat or words_led):
        return trust
    if words_led and trust.full_where_words_lead and trust.say != FULL:
        return replace(trust, say=FULL, lent=True)
    if trust.lendable:
        return replace(trust, say=SOME, lent=True)
    return trust


def say_for(reranker: float, embedder: float) -> str:
    if reranker >= max(embedder + FULL_GAIN, FULL_AT_LEAST):
        return FULL
    if reranker >= max(embedder + SOME_GAIN, SOME_AT_LEAST):
        return SOME
    return NONE


# --- the embedder's own score --------------------------------------------------------------
# (id(embedder), how many questions) -> (embedder, its MRR), in the order measured: the
# last one stands in for Test connection outside a chat.
_embedder_scores: dict[tuple[int, int], tuple[Any, float]] = {}
_embedder_lock = threading.Lock()


def items_for(scorer: Any) -> tuple[Item, ...]:
    """The questions ``scorer`` is measured on: all, or the first ones its declaration names
    (a scorer whose calls are costly), and then without their unrelated memories."""
    count = getattr(scorer, "calibration_questions", None)
    return ITEMS if count is None else tuple(replace(item, unrelated=()) for item in ITEMS[:count])


def _default_embedder_mrr(items: Sequence[Item]) -> float:
    return DEFAULT_EMBEDDER_MRR_HAND_WRITTEN if len(items) <= HAND_WRITTEN else DEFAULT_EMBEDDER_MRR


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1.0
    return dot / norm


async def embedder_score(embedder: Any | None, items: Sequence[Item] = ITEMS) -> tuple[float, str]:
    """(the embedder's MRR on ``items``, what it is called). Measured once per embedder
    object and set; without one, the last one measured in this process, else the default's."""
    size = len(items)
    if embedder is None:
        with _embedder_lock:
            last = next((mrr for (_, n), (_, mrr) in reversed(_embedder_scores.items()) if n == size), None)
        return (last, "Agent Zero's embedder") if last is not None else (_default_embedder_mrr(items), DEFAULT_EMBEDDER)
    with _embedder_lock:
        known = _embedder_scores.get((id(embedder), size))
    if known is not None and known[0] is embedder:
        return known[1], "Agent Zero's embedder"
    texts = [t for item in items for t in (item.query, *item.candidates)]
    if hasattr(embedder, "aembed_documents"):
        vectors = await embedder.aembed_documents(texts)
    else:  # a bare callable, as LangChain's FAISS also accepts
        vectors = [await asyncio.to_thread(embedder, t) for t in texts]
    score, at = 0.0, 0
    for item in items:
        query, *candidates = vectors[at : at + 1 + len(item.candidates)]
        at += 1 + len(item.candidates)
        score += reciprocal_rank([_cosine(query, c) for c in candidates], item.answer)
    mrr = score / len(items)
    with _embedder_lock:
        _embedder_scores.pop((id(embedder), size), None)  # re-inserted: the last measured comes last
        _embedder_scores[(id(embedder), size)] = (embedder, mrr)
    return mrr, "Agent Zero's embedder"


# --- measuring a reranker --------------------------------------------------------------------
ScoreFn = Callable[[str, Sequence[str], Deadline], Awaitable[Sequence[float]]]


async def measure(
    score: ScoreFn,
    deadline: Deadline,
    embedder: Any | None = None,
    items: Sequence[Item] = ITEMS,
    scale: str | None = None,
) -> Trust:
    """Order every calibration question of ``items`` with ``score`` (CONCURRENCY at once,
    within ``deadline``) and compare with the embedder; ``scale``: the scale of its scores
    (its probe's), to read its line between relevant and not. Never raises but for
    cancellation: a failure is ``unmeasured`` with its reason."""
    started = time.monotonic()
    asked = dict(calls=len(items), questions=len(items))
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            slots = asyncio.Semaphore(CONCURRENCY)

            async def one(item: Item) -> Sequence[float]:
                async with slots:
                    return await score(item.query, item.candidates + item.unrelated, deadline)

            answers = await asyncio.gather(*(one(item) for item in items))
            short = _short_answer(answers, items)
            mrr = mean_reciprocal_rank(answers, items) if short is None else 0.0
            # Below SOME_AT_LEAST no embedder's figure can give a reranker a say (say_for,
            # Trust.surely_better): the set is not embedded for it (about 8 s with
            # all-MiniLM-L6-v2 on two cores, the first time an embedder is asked; BM25 and an
            # embedding model served as a reranker score below it), and the figure shown
            # beside its own is the last one measured, else the default embedder's.
            hopeful = mrr >= SOME_AT_LEAST
            embedder_mrr, embedder_name = await embedder_score(embedder if hopeful else None, items)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return Trust(
            UNMEASURED,
            seconds=time.monotonic() - started,
            reason=words.calibration_not_in_time(len(items)),
            **asked,
        )
    except RerankError as exc:
        return Trust(UNMEASURED, seconds=time.monotonic() - started, reason=str(exc), **asked)
    except Exception as exc:  # an embedder failure: the type only
        return Trust(
            UNMEASURED,
            seconds=time.monotonic() - started,
            reason=f"the calibration failed ({type(exc).__name__})",
            **asked,
        )
    seconds = time.monotonic() - started
    if short is not None:
        return Trust(UNMEASURED, seconds=seconds, reason=short, **asked)
    return Trust.from_figures(
        mrr,
        embedder_mrr,
        embedder_name=embedder_name,
        seconds=seconds,
        unrelated_above=unrelated_above(answers, items),
        unrelated_relevant=unrelated_called_relevant(answers, items, scale),
        **asked,
    )


def _short_answer(answers: Sequence[Sequence[float]], items: Sequence[Item]) -> str | None:
    """Why the answers cannot be read (one not a score per memory sent), or None: a scorer's
    contract, checked rather than trusted."""
    for scores, item in zip(answers, items):
        sent = len(item.candidates) + len(item.unrelated)
        if len(scores) != sent:
            return words.calibration_short_answer(len(scores), sent)
    return None


def mean_reciprocal_rank(answers: Sequence[Sequence[float]], items: Sequence[Item]) -> float:
    """The answer's reciprocal rank among each item's candidates (its unrelated memories,
    sent after them, not counted), averaged over the items."""
    return sum(reciprocal_rank(list(s)[: len(i.candidates)], i.answer) for s, i in zip(answers, items)) / len(items)


def unrelated_above(answers: Sequence[Sequence[float]], items: Sequence[Item]) -> float | None:
    """The share of the items' unrelated memories scored at or above their answer (a score
    that is not a finite number counts as above); None when no item had any."""
    above = total = 0
    for scores, item in zip(answers, items):
        answer = scores[item.answer]
        for score in scores[len(item.candidates) :]:
            total += 1
            above += not (relevant_line.finite(answer) and relevant_line.finite(score) and score < answer)
    return above / total if total else None


def unrelated_called_relevant(
    answers: Sequence[Sequence[float]], items: Sequence[Item], scale: str | None
) -> float | None:
    """The share of the items' unrelated memories scored "relevant" on ``scale``
    (relevant_line.called_relevant); None on a scale with no such line, or when no item had
    any."""
    if scale not in relevant_line.SCALES_WITH_A_LINE:
        return None
    called = [
        yes
        for scores, item in zip(answers, items)
        for yes in relevant_line.called_relevant(list(scores)[len(item.candidates) :], scale)
    ]
    return sum(called) / len(called) if called else None


# --- kept per reranker -----------------------------------------------------------------------
_known: dict[tuple, Trust] = {}
_retry: dict[tuple, tuple[float, float]] = {}  # key -> (not before, the next cool-down)
_measuring: dict[tuple, tuple[object, concurrent.futures.Future]] = {}  # key -> (its token, the measurement)
_lock = threading.Lock()
_measuring_here = SingleFlight()  # a scorer measured in the search that asks (the utility judge)


def known(choice: Choice | None) -> Trust | None:
    """The say kept for ``choice`` (None: no reranker, no say)."""
    if choice is None:
        return None
    with _lock:
        return _known.get(choice.key)


async def trust(
    choice: Choice, score: ScoreFn, deadline: Deadline, embedder: Any | None = None, scale: str | None = None
) -> Trust:
    """The reranker's say for this choice: kept, or measured now. A scorer measured apart
    (the default) is measured on the plugin's own loop, waited for within ``deadline``; one
    that is not (the utility model) within ``deadline`` itself. An unfinished measurement
    is not kept, and not tried again before its cool-down."""
    key, settings, scorer = choice.key, choice.settings, choice.scorer
    items = items_for(scorer)
    with _lock:
        if key in _known:
            return _known[key]
        running = _measuring.get(key)
        not_before, _ = _retry.get(key, (0.0, RETRY_AFTER_S))
    if running is None:
        if time.monotonic() < not_before:
            return Trust(UNMEASURED, reason=words.LAST_DID_NOT_FINISH)
        if not getattr(scorer, "calibrates_apart", True):
            if deadline.remaining() < min(MIN_SECONDS, 0.8 * settings.timeout):
                return Trust(UNMEASURED, reason=words.TOO_LITTLE_TIME)

            async def measured() -> Trust:
                result = await measure(score, deadline, embedder, items, scale)
                _remember(key, result)
                return result

            try:  # one measurement for the searches that come while it runs
                return await _measuring_here.run(key, measured, deadline.remaining() + GRACE_S)
            except TimeoutError:
                return Trust(UNMEASURED, questions=len(items), reason=words.calibration_running(len(items)))
        running = _start(key, score, embedder, items, scale)
        if running is None:
            return Trust(UNMEASURED, reason=words.STOPPING)
    return await _wait(running[1], deadline, len(items))


def _start(key: tuple, score: ScoreFn, embedder: Any | None, items: Sequence[Item], scale: str | None = None):
    """The measurement of ``key`` on the plugin's own loop: under way, or started now."""
    token = object()

    async def measured() -> Trust:
        result = await measure(score, Deadline.after(MEASURE_SECONDS), embedder, items, scale)
        with _lock:
            current = _measuring.get(key, (None,))[0] is token  # not forgotten meanwhile
        if current:
            _remember(key, result)
        return result

    with _lock:
        if key in _measuring:
            return _measuring[key]
        try:
            future = own_loop.submit(measured())
        except RuntimeError:  # uninstall closed the plugin's loop just now
            return None
        _measuring[key] = running = (token, future)
    future.add_done_callback(lambda _: _finished(key, token))
    return running


def measuring() -> list[concurrent.futures.Future]:
    """The measurements still under way (for the tests and the bench to await): Test
    connection waits CALIBRATION_S for one, and a slow server's goes on past it."""
    with _lock:
        return [future for _, future in _measuring.values()]


def _finished(key: tuple, token: object) -> None:
    with _lock:
        if _measuring.get(key, (None,))[0] is token:
            del _measuring[key]


async def _wait(future: concurrent.futures.Future, deadline: Deadline, questions: int) -> Trust:
    """The measurement's result, or unmeasured when it is not done within ``deadline`` (it
    goes on). The future is another loop's: this one is woken by its callback."""
    if not future.done():
        loop, done = asyncio.get_running_loop(), asyncio.Event()

        def wake(_: concurrent.futures.Future) -> None:
            try:
                loop.call_soon_threadsafe(done.set)
            except RuntimeError:  # the loop that waited has ended
                pass

        future.add_done_callback(wake)
        try:
            await asyncio.wait_for(done.wait(), max(0.0, deadline.remaining()))
        except TimeoutError:
            return Trust(
                UNMEASURED,
                questions=questions,
                reason=words.calibration_running(questions),
            )
    if future.cancelled():
        return Trust(UNMEASURED, questions=questions, reason=words.CALIBRATION_STOPPED)
    return future.result()  # measure() raises nothing else


def _remember(key: tuple, result: Trust) -> None:
    with _lock:
        if result.say == UNMEASURED:
            _, cool = _retry.get(key, (0.0, RETRY_AFTER_S))
            _retry[key] = (time.monotonic() + cool, min(cool * 2, RETRY_AT_MOST_S))
        else:
            _known[key] = result
            _retry.pop(key, None)


def forget(choice: Choice | None = None) -> None:
    """Forget the measurement for ``choice`` (Test connection measures again), stopping one
    under way; with None, every measurement and the embedders' scores (reset_state)."""
    with _lock:
        if choice is not None:
            keys = [choice.key]
        else:
            keys = list(_measuring)
            _known.clear()
            _retry.clear()
        stopped = [_measuring.pop(key)[1] for key in keys if key in _measuring]
        for key in keys:
            _known.pop(key, None)
            _retry.pop(key, None)
    for future in stopped:
        future.cancel()
    if choice is None:
        with _embedder_lock:
            _embedder_scores.clear()
