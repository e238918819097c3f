"""The registry: kind name -> a factory for its backend.

Each entry fixes what distinguishes that server (version, status codes, model
mode); the caller's options (api_key, model, scorer, latency, limits) pass through,
and an unknown option is a TypeError rather than silently ignored.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from .base import Backend
from .cohere import CohereServer
from .infinity import InfinityServer
from .jina import JinaServer
from .llamacpp import LlamaCppServer
from .mixedbread import MixedbreadServer
from .tei import TeiServer
from .vllm import VllmServer
from .voyage import VoyageServer

__all__ = ["KINDS", "SERVER_KINDS", "make_backend"]

_QWEN3 = "Qwen/Qwen3-Reranker-0.6B"

KINDS: dict[str, Callable[..., Backend]] = {
    "tei18": partial(TeiServer, version="1.8.3", validation_status=413, fail_fast=False, auto_truncate=False),
    "tei19": partial(TeiServer, version="1.9.3", validation_status=422, fail_fast=True, auto_truncate=True),
    "vllm013": partial(VllmServer, mode="qwen3_raw", version="0.13.0", model=_QWEN3),
    "vllm014": partial(VllmServer, mode="qwen3_template", version="0.14.0", model=_QWEN3),
    "vllm_crossencoder": partial(VllmServer, mode="cross_encoder", version="0.13.0", model="BAAI/bge-reranker-v2-m3"),
    "vllm_generative": partial(VllmServer, mode="generative", version="0.13.0", model="Qwen/Qwen2.5-0.5B-Instruct"),
    "infinity": InfinityServer,
    "llamacpp": LlamaCppServer,
    "llamacpp_norerank": partial(LlamaCppServer, reranking=False),
    "cohere": CohereServer,
    "jina": JinaServer,
    "voyage": VoyageServer,
    "mixedbread": MixedbreadServer,
}

SERVER_KINDS: tuple[str, ...] = tuple(KINDS)


def make_backend(kind: str, **options) -> Backend:
    try:
        factory = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown server kind {kind!r}; expected one of {SERVER_KINDS}") from None
    backend = factory(**options)
    backend.kind = kind
    return backend
