"""The scorers — the kinds of thing that can judge (query, memory) pairs — and the one place
that picks the scorer for a set of settings.

Each is a small module with the same few methods and declarations (base.py), in the spirit
of scoring/wire/: a reranker server (remote.py, which detects its wire dialect), the
in-process cross-encoder (local.py), the built-in BM25 (lexical.py, over ../bm25.py) and Agent Zero's
utility model as the judge (utility.py). A new kind of
scorer is a module here and an entry in ``BY_API``; detection, the score cache, the breaker
and the privacy guard apply to it by what it declares.
"""

from __future__ import annotations

from ...settings import Settings
from .base import Scorer
from .lexical import LEXICAL
from .local import LOCAL
from .remote import REMOTE
from .utility import UTILITY

# The rerank_api values that name an in-process scorer; every other value (auto, rerank,
# qwen3_score) means a server, detected or pinned by remote.py.
BY_API: dict[str, Scorer] = {"lexical": LEXICAL, "local": LOCAL, "utility": UTILITY}


def for_settings(settings: Settings) -> Scorer | None:
    """The scorer these settings name, or None: no reranker, the built-in fusion alone."""
    if not settings.has_reranker:
        return None
    return BY_API.get(settings.api, REMOTE)


__all__ = ["Scorer", "BY_API", "LEXICAL", "LOCAL", "REMOTE", "UTILITY", "for_settings"]
