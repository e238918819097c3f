"""The wire dialects and the ordered list of routes detection tries.

Order matters: cheap, common, unambiguous routes first. A Cohere-style body sent to TEI
fails fast (422, missing ``texts``), and raw text is always tried before the Qwen3 template,
so a server that templates on its own side is never sent a prompt templated twice.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .base import Dialect, Route
from .results import MIXEDBREAD, RERANK, VOYAGE
from .score import SCORE
from .tei import TEI, TEI_DEFAULT_BATCH

GENERIC_ROUTES: tuple[Route, ...] = (
    Route(RERANK, "/v1/rerank"),  # vLLM, llama.cpp, Jina, Infinity with a /v1 prefix
    Route(RERANK, "/rerank"),  # Infinity, vLLM, llama.cpp
    Route(TEI, "/rerank"),  # TEI (no /v1 prefix, texts)
    Route(RERANK, "/v2/rerank"),  # Cohere v2, vLLM
    Route(SCORE, "/score"),  # vLLM /score with a server-side score template
    Route(SCORE, "/score", templated=True),  # vLLM <=0.13 Qwen3: the client renders the judge prompt
    Route(MIXEDBREAD, "/v1/reranking"),
)

# Hosted APIs are known by their host; there is nothing to guess.
HOSTED_ROUTES: dict[str, tuple[Route, ...]] = {
    "api.cohere.com": (Route(RERANK, "/v2/rerank"), Route(RERANK, "/v1/rerank")),
    "api.cohere.ai": (Route(RERANK, "/v2/rerank"), Route(RERANK, "/v1/rerank")),
    "api.jina.ai": (Route(RERANK, "/v1/rerank"),),
    "api.voyageai.com": (Route(VOYAGE, "/v1/rerank"),),
    "api.mixedbread.com": (Route(MIXEDBREAD, "/v1/reranking"),),
    "api.mixedbread.ai": (Route(MIXEDBREAD, "/v1/reranking"),),
}

# The paths a user may paste as part of the endpoint; the base URL is what precedes them.
KNOWN_PATHS = tuple(sorted({r.path for r in GENERIC_ROUTES}, key=len, reverse=True))


def split_endpoint(endpoint: str) -> tuple[str, str]:
    """``http://h:8/v1/rerank`` -> (``http://h:8``, ``/v1/rerank``); a bare base -> (base, "")."""
    endpoint = endpoint.rstrip("/")
    for path in KNOWN_PATHS:
        if endpoint.endswith(path):
            return endpoint[: -len(path)], path
    return endpoint, ""


def candidate_routes(endpoint: str, api: str) -> tuple[Route, ...]:
    """The routes worth probing for ``endpoint`` under the ``rerank_api`` setting ``api``."""
    base, path = split_endpoint(endpoint)
    host = (urlsplit(base).hostname or "").lower()
    routes = HOSTED_ROUTES.get(host, GENERIC_ROUTES)
    if path:
        routes = tuple(r for r in routes if r.path == path) or tuple(r for r in GENERIC_ROUTES if r.path == path)
    if api == "rerank":
        routes = tuple(r for r in routes if r.api == "rerank")
    elif api == "qwen3_score":
        routes = tuple(r for r in routes if r.dialect is SCORE) or (
            Route(SCORE, "/score"),
            Route(SCORE, "/score", templated=True),
        )
    return routes


__all__ = [
    "Dialect",
    "Route",
    "RERANK",
    "VOYAGE",
    "MIXEDBREAD",
    "TEI",
    "SCORE",
    "TEI_DEFAULT_BATCH",
    "GENERIC_ROUTES",
    "HOSTED_ROUTES",
    "split_endpoint",
    "candidate_routes",
]
