"""A reranker's own line between relevant and not, by the scale its probe detected.

A cross-encoder trained as a classifier says "relevant" at a probability of 0.5, a logit
of 0: its own line, not one fitted here. Cosine, BM25 and the fused order's scales have no
such line (a cosine of 0.6 means nothing by itself), so they never say "relevant". What
reads the line: the calibration (how many memories about something else entirely a
reranker calls relevant: whether its line can be read at all, calibration.Trust.means_relevant)
and recall (a pick it calls relevant, a search whose best memory it does: recall/pipeline.py).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from . import log_odds

# A probability of at least this (a logit of at least its log-odds, 0). Not tuned: 0.3 to
# 0.7 measured alike on the tuning halves, 0.9 fewer (docs/relevance.md).
RELEVANT_AT_LEAST = 0.5
SCALES_WITH_A_LINE = ("probability", "logit")


def called_relevant(scores: Sequence[float], scale: str | None) -> list[bool]:
    """Which of ``scores`` say "relevant" in the model's own terms; on a scale with no such
    line, none. A score that is not a finite number says nothing."""
    if scale == "probability":
        return [finite(s) and s >= RELEVANT_AT_LEAST for s in scores]
    if scale == "logit":
        line = log_odds.logit(RELEVANT_AT_LEAST)
        return [finite(s) and s >= line for s in scores]
    return [False] * len(scores)


def finite(x: Any) -> bool:
    """A score that is a number and finite: what says anything here and in the calibration."""
    return isinstance(x, (int, float)) and math.isfinite(x)
