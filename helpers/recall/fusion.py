"""Orders from ranks: the searches fused into one list, and the reranker's order combined
with it so a weak reranker cannot lose what the searches found.

Everything here works on ranks, never on raw scores: the searches' similarities are not
comparable across queries (a short message scores higher against short memories than a
long query does), and rerankers' scores live on scales of their own.

``fuse`` is reciprocal-rank fusion (Cormack et al., 2009): a memory's fused score is the
sum over the searches of 1 / (k + rank). ``combine`` keeps each memory at the better of its
two places — in the fused list and in the reranker's — so the first slots of the prompt
hold the reranker's best and the searches' best alike; ``keep_first`` makes sure the one
memory the host itself would have put first still reaches the prompt. The bench
(``python -m bench.relevance``) measured these against the alternatives; the README says
what was measured and why these won.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Hashable, Mapping, Sequence

from ..scoring import log_odds, relevant_line

RRF_K = 60  # the constant of the original paper; see the README for the k measured here
# How far above the pool's typical score a reranker's pick must stand to take a place from
# the fused order, as a share of sqrt(2 ln n): about how far the largest of n draws of pure
# noise reaches, in standard deviations. Chosen on the tuning half of the bench: a noisy or
# weak reranker's picks rarely stand out that far, a good one's relevant ones do.
STANDOUT = 0.9
# A reranker that earned only some say on the calibration set (scoring/calibration.py): a
# pick that stands out must also be within the fused order's first this many. Chosen on
# the tuning material: noise of σ 4 then never costs a class, a perfect reranker (full say)
# is not held by it.
AGREEMENT_DEPTH = 20
# ... or one the reranker itself calls relevant (scoring/relevant_line.py).


def fuse(lists: Sequence[Sequence[Any]], key: Callable[[Any], Hashable], k: float = RRF_K) -> list[tuple[Any, float]]:
    """Reciprocal-rank fusion of ranked lists (best first) into one, best first, with each
    item's fused score. Ties keep first appearance (the lists' order, then rank)."""
    scores: dict[Hashable, float] = {}
    items: dict[Hashable, Any] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            name = key(item)
            items.setdefault(name, item)
            scores[name] = scores.get(name, 0.0) + 1.0 / (k + rank)
    order = sorted(scores, key=lambda name: -scores[name])  # stable: first appearance wins ties
    return [(items[name], scores[name]) for name in order]


def standing_out(scores: Sequence[float], scale: str) -> list[bool]:
    """Which scores stand out from the pool of n: at least STANDOUT x sqrt(2 ln n) robust
    standard deviations (1.4826 x the median absolute deviation; the plain deviation when
    more than half the pool scores alike) above the pool's median. Probabilities are read
    as logits first, so a sigmoid's saturation near 0 and 1 does not hide how far apart two
    scores are."""
    values = [log_odds.logit(s) for s in scores] if scale == "probability" else [float(s) for s in scores]
    if len(values) < 3:
        return [False] * len(values)
    middle = statistics.median(values)
    spread = 1.4826 * statistics.median(abs(v - middle) for v in values) or _pstdev(values)
    if spread <= 1e-12:
        return [False] * len(values)  # every score alike: nothing stands out
    bar = STANDOUT * math.sqrt(2 * math.log(len(values)))
    return [(v - middle) / spread >= bar for v in values]


# Memories stored within this many places of one another are one episode (a stretch of one
# conversation, facts saved together): what word_led reads, and what confirms a word pick.
# Chosen on LoCoMo's tuning conversations stored turn by turn, for word_led: every reach
# from 2 to 15 gained there (+5 to +7 of 786 questions), 12 the most. For the word picks
# reaches of 2, 5 and 12 answer as many tuning questions (young stores among them), so
# the one number serves both. The studies are in docs/relevance.md.
EPISODE_REACH = 12


# Word picks (with_word_picks): how many of the prompt's last places the word search may
# take, how many of the first places the fused order always keeps, how deep in the word
# list and in the dense lists a pick is looked for, and how close to the best word match it
# must score. Chosen on the tuning material (the own bench's tuning half and LoCoMo); the
# study is in docs/relevance.md.
WORD_PLACES, FUSED_KEEPS = 2, 3
WORD_DEPTH, DENSE_DEPTH = 10, 20
WORD_STRENGTH = 0.7


def with_word_picks(
    fused: Sequence[Any],
    words: Sequence[tuple[Any, float]],
    dense: Sequence[Sequence[Any]],
    slots: int,
    key: Callable[[Any], Hashable],
    stored_at: Mapping[Hashable, int] | None = None,
    reach: int = EPISODE_REACH,
) -> list:
    """``fused`` with up to WORD_PLACES of the prompt's last ``slots`` places given to the
    best word matches (``words``: (item, BM25 score), best first) that score at least
    WORD_STRENGTH of the best word match and are confirmed: within DENSE_DEPTH of one of the
    ``dense`` lists, or stored (``stored_at``: key -> place in the store's order) within
    EPISODE_REACH of one of the fused order's first FUSED_KEEPS, the words finding the
    stretch of the chat the embedder found. The fused order always keeps its first
    FUSED_KEEPS places, so a paraphrase the embedder found first is never pushed out by a
    memory that only shares the question's words. ``reach``: for the bench's study
    (bench/word_pick_variants.py)."""
    places = min(WORD_PLACES, slots - FUSED_KEEPS)
    if places <= 0 or not words:
        return list(fused)
    keep = slots - places
    head = list(fused[:keep])
    shown = {key(item) for item in head}
    confirmed = {key(item) for hits in dense for item in hits[:DENSE_DEPTH]}
    confirmed |= _stored_beside([item for item, _ in words[:WORD_DEPTH]], fused[:FUSED_KEEPS], stored_at, key, reach)
    best = words[0][1]
    picks = [
        item
        for item, score in words[:WORD_DEPTH]
        if key(item) not in shown and key(item) in confirmed and score >= WORD_STRENGTH * best
    ][:places]
    picked = {key(item) for item in picks}
    return head + picks + [item for item in fused[keep:] if key(item) not in picked]


def _stored_beside(
    items: Sequence[Any],
    others: Sequence[Any],
    stored_at: Mapping[Hashable, int] | None,
    key: Callable[[Any], Hashable],
    reach: int,
) -> set:
    """The keys of ``items`` stored within ``reach`` places of one of ``others`` (none where
    a place is not known)."""
    if not stored_at:
        return set()
    places = [at for other in others if (at := stored_at.get(key(other))) is not None]
    return {key(item) for item in items if (at := stored_at.get(key(item))) is not None and _within(at, places, reach)}


def _within(at: int, places: Sequence[int], reach: int) -> bool:
    """Whether a memory stored at ``at`` shares an episode with one stored at any of ``places``."""
    return any(abs(at - place) <= reach for place in places)


# A strong word match (with_strong_word_match): the best word match that holds at least
# this share of the message's words, each weighted by its IDF over the store. Chosen on the
# tuning material (the own bench's tuning half, LoCoMo's tuning conversations, stored as
# observations and turn by turn); the study is in docs/relevance.md.
STRONG_COVERAGE = 0.5


def stands_out_of_words(words: Sequence[tuple[Any, float]]) -> bool:
    """Whether the best word match's BM25 score stands out from the word list's (``words``:
    (item, score), best first) by the rule a reranker's pick must meet (standing_out): a
    memory that shares the message's rarest words where the rest share its common ones."""
    return standing_out([score for _, score in words], "bm25")[:1] == [True]


def with_strong_word_match(
    fused: Sequence[Any],
    best_word: Any | None,
    coverage: float,
    slots: int,
    key: Callable[[Any], Hashable],
    stands_out: bool = False,
) -> list:
    """``fused`` with ``best_word`` (the best word match) right after the fused order's first
    FUSED_KEEPS places when it holds at least STRONG_COVERAGE of the message's words, or its
    score stands out from the word list's (``stands_out``: stands_out_of_words), and the
    prompt's ``slots`` do not already show it. A memory that holds most of what the user
    said, rare words first, is the answer more often than the embedder's fifth pick: in chat
    stored turn by turn the embedder's first five miss such a match half the time. Not the
    last place: that is where the host's own first memory goes when it is below
    (keep_first), and it would push the match out again."""
    if best_word is None or (coverage < STRONG_COVERAGE and not stands_out) or slots <= FUSED_KEEPS:
        return list(fused)
    name = key(best_word)
    if any(key(item) == name for item in fused[:slots]):
        return list(fused)
    rest = [item for item in fused if key(item) != name]
    return rest[:FUSED_KEEPS] + [best_word] + rest[FUSED_KEEPS:]


def word_led(
    fused: Sequence[Any],
    words: Sequence[tuple[Any, float]],
    slots: int,
    key: Callable[[Any], Hashable],
    stored_at: Mapping[Hashable, int] | None = None,
    reach: int = EPISODE_REACH,
) -> list:
    """The order of a store whose embedder misses what the words find (store_agreement.py):
    the best word matches (``words``: (item, BM25 score), best first) take the prompt's
    first ``slots`` - 1 places, the fused order's first (the embedder's best guess) the
    last of them; then the rest of the word matches, then the rest of the fused order.

    ``stored_at`` (key -> where the store holds the memory, in the order it was stored):
    the embedder's guess keeps that last place when it was stored beside one of the word
    matches above it (within EPISODE_REACH), the words and the embedder pointing at one
    episode; stored apart from all of them, in a store whose embedder is the weaker
    searcher, it is a lone guess, and the next word match goes before it. Where a place is
    not known the guess keeps its place. ``reach``: for the bench's study (bench/episode_reach.py)."""
    lead = [item for item, _ in words[: max(slots - 1, 0)]]
    led = {key(item) for item in lead}
    embedders = [item for item in fused if key(item) not in led][:1]
    following = [item for item, _ in words[len(lead) :]]
    if embedders and following and stored_at and _stored_apart(embedders[0], lead, stored_at, key, reach):
        embedders = [following[0], *embedders]
    out, seen = [], set()
    for item in [*lead, *embedders, *following, *fused]:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def _stored_apart(
    item: Any, others: Sequence[Any], stored_at: Mapping[Hashable, int], key: Callable[[Any], Hashable], reach: int
) -> bool:
    """``item`` was stored more than ``reach`` places from every one of ``others`` (False
    when a place is not known)."""
    at = stored_at.get(key(item))
    places = [stored_at.get(key(other)) for other in others]
    if at is None or not places or None in places:
        return False
    return not _within(at, places, reach)


def _pstdev(values: Sequence[float]) -> float:
    """The population standard deviation in floats (statistics.pstdev sums in exact
    fractions: a tenth of a millisecond for a pool of 60, on every search)."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def combine(fused: Sequence[Any], reranked: Sequence[Any], key: Callable[[Any], Hashable]) -> list:
    """The reranker's order merged with the fused one, each item at the better of its two
    ranks. At equal best ranks the item whose other rank is better goes first, then the
    reranker's pick. An item only one of the two lists holds keeps the rank it has there."""
    missing = len(fused) + len(reranked) + 1
    fused_rank = {key(item): r for r, item in enumerate(fused)}
    reranked_rank = {key(item): r for r, item in enumerate(reranked)}
    items = {key(item): item for item in [*fused, *reranked]}

    def place(name: Hashable) -> tuple[int, int, int]:
        a, b = fused_rank.get(name, missing), reranked_rank.get(name, missing)
        return (min(a, b), max(a, b), b)

    return [items[name] for name in sorted(items, key=place)]


def make_room(
    merged: Sequence[Any],
    fused: Sequence[Any],
    picks: Sequence[Any],
    slots: int,
    score_of: Mapping[Hashable, float],
    key: Callable[[Any], Hashable],
    reserved: Any | None = None,
) -> list:
    """``merged`` (combine of ``fused`` and ``picks``) with the fused memories that keep a
    place in the first ``slots`` beside the picks chosen by the reranker's scores
    (``score_of``): when the picks push some of the fused order's own first ``slots`` out,
    the ones that make way are those the reranker scored lowest, not the fused order's
    last. It read them all, and the fused order's last places are where the searches are
    least sure: measured on the tuning halves (docs/relevance.md), more questions answered
    in both kinds of LoCoMo store with every say, the own bench's the same, no class lower.
    A memory the fused order had below the slots is never brought in by this.

    ``reserved``: the host's first memory when keep_first will keep it in the slots; it
    takes a place of its own, so the fused ones are chosen for the rest. Where a fused
    memory in question has no score (not read: the utility judge's budget), ``merged``
    stands."""
    picked = {key(item) for item in picks}
    held = reserved is not None and key(reserved) not in picked
    shown = [item for item in merged[:slots] if key(item) in picked]
    candidates = [
        item for item in fused[:slots] if key(item) not in picked and not (held and key(item) == key(reserved))
    ]
    room = slots - len(shown) - (1 if held else 0)
    if len(candidates) <= room or any(key(item) not in score_of for item in candidates):
        return list(merged)

    def score(item: Any) -> float:
        value = score_of[key(item)]
        return value if relevant_line.finite(value) else -math.inf

    chosen = sorted(candidates, key=score, reverse=True)[: max(room, 0)]  # stable: ties keep fused order
    stays = {key(item) for item in [*shown, *chosen]} | ({key(reserved)} if held else set())
    return [item for item in merged if key(item) in stays] + [item for item in merged if key(item) not in stays]


def keep_first(ordered: Sequence[Any], first: Any | None, slots: int, key: Callable[[Any], Hashable]) -> list:
    """``ordered`` with ``first`` moved up into the first ``slots`` places if it is below them
    (into the last of them, so the order above it stands)."""
    out = list(ordered)
    if first is None or slots <= 0:
        return out
    name = key(first)
    at = next((i for i, item in enumerate(out) if key(item) == name), None)
    if at is None or at < slots:
        return out
    out.insert(slots - 1, out.pop(at))
    return out
