"""llama.cpp `llama-server` (protocols doc §4).

Scores are the rank head's raw output: logits for a BERT-style cross-encoder such
as bge-reranker. A body with `texts` is answered TEI-style (a bare array), any
other body Jina-style. Started without `--reranking`, every rerank path is 501.
"""

from __future__ import annotations

import json
import time

from . import scoring
from .base import Backend, Reply, Request, json_reply, ranked_desc

__all__ = ["LlamaCppServer"]

_RERANK_PATHS = ("/rerank", "/reranking", "/v1/rerank", "/v1/reranking")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    500: "server_error",
    501: "not_supported_error",
    503: "unavailable_error",
}
_DEFAULT_MESSAGES = {
    401: "Invalid API Key",
    404: "File Not Found",
    501: "This server does not support reranking. Start it with `--reranking`",
    503: "Loading model",
}


class LlamaCppServer(Backend):
    kind = "llamacpp"
    auth_before_routing = True  # the key check is a pre-routing middleware
    public_paths = frozenset({"/health", "/v1/health", "/models", "/v1/models", "/api/tags"})

    def __init__(
        self, *, model: str = "bge-reranker-v2-m3-Q8_0.gguf", reranking: bool = True, n_ubatch: int = 512, **common
    ) -> None:
        super().__init__(model=model, **common)
        self.reranking = reranking
        self.n_ubatch = n_ubatch  # -ub: a rerank pair is never split across physical batches (default 512)
        self.created = int(time.time())
        self.routes = {("POST", p): self.rerank for p in _RERANK_PATHS}
        self.routes.update(
            {
                ("GET", "/health"): self.health,
                ("GET", "/v1/health"): self.health,
                ("GET", "/models"): self.models,
                ("GET", "/v1/models"): self.models,
            }
        )

    # The reference server also takes the bare key and X-Api-Key.
    def authorized(self, req: Request) -> bool:
        auth = req.header("authorization")
        return self.api_key in (auth.removeprefix("Bearer "), req.header("x-api-key"))

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        # llama.cpp has no 429 of its own; the fault knob borrows unavailable_error.
        err_type = _ERROR_TYPES.get(status, "unavailable_error" if status == 429 else "server_error")
        message = message or _DEFAULT_MESSAGES.get(status, f"Injected error {status}")
        return json_reply({"error": {"code": status, "message": message, "type": err_type}}, status)

    # Routes are matched per method, so a wrong method is just "File Not Found".
    def method_not_allowed(self, req: Request) -> Reply:
        return self.error_reply(404)

    # -- routes --------------------------------------------------------------------

    def health(self, req: Request) -> Reply:
        return json_reply({"status": "ok"})

    def models(self, req: Request) -> Reply:
        card = {
            "id": self.model,
            "object": "model",
            "created": self.created,
            "owned_by": "llamacpp",
            "meta": {
                "vocab_type": 1,
                "n_vocab": 250002,
                "n_ctx_train": 8192,
                "n_embd": 1024,
                "n_params": 567754752,
                "size": 604584960,
            },
        }
        return json_reply({"models": [{"name": self.model, "model": self.model}], "object": "list", "data": [card]})

    def rerank(self, req: Request) -> Reply:
        if not self.reranking:
            return self.error_reply(501)
        try:
            body = json.loads(req.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            # nlohmann::json's parse_error escapes to the generic handler: a 500.
            return self.error_reply(
                500,
                "[json.exception.parse_error.101] parse error at line 1, column "
                f"{getattr(exc, 'colno', 1)}: syntax error while parsing value",
            )
        if not isinstance(body, dict):
            return self.error_reply(400, '"query" must be provided')
        tei_format = "texts" in body
        if "query" not in body:
            return self.error_reply(400, '"query" must be provided')
        query = body["query"]
        if not isinstance(query, str):
            return self.error_reply(400, '"query" must be a string')
        documents = body.get("documents", body.get("texts"))
        if not (isinstance(documents, list) and documents and all(isinstance(d, str) for d in documents)):
            return self.error_reply(400, '"documents" must be a non-empty string array')
        top_n = body.get("top_n", len(documents))
        if not isinstance(top_n, int) or isinstance(top_n, bool):
            top_n = len(documents)

        for d in documents:  # server-context.cpp: a pair that cannot be split must fit n_ubatch
            n = scoring.count_tokens(query) + scoring.count_tokens(d) + 4
            if n > self.n_ubatch:
                return self.error_reply(
                    500,
                    f"input ({n} tokens) is too large to process. increase the physical batch size "
                    f"(current batch size: {self.n_ubatch})",
                )
        scores = self.infer(query, documents)  # raw head output: no activation
        order = ranked_desc(scores)[: max(0, top_n)]
        if tei_format:
            return_text = body.get("return_text") is True
            ranks = []
            for i in order:
                rank = {"index": i, "score": scores[i]}
                if return_text:
                    rank["text"] = documents[i]
                ranks.append(rank)
            return json_reply(ranks, n_inputs=len(documents))
        tokens = sum(scoring.count_tokens(query) + scoring.count_tokens(d) + 4 for d in documents)
        return json_reply(
            {
                "model": self.model,
                "object": "list",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                "results": [{"index": i, "relevance_score": scores[i]} for i in order],
            },
            n_inputs=len(documents),
        )
