"""The public API other plugins import.

    from usr.plugins.a0_reranker.helpers import reranker
    pairs = reranker.rerank(query, documents)   # [(orig_index, score), ...] best first, or None

``rerank`` and ``arerank`` never raise: ``None`` means "reranker unavailable, keep your
order". ``rerank`` is synchronous and blocking, and safe to call from a thread whose event
loop is running; ``arerank`` is its async twin. ``config`` is a mapping of this plugin's
setting keys; ``None`` means the plugin's configured settings. ``reset_state()`` forgets
every process-wide cache (a testing switch). This module re-exports only: the logic is in
scoring/ (async_api.py, sync.py), settings_cache.py and status_report.py.
"""

from __future__ import annotations

from .process_state import reset_state
from .scoring.async_api import Ranking, aprobe, arerank, warm_up
from .scoring.sync import probe, rerank
from .settings import PLUGIN_NAME
from .settings_cache import load_settings
from .status_report import status

__all__ = [
    "rerank",
    "arerank",
    "probe",
    "aprobe",
    "status",
    "warm_up",
    "reset_state",
    "PLUGIN_NAME",
    "load_settings",
    "Ranking",
]
