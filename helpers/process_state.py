"""One testing switch for everything the plugin keeps across calls in this process.

Tests (an autouse fixture in tests/conftest.py), the bench and uninstall call
``reset_state()`` instead of clearing each cache by hand, so a cache added later is
cleared everywhere by adding it here once.

The other testing switches read state where it lives, and nothing in the plugin calls them:
``recall.shadow.running()`` (how many shadow measurements run now: the bound),
``recall.shadow.drained()`` (wait for this loop's measurements: tests and the bench read
what shadow mode recorded) and ``settings_cache.size()`` (entries held: the cache's bound,
and that ``reset_state`` empties it).
"""

from __future__ import annotations


def reset_state() -> None:
    """Forget every process-wide cache and counter: settings, probe verdicts, scores, the
    breaker, stats, store scans, query vectors, privacy lookups, learned batch limits,
    query budgets, recall deadlines and the recall line's parts. Loaded local models are dropped too.
    Never stops threads or background work (that is uninstall's job: lifecycle)."""
    from .scoring import breaker, cache, calibration, client, endpoint_guard, probing, query_budget
    from .recall import deadlines, judge_call, lexical_index, query_vectors, recall_line, store_agreement, store_search
    from . import settings_cache
    from .report import stats
    from .scoring.scorers import local, utility

    settings_cache.forget()
    probing.forget()
    calibration.forget()
    cache.CACHE.forget()
    breaker.BREAKER.forget()
    stats.STATS.forget()
    store_search.forget()
    lexical_index.forget()
    store_agreement.forget()
    query_vectors.MEMO.forget()
    query_budget.forget()
    endpoint_guard.forget()
    client.forget_batch_limits()
    deadlines.forget()
    recall_line.forget()
    judge_call.forget()
    local.forget()
    utility.UTILITY.forget()
