"""How much of the conversation a reranker's query holds.

A reranker reads the user's message and the newest conversation that fits its scorer's
budget (``Scorer.query_chars``: rerank_max_query_chars, 2,000 by default; 400 for the local
cross-encoder on the CPU). A cross-encoder reads the query beside every memory of the
pool, so a reranker server on a CPU that scores a new chat's short query in time can run
out of rerank_timeout on a long chat's 2,000 characters (the real ms-marco-MiniLM-L-12: 60
memories in 1.9 s with a 73-character query, 11.3 s with 1,997; ``python -m
bench.local_cost``). Left alone it would cost every later recall of that chat its whole
timeout for the fused order it then keeps.

So a reranker that had its whole time (``utility.had_its_time``), after its probe, for a
query longer than SHORT_QUERY_CHARS and gave no answer reads at most SHORT_QUERY_CHARS from
then on (score.score_documents raises ``QueryCut``, which the chat line words): for those
settings (the verdict key: endpoint, model, API, ...), in this process. Another setting is
another key and starts at its scorer's budget again. The probe reads its own three short
pairs, so a probe that runs out says nothing of the query; a judge too slow for recall is
kept out by its verdict instead (scoring/probing.py). Another plugin's call
(reranker.rerank) that runs out on its own long query counts too: it is the same reranker,
and only recall's query is built to this budget (pipeline.plan).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .scorers import Choice, local, utility

# The query the local cross-encoder on the CPU reads (its time and its relevance were
# measured with it): one figure for "a query a CPU scores in time".
SHORT_QUERY_CHARS = local.CPU_QUERY_CHARS
KEPT = 64  # settings remembered at most (each a few bytes)

_ran_out: OrderedDict[tuple, int] = OrderedDict()  # verdict key -> the query's length that ran out
_lock = threading.Lock()


def chars(choice: Choice) -> int:
    """The most characters of the message and the newest conversation this reranker's
    query holds: its scorer's budget, or SHORT_QUERY_CHARS after it ran out of time."""
    budget = choice.scorer.query_chars(choice.settings)
    with _lock:
        cut = choice.key in _ran_out
    return min(budget, SHORT_QUERY_CHARS) if cut else budget


def ran_out(choice: Choice, query_chars: int, allowed_s: float) -> bool:
    """A call of ``choice`` given ``allowed_s`` seconds gave no answer to a query of
    ``query_chars`` characters. True when its query is cut from now on (it had its whole
    time, the query was longer than SHORT_QUERY_CHARS, and it was not cut already)."""
    if choice.scorer.probes_once or query_chars <= SHORT_QUERY_CHARS:
        return False
    if not utility.had_its_time(allowed_s, choice.settings):
        return False  # the recall's deadline cut it short: the reranker's time says nothing
    with _lock:
        if choice.key in _ran_out:
            return False
        _ran_out[choice.key] = query_chars
        while len(_ran_out) > KEPT:
            _ran_out.popitem(last=False)
    return True


def ran_out_on(choice: Choice) -> int | None:
    """The length of the query this reranker ran out of time on, when that cut its query."""
    with _lock:
        return _ran_out.get(choice.key)


def forget() -> None:
    with _lock:
        _ran_out.clear()
