"""The candidate pool for one recall search, and the query the reranker reads.

The host's recall query is the user's message plus up to 10,000 characters of history, and
a filtered FAISS search only ever looks at 20 vectors. So the pool is gathered here: the
host's own query past the 20-vector cap, plus (for recall) the user's message alone and the
message with a short tail of the newest history, for follow-ups whose meaning lives in the
conversation. The host's default embedder reads only its first 256 tokens (~700 characters),
so a longer tail would be silently ignored by the search.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Sequence

# Exhaustive search up to this many vectors; past it, a generous multiple of the pool.
_EXHAUSTIVE_UP_TO = 20_000


@dataclass(frozen=True)
class Searches:
    """The texts to search with, most precise first. ``host`` is the caller's own query."""

    host: str
    message: str = ""
    followup: str = ""

    def texts(self) -> list[str]:
        seen, out = set(), []
        for text in (self.message, self.followup, self.host):
            if text and text.strip() and text not in seen:
                seen.add(text)
                out.append(text)
        return out


def history_tail(history: str, chars: int) -> str:
    """The newest ``chars`` characters of history, starting at a line boundary when possible."""
    if chars <= 0 or not history:
        return ""
    tail = history[-chars:]
    if len(history) > chars and "\n" in tail[: chars // 2]:
        tail = tail[tail.index("\n") + 1 :]
    return tail.strip()


def reranker_query(message: str | None, history: str | None, host_query: str, budget: int) -> str:
    """The user's message plus the newest history that fits ``budget`` characters.

    Without a known message (``memory_load``, an unknown caller) the host's query is cut to
    the budget, keeping its start, where the host puts the message."""
    if message is None:
        return host_query[:budget]
    message = message.strip()
    if len(message) >= budget:
        return message[:budget]
    room = budget - len(message) - 2
    tail = history_tail(history or "", room) if room > 0 else ""
    return f"{message}\n\n{tail}" if tail else message


def fetch_k(db: Any, pool_size: int) -> int:
    """How many nearest vectors FAISS should look at so a filter still leaves ``pool_size``."""
    total = getattr(getattr(db, "index", None), "ntotal", 0) or 0
    if 0 < total <= _EXHAUSTIVE_UP_TO:
        return total
    return max(pool_size * 50, 1000)


async def search_pool(memory: Any, text: str, pool_size: int, threshold: float, filter: str) -> list:
    """The host's own search, widened: same store, same comparator, same relevance scale,
    but ``pool_size`` results drawn from enough vectors that the filter does not starve it."""
    comparator = remembering_comparator(type(memory)._get_comparator(filter), filter) if filter else None
    return await memory.db.asearch(
        text,
        search_type="similarity_score_threshold",
        k=pool_size,
        score_threshold=threshold,
        filter=comparator,
        fetch_k=fetch_k(memory.db, pool_size),
    )


_MISSING = object()


def remembering_comparator(comparator: Callable[[dict], Any], condition: str) -> Callable[[dict], Any]:
    """``comparator`` asked once per distinct value of the names ``condition`` reads.

    The host evaluates its filter (simpleeval) for every document it looks at, parsing the
    condition each time (~25 µs). A pool search looks at every stored memory, three times
    per recall, so that parse was most of the plugin's cost and grew with the store. The
    host's comparator still decides every case; documents whose names hold the same values
    (``area == 'main'``: three areas) share its answer. A condition that calls a function,
    or a value that cannot be a dict key, goes to the host's comparator every time."""
    names = _names_read(condition)
    if names is None:
        return comparator
    answers: dict[tuple, Any] = {}

    def remembered(metadata: dict) -> Any:
        try:
            key = tuple((type(v), v) for v in (metadata.get(name, _MISSING) for name in names))
            if key not in answers:
                answers[key] = comparator(metadata)
            return answers[key]
        except TypeError:  # an unhashable value (a list, a dict)
            return comparator(metadata)

    return remembered


def _names_read(condition: str) -> tuple[str, ...] | None:
    """The names an expression reads; None when its value may depend on more (a call)."""
    try:
        tree = ast.parse(condition.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Name):
            names.add(node.id)
    return tuple(sorted(names))


def doc_key(doc: Any) -> Any:
    return (doc.metadata or {}).get("id") or id(doc)


def interleave(pools: Sequence[Sequence[Any]], cap: int) -> list:
    """Merge ranked pools without duplicates, taking from each in turn, up to ``cap``."""
    merged, seen = [], set()
    longest = max((len(p) for p in pools), default=0)
    for rank in range(longest):
        for pool in pools:
            if rank < len(pool):
                key = doc_key(pool[rank])
                if key not in seen:
                    seen.add(key)
                    merged.append(pool[rank])
                    if len(merged) >= cap:
                        return merged
    return merged


def similarity_matrix(memory: Any, docs: Sequence[Any]) -> Any | None:
    """Cosine similarities between ``docs`` from the host's own stored FAISS vectors, or
    None when they cannot be had (then diversity falls back to word overlap)."""
    try:
        import numpy as np  # inside Agent Zero with FAISS, numpy is always present

        db = memory.db
        position = {doc_id: i for i, doc_id in db.index_to_docstore_id.items()}
        ids = [getattr(doc, "id", None) or (doc.metadata or {}).get("id") for doc in docs]
        matrix = np.stack([db.index.reconstruct(position[doc_id]) for doc_id in ids]).astype("float64")
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)
        return matrix @ matrix.T
    except Exception:  # a store without reconstruct, or a document not in this index
        return None
