"""What a search changed versus Agent Zero's own result, by document key: worked out once per
search (recall/outcome.py) for the chat line and the shadow measurement's counters, and per
logged line for the decision log's summary (decision_log.summarise)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence


@dataclass(frozen=True)
class Changes:
    top_changed: bool  # the first result differs (or one list is empty and the other not)
    from_below_cut: int  # in the new top k, not in the host's result at all
    entered_top_k: int  # in the new top k, not in the host's top k
    top_k_changed: bool  # the top k hold other documents (order aside)
    overlap_at_k: float
    rank_correlation: float  # Spearman, over the documents both hold
    moves: tuple[int, ...]  # how far each document of the new top k moved, when the host has it

    def impact(self) -> dict[str, float | int | bool]:
        """What applying the new order would change: the stats' shadow entry."""
        return {
            "top_changed": self.top_changed,
            "overlap_at_k": self.overlap_at_k,
            "from_below_cut": self.from_below_cut,
            "rank_correlation": self.rank_correlation,
        }


def versus_host(host: Sequence[Hashable], new: Sequence[Hashable], k: int) -> Changes:
    """``new``'s top ``k`` against the host's keys (all of them, and its own top ``k``)."""
    host, top = list(host), list(new[:k])
    common = [key for key in top if key in host]
    return Changes(
        top_changed=host[:1] != top[:1],
        from_below_cut=sum(1 for key in top if key not in host),
        entered_top_k=sum(1 for key in top if key not in host[:k]),
        top_k_changed=set(host[:k]) != set(top),
        overlap_at_k=round(len(set(host[:k]) & set(top)) / max(1, min(k, max(len(top), len(host[:k])))), 3),
        rank_correlation=round(_spearman([host.index(key) for key in common]), 3),
        moves=tuple(abs(host.index(key) - rank) for rank, key in enumerate(top) if key in host),
    )


def _spearman(ranks_in_host_order: list[int]) -> float:
    """Spearman correlation between the new order and the host order of shared items."""
    n = len(ranks_in_host_order)
    if n < 2:
        return 1.0
    by_host = {r: i for i, r in enumerate(sorted(ranks_in_host_order))}
    d2 = sum((pos - by_host[r]) ** 2 for pos, r in enumerate(ranks_in_host_order))
    return 1 - 6 * d2 / (n * (n * n - 1))
