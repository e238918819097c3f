"""A probability and its log-odds, one way each: the standout rule reads probabilities as
logits (recall/fusion.py), a logit becomes a 0..1 relevance (recall/policies.py), and the
judge spaces its listed memories evenly as logits (scoring/judge.py)."""

from __future__ import annotations

import math

# A probability of exactly 0 or 1 has no log-odds: it is read as this close to them.
_EDGE = 1e-6


def logit(p: float) -> float:
    p = min(max(float(p), _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)  # no overflow for a large negative x
    return z / (1.0 + z)
