"""One recall search, as stages over one value, in the order the data flows (``STAGES``).

    plan     what to search with (texts.py): the host's query, the message, message + last turns
    gather   the host's store searched with each text (store_search.py), one batched FAISS call
    fuse     the searches' ranked lists fused by rank (fusion.py): the fused order
    pool     what a reranker reads: the fused order, then the deeper hits of every list
    score    the reranker judges the pool, when one is configured (scoring/score.py) and the
             say it earned gives it one in this search (scoring/calibration.py)
    policies the relevance floor, recency and diversity, when turned on (policies.py)
    combine  the reranker's order merged with the fused one; the host's own first kept
    record   what the search did, worked out once (outcome.py): the counters, the decision
             log, the chat line, and in shadow mode what applying would change

Each stage reads and extends a ``Search``; score, policies and combine judge the pool and
do nothing when the searches found nothing. Only ``score`` talks to a server, and it never
raises: a reranker that fails, times out or is switched off leaves the fused order, which
is exactly what the plugin returns with no reranker at all. ``record`` never raises either:
bookkeeping must never cost a recall. Every other stage is local work; if one of them
fails, the wrapper (wrapper.py) returns the host's own result.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ..deadline import GRACE_S, Deadline
from .. import vocabulary
from ..errors import DeadlineExceeded
from ..report import changes, decision_log
from ..scoring import calibration, probing, query_budget, relevant_line, scorers
from ..scoring.client import scrub
from ..scoring.redaction import redact
from ..scoring.score import Scored, earned_say, may_be_asked, score_documents
from ..settings import Settings
from . import (
    conversation,
    deadlines,
    failures,
    fusion,
    judge_call,
    outcome,
    policies,
    store_agreement,
    store_search,
    texts,
)

log = logging.getLogger("a0_reranker")

DEFAULT_SLOTS = 5  # the host's memory_recall_memories_max_result default


@dataclass
class Call:
    """Who is searching: which prompt-feeding caller, for which agent, about what."""

    kind: str  # recall | memory_load
    agent: Any
    log_item: Any = None  # the recall step the chat shows (recall only)
    message: str | None = None  # the user's own words (recall only), read from the caller
    history: str | None = None  # the history the host searched with, before the message
    prompt_slots: dict[str, int] = field(default_factory=dict)  # memories / solutions -> how many reach the prompt
    query_prepared: bool = False  # the host's query was written by its utility model (memory_recall_query_prep)
    # The recall's one deadline (deadlines.py), shared by its two searches.
    deadline: Deadline = field(default_factory=lambda: Deadline.after(deadlines.RECALL_SECONDS))
    post_filter: bool = False  # the host's memory_recall_post_filter is on: its utility model judges too
    solutions_limit: int = 0  # the host's solutions search's limit (recall only): the utility judge reads both at once


@dataclass
class Search:
    """What one search knows, filled in stage by stage."""

    call: Call
    settings: Settings
    query: str
    limit: int
    threshold: float
    filter: str
    searches: texts.Searches | None = None
    found: store_search.Found | None = None
    fused_threshold: float = 0.0  # the similarity a memory needs for a place in the fused order
    message_threshold: float = 0.0  # the same, for the user's message's own list
    fused: list = field(default_factory=list)  # the fused order: the searches' hits above fused_threshold
    fused_scores: list = field(default_factory=list)
    words_led: bool = False  # the word list led the fused order (store_agreement.py)
    reranker_led: bool = False  # the reranker's own order led: it called its best memory relevant (combine)
    new_chat: bool = False  # a recall of the chat's first message: nothing was said before it (plan)
    pool: list = field(default_factory=list)  # the whole pool the reranker reads, fused order first
    rerank_query: str = ""
    # The settings' scorer and its verdict key, decided once (plan); None: fusion alone.
    choice: scorers.Choice | None = None
    scored: Scored | None = None  # the reranker's scores for ``pool``, when it answered
    trust: calibration.Trust | None = None  # the say the reranker earned (scoring/calibration.py)
    unavailable: failures.Failure | None = None  # why the reranker was not used, when one is configured
    no_opinion: str = ""  # the reranker answered but scored every memory alike, in plain words
    not_asked: bool = False  # the reranker's kept say gives it none in this search: it was not asked (score)
    # The pool in the reranker's order after the policies (floor, recency, diversity);
    # without the reranker's scores, the fused order after the policies.
    after_policies: list = field(default_factory=list)
    docs: list = field(default_factory=list)  # the answer, best first, at most ``limit``
    dropped_by_floor: int = 0
    notes: list = field(default_factory=list)
    # Shadow mode: what the agent got, the host's own result, known before the measurement runs.
    host_answer: list | None = None
    started: float = field(default_factory=time.monotonic)  # the latency the record keeps counts from here
    # Asked before recording: a shadow measurement whose plugin was switched off meanwhile
    # has nothing more to say.
    still_wanted: Callable[[], bool] = lambda: True
    # The recall's solutions search, joined to its memories search when the scorer judges
    # both at once (Scorer.judges_recall_at_once: the utility judge): run through the joined
    # stages beside this one, so the score stage can ask about both pools in one call.
    sibling: "Search | None" = None
    sibling_failure: Exception | None = None  # its stages failed: the judge is not asked (score)

    @property
    def area(self) -> str:
        return area_of(self.filter)

    @property
    def slots(self) -> int:
        """How many of the results reach the prompt: the host cuts the memories and the
        solutions searches to its own max_result settings; memory_load shows them all."""
        if self.call.kind != "recall":
            return self.limit
        return min(self.limit, self.call.prompt_slots.get(self.area, DEFAULT_SLOTS))

    @property
    def host_first(self) -> Any | None:
        host = self.found.host_result if self.found else []
        return host[0] if host else None


def area_of(search_filter: str) -> str:
    """Which of the recall's two searches a filter is: the host filters "solutions" apart."""
    return "solutions" if "solutions" in (search_filter or "") else "memories"


@dataclass(frozen=True)
class Stage:
    """One step of a search: ``run(memory, search)`` (sync or async) reads and extends the
    search; ``memory`` is the host's Memory the search is of."""

    name: str
    run: Callable[[Any, Search], Awaitable[None] | None]
    judges_the_pool: bool = False  # nothing to do when the searches found nothing
    joined: bool = False  # the joined sibling search (Search.sibling) runs it too


async def run(memory: Any, search: Search) -> Search:
    """Every stage of STAGES in order, the record last. Before the first stage that judges
    the pool, the search's sibling, when it has one, runs the joined stages (its own pool),
    so one call can judge both. Raises only from the search's own local stages (the wrapper
    falls back): a failure of its sibling's is kept for the score stage, as the judge's."""
    sibling_ran = False
    for stage in STAGES:
        if stage.judges_the_pool and not search.pool:
            continue
        if stage.judges_the_pool and not sibling_ran:
            sibling_ran = True
            await _run_sibling(memory, search)
        await _run_stage(stage, memory, search)
    return search


async def _run_sibling(memory: Any, search: Search) -> None:
    if search.sibling is None:
        return
    try:
        for stage in STAGES:
            if stage.joined:
                await _run_stage(stage, memory, search.sibling)
    except Exception as exc:
        search.sibling_failure = exc


async def _run_stage(stage: Stage, memory: Any, search: Search) -> None:
    done = stage.run(memory, search)
    if inspect.isawaitable(done):
        await done


def plan(memory: Any, search: Search) -> None:
    call, settings = search.call, search.settings
    message = call.message if call.kind == "recall" and call.message else ""
    search.searches = texts.Searches(
        host=search.query,
        message=message if settings.search_message else "",
        followup=texts.followup_text(message, call.history or "", settings.followup_chars)
        if message and settings.search_followup
        else "",
    )
    search.new_chat = bool(message.strip()) and not conversation.turns(call.history or "")
    search.choice = scorers.choose(settings)
    budget = query_budget.chars(search.choice) if search.choice else settings.max_query_chars
    search.rerank_query = texts.reranker_query(call.message, call.history, search.query, budget)
    search.sibling = _joined_sibling(memory, search)


def _joined_sibling(memory: Any, search: Search) -> Search | None:
    """The recall's solutions search, planned as this one was (the same texts, the same
    Choice), when this is a recall's memories search whose scorer judges both searches in
    one call and no verdict keeps it out (judge_call.asks); else None. The host runs the
    solutions search next, in its own call: judge_call hands it its share of the answer."""
    call = search.call
    if (
        memory is None
        or call.kind != "recall"
        or search.area != "memories"
        or call.solutions_limit <= 0
        or not judge_call.asks(search.choice)
    ):
        return None
    return Search(
        call,
        search.settings,
        search.query,
        call.solutions_limit,
        search.threshold,
        judge_call.SOLUTIONS_FILTER,
        searches=search.searches,
        rerank_query=search.rerank_query,
        new_chat=search.new_chat,
        choice=search.choice,
    )


def _similarity_threshold(setting: float, threshold: float) -> float:
    """A similarity threshold setting against the caller's threshold: 0 means the caller's own;
    otherwise the lower of the two (the plugin widens the host's search, never narrows it)."""
    return min(threshold, setting) if setting > 0 else threshold


# How deep each search's list reaches for a reranker's pool, in rerank_candidates: the user's
# message is the precise text (its top 40 held an answer for 0.97 of the tuning questions,
# the three lists at 20 each for 0.96); the host's query, mostly wrapping, adds least.
POOL_DEPTH = {texts.MESSAGE: 2.0, texts.FOLLOWUP: 1.0, texts.HOST: 0.5, texts.LEXICAL: 1.0}


def fused_roles(search: Search) -> tuple[str, ...]:
    """The searches whose lists make the fused order. The host's own query is the user's
    message plus up to 10,000 characters of history, of which its embedder reads the start:
    the greeting in a new chat, tool JSON later. Measured (bench/relevance.py), its list in
    the fusion cost recall on every class and brought Agent Zero's knowledge files into the
    prompt; so it only takes part when it is all there is (no message known: memory_load),
    or when the utility model wrote it (memory_recall_query_prep)."""
    return _fused_of(search.found.lists, search.call.query_prepared)


def _fused_of(roles_searched, query_prepared: bool) -> tuple[str, ...]:
    roles = tuple(r for r in (texts.MESSAGE, texts.FOLLOWUP) if r in roles_searched)
    if not roles or query_prepared:
        roles += (texts.HOST,)
    return roles


async def gather(memory: Any, search: Search) -> None:
    settings = search.settings
    search.fused_threshold = _similarity_threshold(settings.fusion_threshold, search.threshold)
    search.message_threshold = _similarity_threshold(settings.message_threshold, search.threshold)
    fused = min(search.fused_threshold, search.message_threshold)
    # A reranker reads further down the lists than fusion trusts them; without one (or with
    # a judge its verdict keeps out, or one whose say is none wherever it is asked: the
    # score stage does not ask it), the memories below the fused order's thresholds would
    # be found only to be left out.
    reads_pool = may_be_asked(search.choice)
    lowest = min(fused, _similarity_threshold(settings.pool_threshold, search.threshold)) if reads_pool else fused
    # Each search brings its own list, so an extra search never crowds another one's out;
    # the fused order reads rerank_candidates of each, a reranker's pool further.
    depth = max(search.limit, settings.candidates)
    depths = {
        role: max(search.limit, round(settings.candidates * share)) if reads_pool else depth
        for role, share in POOL_DEPTH.items()
    }
    # The lists the fused order is made of are read as deep with a reranker as without one:
    # the fused order (and the word picks it confirms) is the same whether a reranker is
    # configured, unavailable, or has no say.
    for role in _fused_of(search.searches.texts(), search.call.query_prepared):
        depths[role] = max(depths[role], depth)
    lexical_text = search.searches.message or search.query
    searching = store_search.search(
        memory,
        search.searches,
        depths,
        lowest,
        search.limit,
        search.threshold,
        search.filter,
        lexical_text,
        knowledge_last=not about_agent_zero(search),
    )
    if lexical_text.strip() and depths.get(texts.LEXICAL, 0) > 0 and texts.FOLLOWUP not in search.searches.texts():
        # A new chat's search: the store's survey (store_agreement.py) beside the searches, so
        # fuse knows from the store's first question on whether its words lead.
        search.found, _ = await asyncio.gather(searching, store_agreement.survey(getattr(memory, "db", None)))
    else:
        search.found = await searching


def fuse(memory: Any, search: Search) -> None:
    """The fused order: reciprocal-rank fusion of the lists of fused_roles, each above its
    similarity threshold. The user's message, a short precise text, keeps memories down to a lower
    similarity (rerank_message_threshold) than the follow-up search, whose weak matches are
    echoes of the conversation (rerank_fusion_threshold): measured, bench/relevance.py."""
    depth = max(search.limit, search.settings.candidates)
    fused_lists, seen = [], set()
    for role in fused_roles(search):
        hits = search.found.lists[role]
        least = search.message_threshold if role == texts.MESSAGE else search.fused_threshold
        if id(hits) not in seen:  # roles that share a text share one list: count it once
            seen.add(id(hits))
            fused_lists.append([d for d, x in hits[:depth] if x >= least])
    fused = fusion.fuse(fused_lists, store_search.doc_key)
    search.fused = [doc for doc, _ in fused]
    search.fused_scores = [s for _, s in fused]
    words = search.found.lists.get(texts.LEXICAL)
    if words and texts.FOLLOWUP not in search.found.lists:
        # A new chat or memory_load: the message is all the question there is, and the
        # words it shares with a memory are evidence the embedder may rank too low (names,
        # dates, numbers). In a conversation the message alone is often "and the other
        # one?": its words are no evidence, and the fused order stands.
        db = getattr(memory, "db", None)
        search.words_led = store_agreement.words_lead(db)  # from the searches before this one
        embedders = search.found.lists.get(texts.MESSAGE) or search.found.lists.get(texts.HOST) or []
        store_agreement.note_search(
            db, words[0][0], search.found.best_word_coverage, [d for d, _ in embedders], store_search.doc_key
        )
        if search.words_led:
            search.fused = fusion.word_led(
                search.fused, words, search.slots, store_search.doc_key, search.found.stored_at
            )
        else:
            search.fused = fusion.with_word_picks(
                search.fused, words, fused_lists, search.slots, store_search.doc_key, search.found.stored_at
            )
            search.fused = fusion.with_strong_word_match(
                search.fused,
                words[0][0],
                search.found.best_word_coverage,
                search.slots,
                store_search.doc_key,
                stands_out=fusion.stands_out_of_words(words),
            )
        # The fused scores by place, so whatever orders by them (the policies) keeps this order;
        # a strong word match from outside the dense lists gets the lowest.
        scores = sorted(search.fused_scores, reverse=True)
        search.fused_scores = scores + [scores[-1] if scores else 0.0] * (len(search.fused) - len(scores))


def pool(memory: Any, search: Search) -> None:
    """The pool a reranker reads: the fused order first, then the hits of every list the
    fused order left out (below its thresholds and depths, the word list), in their own fused
    order: a reranker can find what the searches ranked too low."""
    in_fused = {store_search.doc_key(d) for d in search.fused}
    every_list = list({id(hits): hits for hits in search.found.lists.values()}.values())
    below = fusion.fuse([[d for d, _ in hits] for hits in every_list], store_search.doc_key)
    search.pool = search.fused + [doc for doc, _ in below if store_search.doc_key(doc) not in in_fused]


async def score(memory: Any, search: Search) -> None:
    """The reranker's scores for the pool and the say it earned, or why there are none.
    Never raises, except cancellation: every failure leaves the fused order standing, and so
    do scores that say nothing (all equal: the utility judge's "[]", nothing useful) and a
    reranker that earned no say on the calibration set; once that is measured, it is not
    asked where it has none (a new chat or a store whose words lead may lend it some). The call gets its
    own timeout or what is left of the recall's deadline, whichever is shorter; the
    calibration (once per reranker) shares that deadline. The utility judge scores the
    pool's first memories only, what it reads (judge_call.py)."""
    settings, choice = search.settings, search.choice
    if choice is None:
        return
    kept = _say_here(calibration.known(choice), search)
    if kept is not None and not kept.has_say:
        # Measured, and no say in this search: its scores could move nothing, so the recall
        # does not wait for them (Test connection measures it again).
        search.trust, search.not_asked = kept, True
        return
    if not search.rerank_query.strip():
        return  # nothing to judge by (a blank message, no conversation yet): a server would refuse it
    texts_ = [d.page_content for d in search.pool]
    deadline = deadlines.call_deadline(search.call.deadline, settings.timeout)
    try:
        # The joined solutions search (the utility judge's one call per recall): a failure of
        # its stages is the judge's here, and leaves the fused order like any other, never
        # the host's own result.
        if search.sibling_failure is not None:
            raise search.sibling_failure
        solutions = [d.page_content for d in search.sibling.pool] if search.sibling is not None else []
        if deadline.remaining() < deadlines.MIN_CALL_S:
            raise DeadlineExceeded(vocabulary.RAN_OUT_BEFORE_ASKED)
        async with asyncio.timeout(deadline.remaining() + GRACE_S):  # the outer guard (deadline.py)
            if choice.scorer.judges_recall_at_once:
                slots = (
                    search.slots,
                    min(search.call.solutions_limit, search.call.prompt_slots.get("solutions", DEFAULT_SLOTS)),
                )
                scored = await judge_call.score(choice, search.rerank_query, texts_, solutions, slots, deadline)
            else:
                scored = await score_documents(choice, search.rerank_query, texts_, deadline)
            trust = await earned_say(choice, deadline, _embedder_of(memory))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        search.unavailable = failures.reranker_unavailable(exc, settings, choice.scorer)
        log.info("a0_reranker: reranker unavailable, the fused order stands: %s", search.unavailable.reason)
        return
    if len(set(scored.scores)) > 1:
        search.scored = scored
        search.trust = _say_here(trust, search)
    else:  # an answer, not a failure: nothing stood out to it
        search.no_opinion = vocabulary.no_opinion(choice.scorer)


def _say_here(trust: calibration.Trust | None, search: Search) -> calibration.Trust | None:
    """The say ``trust`` gives in this search (calibration.lend_say): a new chat's search
    is the calibration set's kind of question, the message alone; where the store's words
    lead the fused order, the embedder the set measured it against is not what that order
    rests on."""
    return calibration.lend_say(trust, new_chat=search.new_chat, words_led=search.words_led)


def _embedder_of(memory: Any) -> Any:
    return getattr(getattr(memory, "db", None), "embedding_function", None)


def has_say(search: Search) -> bool:
    """The reranker answered and earned a say on the calibration set."""
    return search.scored is not None and search.trust is not None and search.trust.has_say


def reranker_leads(search: Search) -> bool:
    """The reranker's own order leads this search: a search of what the user asked alone (a
    new chat's, or one whose words lead: its query is a question, what a reranker was
    trained on, not a question in a conversation's text), where it has a say, keeps the
    calibration's unrelated memories below the answer and calls few of them relevant (its
    line can be read: Trust.means_relevant), and calls the best memory of this pool
    relevant in its own terms (relevant_line.called_relevant). Where a
    trained reranker knows the material it says so, and its order then beats the fused one
    by far (LoCoMo); where it does not (the own bench: its best is rarely called relevant),
    the standout rule keeps the fused order's evidence. docs/relevance.md."""
    return (
        (search.new_chat or search.words_led)
        and has_say(search)
        and search.trust.means_relevant
        and any(relevant_line.called_relevant(search.scored.scores, search.scored.scale))
    )


def apply_policies(memory: Any, search: Search) -> None:
    """The floor, recency and diversity on the reranker's order, or on the fused one."""
    similarities = lambda docs: store_search.similarity_matrix(memory, docs)  # noqa: E731
    if has_say(search):
        # Scores for the pool's first memories: the rest were not read (the utility judge's
        # budget), so they are unjudged, never floored, and follow in their fused place.
        read = len(search.scored.scores)
        outcome = policies.order(
            search.settings,
            search.pool[:read],
            search.scored.scores,
            search.scored.scale,
            search.scored.verdict,
            similarities=similarities,
        )
        outcome.docs = outcome.docs + search.pool[read:]
    else:
        outcome = policies.order(
            search.settings, search.fused, search.fused_scores, "fused", None, similarities=similarities, floors=False
        )
    search.after_policies, search.dropped_by_floor = outcome.docs, outcome.dropped_by_floor
    search.notes += outcome.notes


def about_agent_zero(search: Search) -> bool:
    """The user's message names Agent Zero: its knowledge chunks keep their rank, in the
    word list (gather) and in the prompt (combine)."""
    return texts.names_agent_zero(search.call.message or "")


def combine(memory: Any, search: Search) -> None:
    """The prompt's order. With a reranker's scores that lead (reranker_leads): its order.
    With a say that does not lead: its picks that stand out from the pool
    (fusion.standing_out) take the better of their two places against the fused order, so
    a weak reranker's noise cannot push out what the searches found; the fused memories
    they push out of the slots are the ones it scored lowest (fusion.make_room); the rest
    follow in its order. Then the host's own first memory is kept within the prompt's slots, and
    Agent Zero's knowledge files go after the user's own memories."""
    docs = search.after_policies
    about_it = about_agent_zero(search)
    first = search.host_first
    keeps_first = first is not None and (about_it or not store_search.is_knowledge(first))
    said = has_say(search) and bool(docs)
    # Leading: its order as the policies left it (memories it did not read follow in their
    # fused places); the host's first and the knowledge files are placed below as ever.
    search.reranker_led = said and reranker_leads(search)
    if said and not search.reranker_led:
        kept = {store_search.doc_key(d) for d in docs}  # what the floor kept holds for both
        score_of = {store_search.doc_key(d): s for d, s in zip(search.pool, search.scored.scores)}
        read = [d for d in docs if store_search.doc_key(d) in score_of]  # unjudged ones never stand out
        flags = fusion.standing_out([score_of[store_search.doc_key(d)] for d in read], search.scored.scale)
        confident = [d for d, out in zip(read, flags) if out]
        if search.trust.say != calibration.FULL:
            # Some say: a pick must also be one the searches found near the top (the fused
            # order's first AGREEMENT_DEPTH): the evidence of this search, beside its scores;
            # or, from a reranker that keeps the calibration's unrelated memories below the
            # answer and whose line between relevant and not can be read, one it calls
            # relevant itself.
            agreed = {store_search.doc_key(d) for d in search.fused[: fusion.AGREEMENT_DEPTH]}
            if search.trust.means_relevant:
                sure = relevant_line.called_relevant(
                    [score_of[store_search.doc_key(d)] for d in confident], search.scored.scale
                )
                agreed |= {store_search.doc_key(d) for d, yes in zip(confident, sure) if yes}
            confident = [d for d in confident if store_search.doc_key(d) in agreed]
        fused = [d for d in search.fused if store_search.doc_key(d) in kept]
        merged = fusion.combine(fused, confident, store_search.doc_key)
        reserved = first if keeps_first and store_search.doc_key(first) in kept else None
        merged = fusion.make_room(merged, fused, confident, search.slots, score_of, store_search.doc_key, reserved)
        placed = {store_search.doc_key(d) for d in merged}
        docs = merged + [d for d in docs if store_search.doc_key(d) not in placed]
    if keeps_first and docs:
        docs = fusion.keep_first(docs, first, search.slots, store_search.doc_key)
    if not about_it:
        # Agent Zero's knowledge chunks after the user's own memories: the greeting and tool
        # JSON that fill a recall's query are their words, and a message about Docker or
        # memory shares them; a question that names Agent Zero keeps them where they rank.
        docs = store_search.user_memories_first(docs)
    search.docs = docs[: search.limit]


def record(memory: Any, search: Search) -> None:
    """What the search did, worked out once (outcome_of) and kept (outcome.keep): the
    counters for the status views, the decision log line when one is configured, the chat
    line, and in shadow mode what applying would have changed. Never raises: a failure here
    is logged, and costs the recall nothing."""
    try:
        if search.still_wanted():
            done = outcome_of(search)
            outcome.keep(done, search.call.log_item, search.settings.decision_log, lambda: decision_line(search, done))
    except Exception as exc:  # bookkeeping must never cost a recall
        log.info("a0_reranker: could not record a search: %s", exc)


def outcome_of(search: Search) -> outcome.Outcome:
    """A finished search as an outcome: applied, or in shadow mode against the host's answer."""
    applied = search.settings.apply
    host = _host_answer(search)
    scored = search.scored
    if scored is not None:
        verdict = scored.verdict
    else:  # the route a reranker that was not asked answered on before, for the chat's words
        verdict = probing.cached(search.choice) if search.not_asked else None
    if not search.pool:
        order = outcome.EMPTY
    elif has_say(search):
        order = outcome.RERANKED
    else:
        order = outcome.FUSED
    return outcome.Outcome(
        caller=search.call.kind,
        area=search.area,
        order=order,
        applied=applied,
        latency_ms=outcome.ms_since(search.started),
        failure=search.unavailable,
        changes=changes.versus_host(store_search.doc_keys(host), store_search.doc_keys(search.docs), search.slots),
        no_opinion=search.no_opinion,
        not_asked=search.not_asked,
        notes=tuple(search.notes),
        pool_size=len(search.pool),
        returned=len(search.docs) if applied else len(host),
        shown=len(search.docs[: search.slots]),
        dropped_by_floor=search.dropped_by_floor,
        words_led=search.words_led,
        reranker_led=search.reranker_led,
        scorer=search.choice.scorer if search.choice is not None else None,
        scored=scored is not None,
        scorer_ms=scored.latency_ms if scored is not None else None,
        same_call=scored is not None and scored.same_call,
        post_filter=search.call.post_filter,
        trust=search.trust,
        route=verdict.route if verdict else None,
    )


def decision_line(search: Search, done: outcome.Outcome) -> dict[str, Any]:
    """The decision log's line of a finished search (``done``, its outcome): its orders by id,
    best first, and the reranker's query with the key scrubbed (the user may have pasted it
    into the chat) and then masked. Built only where a decision log is configured."""

    def ids(docs: list) -> list[str]:
        return [str(key) for key in store_search.doc_keys(docs)]

    scored = search.scored
    return decision_log.line(
        caller=done.caller,
        applied=done.applied,
        limit=search.limit,
        masked_query=redact(scrub(search.rerank_query, search.settings)),
        fused=ids(search.fused),
        pool=ids(search.pool),
        host_order=ids(_host_answer(search)),
        plugin_order=ids(search.docs),
        reranker_order=ids(search.after_policies) if has_say(search) else [],
        reranker_say=done.trust.say if done.trust is not None else "",
        reranker_led=done.reranker_led,
        scores=scored.scores if scored is not None else [],
        reranker_unavailable=done.failure.reason if done.failure is not None else "",
        latency_ms=done.latency_ms,
    )


def _host_answer(search: Search) -> list:
    """What the host itself answered: its own result, or in shadow mode what the agent got."""
    return search.found.host_result if search.host_answer is None else search.host_answer


# The stages of a search, in the order they run (run). Each is ``(memory, search)``; the ones
# that judge the pool are skipped when the searches found nothing; the record always runs.
STAGES: tuple[Stage, ...] = (
    Stage("plan", plan),
    Stage("gather", gather, joined=True),
    Stage("fuse", fuse, joined=True),
    Stage("pool", pool, joined=True),
    Stage("score", score, judges_the_pool=True),
    Stage("policies", apply_policies, judges_the_pool=True),
    Stage("combine", combine, judges_the_pool=True),
    Stage("record", record),
)
