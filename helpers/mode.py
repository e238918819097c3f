"""What the plugin is doing, in plain words: the one vocabulary every view uses — the chat's
recall line, the panel and Test connection (served to the browser by
api/settings_fields.py, like the settings' limits), the status API and tool, the chat
skill and the CLI. No word here holds a path or a URL: the web UI turns path-like text in
a recall step into file-browser links."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from .settings import Settings, shown_endpoint

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


# The chat's recall line names what ordered the memories, once per recall.
CHAT = {
    FUSION: "ordered by the plugin's own searches, no reranker",
    LEXICAL: "reranked by the built-in word matcher (BM25)",
    LOCAL: "reranked by the in-process cross-encoder",
    UTILITY: "judged by Agent Zero's utility model",
}
# A server by the wire it speaks; the rerank family (Cohere, Jina, Infinity, llama.cpp,
# vLLM /rerank) shares one wire, so it is named by its role.
SERVERS = {"tei": "your TEI server", "vllm-score": "your vLLM server", "voyage": "the Voyage API",
           "mixedbread": "the Mixedbread API"}
SERVER = "your reranker server"
QWEN3 = "your Qwen3-Reranker on vLLM"

# Test connection's verdicts: a headline and what to do next, per verdict; data, kept in
# verdict_words.json beside this module.
VERDICT_WORDS = Path(__file__).with_name("verdict_words.json")


@functools.lru_cache(maxsize=1)
def verdict_words() -> dict[str, dict[str, str]]:
    return json.loads(VERDICT_WORDS.read_text(encoding="utf-8"))["verdicts"]


def chat_words(settings: Settings, route: Any = None) -> str:
    """What ordered a recall's memories, for the chat's line. ``route``: the detected route
    of a server (helpers/wire), when one answered."""
    current = mode(settings)
    if current in CHAT:
        return CHAT[current]
    if route is None:
        return f"reranked by {SERVER}"
    if route.templated:
        return f"reranked by {QWEN3}"
    return f"reranked by {SERVERS.get(route.dialect.name, SERVER)}"


def judge_name(settings: Settings, route: Any = None) -> str:
    """What judged, as a noun: "your TEI server", "the built-in word matcher (BM25)"."""
    words = chat_words(settings, route)
    return words.split(" by ", 1)[1] if " by " in words else words


def no_say_words(settings: Settings, route: Any, trust: Any) -> str:
    """The chat line's words for a reranker that answered but earned no say on the
    calibration set (scoring/calibration.py), or whose say is not measured yet."""
    name = judge_name(settings, route)
    if trust is None or trust.say == "unmeasured":
        return f"{name} answered, but has no say until its calibration finishes"
    return f"{name} answered, but has no say: it did not order the calibration questions clearly better than Agent Zero's own search"


def vocabulary() -> dict[str, Any]:
    """The words the settings panel shows, as the panel reads them."""
    return {"verdicts": verdict_words(),
            "modes": {m: CHAT.get(m, f"reranked by {SERVER}") for m in (FUSION, LEXICAL, LOCAL, UTILITY, REMOTE)}}


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
        text = "built-in fusion + Agent Zero's utility model as the judge (one LLM call per recall, no server)"
    elif current == LOCAL:
        text = f"built-in fusion + the in-process cross-encoder {settings.local_model}"
    else:
        text = f"built-in fusion + the reranker at {shown_endpoint(settings.endpoint)} ({route or 'API detected on first use'})"
    if not settings.apply:
        text += "; shadow mode: measured only, the agent gets Agent Zero's own order"
    return text


def as_dict(settings: Settings, route: str | None = None) -> dict[str, Any]:
    return {"mode": mode(settings), "mode_text": describe(settings, route), "applied": settings.apply}
