"""After the reranker's scores: the relevance floor, recency, and diversity.

Each is off by default and each, when off, leaves the plain score order untouched, so the
off state is exactly "best score first, ties in pool order".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Sequence

from .settings import Settings

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"  # the host's Memory.get_timestamp(), local time


@dataclass
class Outcome:
    docs: list
    dropped_by_floor: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def all_dropped(self) -> bool:
        return not self.docs and self.dropped_by_floor > 0


def normalise(scores: Sequence[float], scale: str) -> list[float]:
    """Relevance on 0..1, so it can be blended with recency and compared in MMR."""
    if scale == "probability":
        return [min(1.0, max(0.0, s)) for s in scores]
    if scale == "cosine":
        return [(s + 1) / 2 for s in scores]
    if scale == "logit":
        return [1 / (1 + math.exp(-max(-60.0, min(60.0, s)))) for s in scores]
    top = max(scores, default=0.0)  # bm25 and unknown scales: relative to the best
    return [s / top if top > 0 else 0.0 for s in scores]


def floor_value(settings: Settings, verdict: Any) -> float | None:
    """The strictest of the absolute floor and the probe-relative floor, on the server's scale."""
    floors = []
    if settings.min_score is not None:
        floors.append(settings.min_score)
    if settings.relative_floor > 0 and verdict is not None:
        floors.append(verdict.irrelevant + settings.relative_floor * (verdict.relevant - verdict.irrelevant))
    return max(floors) if floors else None


def age_days(doc: Any, now: datetime) -> float | None:
    meta = getattr(doc, "metadata", None) or {}
    if meta.get("knowledge_source"):  # knowledge files are not memories; their age means nothing
        return None
    stamp = meta.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return max(0.0, (now - datetime.strptime(stamp, TIMESTAMP_FORMAT)).total_seconds() / 86400)
    except ValueError:
        return None


def blend_recency(settings: Settings, docs: Sequence[Any], relevance: list[float], now: datetime) -> list[float]:
    """score = (1 - w)·relevance + w·0.5^(age/half-life); undated documents keep their relevance."""
    w = settings.recency_weight
    out = []
    for doc, rel in zip(docs, relevance):
        age = age_days(doc, now)
        out.append(rel if age is None else (1 - w) * rel + w * 0.5 ** (age / settings.recency_half_life_days))
    return out


_WORD = re.compile(r"\w+")


def token_similarity(a: str, b: str) -> float:
    """Jaccard overlap of word sets: the fallback similarity when no vectors are at hand."""
    sa, sb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def mmr(docs: Sequence[Any], relevance: list[float], lam: float, similarity: Callable[[int, int], float]) -> list[int]:
    """Maximal marginal relevance: each pick trades relevance against its closest earlier pick.
    The closest-pick similarity is kept up to date per candidate, so this is O(n^2)."""
    remaining = list(range(len(docs)))
    redundancy = [0.0] * len(docs)
    chosen: list[int] = []
    while remaining:
        best = max(remaining, key=lambda i: (lam * relevance[i] - (1 - lam) * redundancy[i], -i))
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            redundancy[i] = max(redundancy[i], similarity(i, best))
    return chosen


def order(
    settings: Settings,
    docs: Sequence[Any],
    scores: Sequence[float],
    scale: str,
    verdict: Any = None,
    *,
    similarities: Callable[[Sequence[Any]], Any] | None = None,
    now: datetime | None = None,
) -> Outcome:
    """``docs`` best first after the floor, recency and diversity settings."""
    outcome = Outcome([])
    keep = list(range(len(docs)))
    floor = floor_value(settings, verdict)
    if floor is not None:
        keep = [i for i in keep if scores[i] >= floor]
        outcome.dropped_by_floor = len(docs) - len(keep)
        if not keep:
            outcome.notes.append(f"every candidate scored below the relevance floor {floor:.4g}")
            return outcome
    kept_docs = [docs[i] for i in keep]
    kept_scores = [scores[i] for i in keep]
    if settings.recency_weight <= 0 and settings.mmr_lambda >= 1:
        ranked = sorted(range(len(keep)), key=lambda i: (-kept_scores[i], i))
        outcome.docs = [kept_docs[i] for i in ranked]
        return outcome
    relevance = normalise(kept_scores, scale)
    if settings.recency_weight > 0:
        relevance = blend_recency(settings, kept_docs, relevance, now or datetime.now())
    if settings.mmr_lambda >= 1:
        ranked = sorted(range(len(keep)), key=lambda i: (-relevance[i], i))
    else:
        matrix = similarities(kept_docs) if similarities else None
        if matrix is not None:
            sim = lambda i, j: float(matrix[i][j])  # noqa: E731
        else:
            texts = [d.page_content for d in kept_docs]
            sim = lambda i, j: token_similarity(texts[i], texts[j])  # noqa: E731
        ranked = mmr(kept_docs, relevance, settings.mmr_lambda, sim)
    outcome.docs = [kept_docs[i] for i in ranked]
    return outcome
