"""What the plugin is doing, in plain words: one place for every view that says so (the
panel and Test connection, the status API and tool, the chat skill, the CLI)."""

from __future__ import annotations

from typing import Any

from .settings import Settings

OFF = "off"
FUSION = "fusion"
LEXICAL = "fusion+lexical"
LOCAL = "fusion+local"
REMOTE = "fusion+reranker"
UTILITY = "fusion+utility"


def mode(settings: Settings) -> str:
    if not settings.enabled:
        return OFF
    if not settings.has_reranker:
        return FUSION
    return {"lexical": LEXICAL, "local": LOCAL, "utility": UTILITY}.get(settings.api, REMOTE)


def describe(settings: Settings, route: str | None = None) -> str:
    """One line: which mode, and whether its order is applied. ``route`` is the detected
    route of a server (e.g. "TEI /rerank"), when known."""
    current = mode(settings)
    if current == OFF:
        return "off: recall is stock Agent Zero (rerank_enabled is false)"
    if current == FUSION:
        text = "built-in fusion, no reranker server"
        if settings.api in ("rerank", "qwen3_score"):
            text += f" (rerank_api is '{settings.api}' but rerank_endpoint is empty)"
    elif current == LEXICAL:
        text = "built-in fusion + the built-in lexical reranker (BM25, no server)"
    elif current == UTILITY:
        text = "built-in fusion + Agent Zero's utility model as the judge (one LLM call per search, no server)"
    elif current == LOCAL:
        text = f"built-in fusion + the in-process cross-encoder {settings.local_model}"
    else:
        text = f"built-in fusion + the reranker at {settings.endpoint} ({route or 'API detected on first use'})"
    if not settings.apply:
        text += "; shadow mode: measured only, the agent gets Agent Zero's own order"
    return text


def as_dict(settings: Settings, route: str | None = None) -> dict[str, Any]:
    return {"mode": mode(settings), "mode_text": describe(settings, route), "applied": settings.apply}
