"""What the plugin is doing, in plain words: the one vocabulary every view uses — the chat's
recall line, the panel and Test connection (served to the browser by
api/settings_fields.py, like the settings' limits), the status API and tool, the chat
skill and the CLI. No word here holds a path or a URL: the web UI turns path-like text in
a recall step into file-browser links."""

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

# Test connection's verdicts (helpers/verdicts.py): a headline, and what to do next.
VERDICTS = {
    "ok": ("Works", ""),
    "weak": ("Works, but weakly", "Usable, but a stronger reranker model would separate relevant memories better."),
    "fusion": ("Built-in fusion, no reranker server", ""),
    "unreachable": ("Cannot connect", "Check the URL and port, and that the server is running. Inside Docker, 127.0.0.1 is the "
                    "Agent Zero container itself: use host.docker.internal or the server's address."),
    "auth": ("API key refused", "Type the key the server expects into API key (or clear it if the server needs none), then test again."),
    "model": ("Choose a model", "Type one of the model names above into Model, then test again."),
    "misranks": ("Answers, but ranks wrongly", "Check the model id, and leave Reranker API on auto: this route answers, but its scores do not rank."),
    "unsupported": ("Server cannot rerank", "llama.cpp needs a reranker model and the --reranking flag."),
    "not_configured": ("Nothing to test", "Enter the reranker server's base URL in Endpoint, or set Reranker API to auto "
                       "(built-in fusion), lexical, local or utility."),
    "bad_setting": ("Invalid setting", "Fix the setting named above; the fields marked in red are out of range."),
    "refused": ("Refused by the privacy setting", "'Private endpoints only' is on and this endpoint is outside loopback and private networks."),
    "timeout": ("No answer in time", "The server took longer than the timeout: a bigger timeout, a smaller model or fewer candidates."),
    "error": ("Not usable", ""),
}


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


def vocabulary() -> dict[str, Any]:
    """The words the settings panel shows, as the panel reads them."""
    return {"verdicts": {v: {"headline": h, "hint": hint} for v, (h, hint) in VERDICTS.items()},
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
