"""The scorers — the kinds of thing that can judge (query, memory) pairs — and the one place
that picks the scorer for a set of settings.

Each is a small module with the same few methods and declarations (base.py), in the spirit
of scoring/wire/: a reranker server (remote.py, which detects its wire dialect), the
in-process cross-encoder (local.py), the built-in BM25 (lexical.py, over ../bm25.py) and Agent
Zero's utility model as the judge (utility.py). A new kind of scorer is a module here and an
entry in ``BY_API`` (or a wire dialect, for a server); detection, the score cache, the
breaker, the endpoint guard and the words every view uses apply to it by what it declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import Settings
from .base import Scorer
from .lexical import LEXICAL
from .local import LOCAL
from .remote import REMOTE
from .utility import UTILITY

# The scorers a rerank_api value names, keyed by what each declares (``api``); every other
# value (auto, rerank, qwen3_score) names a server at rerank_endpoint, detected or pinned
# by remote.py. The one table of APIs and their kinds: the settings' choices are checked
# against it (tests/test_scorers.py).
BY_API: dict[str, Scorer] = {scorer.api: scorer for scorer in (LEXICAL, LOCAL, UTILITY)}


def for_settings(settings: Settings) -> Scorer | None:
    """The scorer these settings name, or None: no reranker, the built-in fusion alone."""
    named = BY_API.get(settings.api)
    if named is not None:
        return named
    return REMOTE if settings.endpoint else None


@dataclass(frozen=True)
class Choice:
    """The scorer a call uses and the key its verdict (and its scores, its say) are kept
    under: decided once by the caller (a search's plan stage, arerank, aprobe) and passed
    down to score_documents, earned_say and the calibration."""

    settings: Settings
    scorer: Scorer
    key: tuple


def verdict_key(settings: Settings, scorer: Scorer) -> tuple:
    """What a probe's verdict depends on: the endpoint, model, API, instruction, document
    budget and key, and what the scorer adds (the utility model, its budgets)."""
    return (
        settings.endpoint,
        settings.model,
        settings.api,
        settings.instruction,
        settings.max_doc_chars,
        settings.key_fingerprint,
        *scorer.verdict_key(settings),
    )


def choose(settings: Settings) -> Choice | None:
    """The settings' scorer and its verdict key, or None when they name no reranker."""
    return choice_of(settings, for_settings(settings))


def choice_of(settings: Settings, scorer: Scorer | None) -> Choice | None:
    """The Choice of ``scorer`` (for_settings' pick) for ``settings``: its verdict key read
    now, in the caller's context (the utility judge's names the asked agent's model). For an
    entry point that must know the scorer before it knows whom to ask (Test connection)."""
    return None if scorer is None else Choice(settings, scorer, verdict_key(settings, scorer))


__all__ = [
    "Scorer",
    "Choice",
    "BY_API",
    "LEXICAL",
    "LOCAL",
    "REMOTE",
    "UTILITY",
    "for_settings",
    "choose",
    "choice_of",
    "verdict_key",
]
