"""After the reranker's scores: the relevance floor, recency, and diversity.

Each is off by default and each, when off, leaves the plain score order untouched, so the
off state is exactly "best score first, ties in pool order" (what ``async_api.ranking``
gives). They compose in this order: the floor drops candidates on the server's scores,
recency blends age into the relevance of what is left, MMR orders the result.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Sequence

from .. import vocabulary
from ..scoring import log_odds
from ..settings import Settings

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"  # the host's Memory.get_timestamp(): local time, naive


@dataclass
class Outcome:
    docs: list
    dropped_by_floor: int = 0
    notes: list[str] = field(default_factory=list)


# --- relevance on 0..1 ------------------------------------------------------------------
def normalise(scores: Sequence[float], scale: str) -> list[float]:
    """Relevance on 0..1, so it can be blended with recency and weighed against similarity.

    Monotonic per scale (a probe-detected property of the server, not of this one pool):
    probabilities as they are, cosine mapped from -1..1, logits through the sigmoid (what
    the same model's probability output would be). BM25 has no fixed range: relative to the
    pool's best. An unknown scale falls back to the pool's min..max."""
    if scale == "probability":
        return [min(1.0, max(0.0, s)) for s in scores]
    if scale == "cosine":
        return [min(1.0, max(0.0, (s + 1) / 2)) for s in scores]
    if scale == "logit":
        return [log_odds.sigmoid(s) for s in scores]
    if scale in ("bm25", "fused"):  # no fixed range: relative to the pool's best
        top = max(scores, default=0.0)
        return [max(0.0, s) / top if top > 0 else 0.0 for s in scores]
    low, high = min(scores, default=0.0), max(scores, default=0.0)
    return [(s - low) / (high - low) if high > low else 1.0 for s in scores]


# --- the relevance floor ----------------------------------------------------------------
def relative_cut(settings: Settings, verdict: Any) -> float | None:
    """The probe-relative floor on the 0..1 relevance scale, or None when off or unknown.

    It is placed between the probe's irrelevant and relevant scores *after* normalising
    them, not on the raw scale: the same model served with sigmoid outputs (TEI, Infinity)
    and with raw logits (llama.cpp, TEI raw_scores) then keeps the same memories."""
    if settings.relative_floor <= 0 or verdict is None or verdict.scale in ("bm25", "fused"):
        return None  # off, unprobed, or a scale relative to each pool: the probe's pool calibrates nothing
    relevant, irrelevant = normalise([verdict.relevant, verdict.irrelevant], verdict.scale)
    if relevant <= irrelevant:  # a probe that ranked wrongly calibrates nothing
        return None
    return irrelevant + settings.relative_floor * (relevant - irrelevant)


def apply_floor(settings: Settings, scores: Sequence[float], scale: str, verdict: Any) -> tuple[list[int], str]:
    """Indices of the candidates at or above every floor that is on, and the floors as text.

    ``rerank_min_score`` is compared with the server's own scores (the scale the probe
    detected: a probability, a logit, ...); ``rerank_relative_floor`` on 0..1 (above)."""
    keep = list(range(len(scores)))
    described = []
    if settings.min_score is not None:
        keep = [i for i in keep if scores[i] >= settings.min_score]
        described.append(vocabulary.min_score_floor(settings.min_score, scale))
    cut = relative_cut(settings, verdict)
    if cut is not None:
        relevance = normalise(scores, scale)
        keep = [i for i in keep if relevance[i] >= cut]
        described.append(vocabulary.relative_floor(settings.relative_floor, cut))
    return keep, " and ".join(described)


# --- recency ----------------------------------------------------------------------------
def age_days(doc: Any, now: datetime) -> float | None:
    """Days since the memory was saved, or None when it has no usable timestamp.

    Knowledge-file documents carry a timestamp too (when they were imported), but it says
    nothing about how current their content is, so they count as undated."""
    meta = getattr(doc, "metadata", None) or {}
    if meta.get("knowledge_source"):
        return None
    stamp = meta.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        saved = datetime.strptime(stamp.strip(), TIMESTAMP_FORMAT)
    except ValueError:
        return None
    # Both naive, both local time; .timestamp() reads them as local time, DST included.
    return max(0.0, (now.timestamp() - saved.timestamp()) / 86400)


def blend_recency(settings: Settings, docs: Sequence[Any], relevance: Sequence[float], now: datetime) -> list[float]:
    """score = (1 - w)·relevance + w·0.5^(age / half-life).

    Undated candidates (no timestamp, knowledge files) get the pool's mean recency term:
    age then neither promotes nor demotes them against the dated candidates, and they are
    ordered among the rest by relevance alone. Keeping their raw relevance instead (an
    earlier draft) amounts to a recency term equal to their own relevance, so a strong
    match would count as brand new and a weak one as ancient."""
    w = settings.recency_weight
    terms = []
    for doc in docs:
        age = age_days(doc, now)
        terms.append(None if age is None else 0.5 ** (age / settings.recency_half_life_days))
    dated = [t for t in terms if t is not None]
    if not dated:
        return list(relevance)
    neutral = statistics.fmean(dated)
    return [(1 - w) * rel + w * (neutral if term is None else term) for rel, term in zip(relevance, terms)]


# --- diversity --------------------------------------------------------------------------
_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _jaccard(sa: frozenset[str], sb: frozenset[str]) -> float:
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def mmr(
    relevance: Sequence[float],
    lam: float,
    similarity: Callable[[int, int], float],
    tiebreak: Sequence[float] | None = None,
) -> list[int]:
    """Maximal marginal relevance over all candidates: each pick maximises
    lam·relevance − (1 − lam)·(its highest similarity to an earlier pick).
    The highest similarity is kept up to date per candidate, so this is O(n²).
    Ties go to the higher ``tiebreak`` (the raw score), then to the earlier candidate."""
    n = len(relevance)
    tiebreak = tiebreak if tiebreak is not None else [0.0] * n
    remaining = list(range(n))
    redundancy = [-math.inf] * n  # nothing picked yet: no penalty
    chosen: list[int] = []
    while remaining:

        def gain(i: int) -> tuple[float, float, int]:
            penalty = redundancy[i] if chosen else 0.0
            return (lam * relevance[i] - (1 - lam) * penalty, tiebreak[i], -i)

        best = max(remaining, key=gain)
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            redundancy[i] = max(redundancy[i], similarity(i, best))
    return chosen


def mmr_matrix(
    relevance: Sequence[float], lam: float, matrix: Any, tiebreak: Sequence[float] | None = None
) -> list[int]:
    """``mmr`` with the similarities as a square (symmetric) numpy matrix, each pick's work
    done by numpy over all candidates at once: the same picks, ties broken the same way.
    The pure loop held the event loop 1 s on a 500-deep pool; this takes milliseconds."""
    import numpy as np

    n = len(relevance)
    sims = np.asarray(matrix, dtype="float64")
    weighted = lam * np.asarray(relevance, dtype="float64")
    ties = np.asarray(tiebreak if tiebreak is not None else [0.0] * n, dtype="float64")
    redundancy = np.full(n, -np.inf)  # per candidate, its highest similarity to a pick
    picked = np.zeros(n, dtype=bool)
    gain = weighted.copy()  # nothing picked yet: no penalty
    chosen: list[int] = []
    for _ in range(n):
        candidates = np.flatnonzero(gain == gain.max())
        if len(candidates) > 1:  # the higher tiebreak, then the earlier candidate
            candidates = candidates[ties[candidates] == ties[candidates].max()]
        best = int(candidates[0])
        chosen.append(best)
        picked[best] = True
        np.maximum(redundancy, sims[best], out=redundancy)  # symmetric: the row is the column
        # mmr's arithmetic in mmr's order (a - b is a + -b exactly): equal gains stay equal.
        np.multiply(redundancy, -(1 - lam), out=gain)
        gain += weighted
        gain[picked] = -np.inf
    return chosen


# --- all together -----------------------------------------------------------------------
def order(
    settings: Settings,
    docs: Sequence[Any],
    scores: Sequence[float],
    scale: str,
    verdict: Any = None,
    *,
    similarities: Callable[[Sequence[Any]], Any] | None = None,
    now: datetime | None = None,
    floors: bool = True,
) -> Outcome:
    """``docs`` best first after the floor, recency and diversity settings.

    ``scores`` are the server's, in ``docs`` order, on ``scale``; ``verdict`` is the probe's
    (for the relative floor); ``similarities(docs)`` may return a square matrix (the host's
    vectors) or None (then word overlap is used). ``floors=False`` for scores that are not
    a reranker's (the fused order): the floors are set on a reranker's scale."""
    outcome = Outcome([])
    keep, floor = apply_floor(settings, scores, scale, verdict) if floors else (list(range(len(scores))), "")
    outcome.dropped_by_floor = len(docs) - len(keep)
    if docs and not keep:
        outcome.notes.append(vocabulary.all_dropped(floor))
        return outcome
    kept_docs = [docs[i] for i in keep]
    kept_scores = [scores[i] for i in keep]
    if settings.recency_weight <= 0 and settings.mmr_lambda >= 1:
        # Exactly the plain order: raw score, ties in pool order. No normalising on the way.
        ranked = sorted(range(len(keep)), key=lambda i: (-kept_scores[i], i))
        outcome.docs = [kept_docs[i] for i in ranked]
        return outcome
    relevance = normalise(kept_scores, scale)
    if settings.recency_weight > 0:
        relevance = blend_recency(settings, kept_docs, relevance, now or datetime.now())
    if settings.mmr_lambda >= 1:
        ranked = sorted(range(len(keep)), key=lambda i: (-relevance[i], -kept_scores[i], i))
    else:
        matrix = similarities(kept_docs) if similarities and len(kept_docs) > 1 else None
        if matrix is not None:  # the host's vectors: numpy is there
            ranked = mmr_matrix(relevance, settings.mmr_lambda, matrix, kept_scores)
        else:
            words = [_words(getattr(d, "page_content", "") or "") for d in kept_docs]
            ranked = mmr(relevance, settings.mmr_lambda, lambda i, j: _jaccard(words[i], words[j]), kept_scores)
    outcome.docs = [kept_docs[i] for i in ranked]
    return outcome
