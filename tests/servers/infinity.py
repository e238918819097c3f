"""michaelfeil/infinity, `infinity_emb v2` (protocols doc §3).

FastAPI: validation failures are 422 `{"detail": [...]}`, a bad key is 401
`{"detail": "Unauthorized"}`, service errors use an OpenAI-style error object.
"""

from __future__ import annotations

import time
import uuid

from . import scoring
from .base import Backend, Reply, Request, json_reply, ranked_desc
from .validation import Field, fastapi_loads, validate

__all__ = ["InfinityServer"]

_MAX_CHARS = 8192 * 15  # per input string (INFINITY_MAX_CHARS-style guard)


class InfinityServer(Backend):
    kind = "infinity"
    server_header = "uvicorn"
    public_paths = frozenset({"/health"})

    def __init__(
        self,
        *,
        model: str = "mixedbread-ai/mxbai-rerank-xsmall-v1",
        url_prefix: str = "",
        max_client_batch_size: int = 2048,
        **common,
    ) -> None:
        super().__init__(model=model, **common)
        self.url_prefix = url_prefix.rstrip("/")
        self.created = int(time.time())
        self.fields = {
            "query": Field("str", required=True, max_chars=_MAX_CHARS),
            "documents": Field(
                "str_list", required=True, min_items=1, max_items=max_client_batch_size, max_chars=_MAX_CHARS
            ),
            "return_documents": Field("bool", default=False),
            "raw_scores": Field("bool", default=False),
            "model": Field("str", default="default/not-specified"),
            "top_n": Field("int", nullable=True, gt=0),
        }
        p = self.url_prefix
        self.routes = {
            ("POST", f"{p}/rerank"): self.rerank,
            ("GET", f"{p}/models"): self.models,
            ("GET", "/health"): self.health,
            ("GET", f"{p}/openapi.json"): self.openapi,
            ("GET", "/"): self.root,
        }

    def needs_auth(self, req: Request) -> bool:
        # HTTPBearer is a dependency of the model routes only.
        return self.api_key is not None and req.path in (f"{self.url_prefix}/rerank", f"{self.url_prefix}/models")

    def unauthorized(self, req: Request) -> Reply:
        return json_reply({"detail": "Unauthorized"}, 401, {"www-authenticate": "Bearer"})

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        if status == 401:
            return self.unauthorized(None)
        if status == 404:
            return json_reply({"detail": "Not Found"}, 404)
        if status == 405:
            return json_reply({"detail": "Method Not Allowed"}, 405)
        if status == 422:
            return json_reply({"detail": [{"type": "value_error", "loc": ["body"], "msg": message or "invalid"}]}, 422)
        if message is None:
            message = f"model {self.model} is currently overloaded" if status == 429 else f"Injected error {status}"
        return json_reply({"error": {"message": message, "type": None, "param": None, "code": status}}, status)

    # -- routes --------------------------------------------------------------------

    def root(self, req: Request) -> Reply:
        return Reply(307, b"", None, {"location": "/docs"})

    def health(self, req: Request) -> Reply:
        return json_reply({"unix": time.time()})

    def openapi(self, req: Request) -> Reply:
        return json_reply({"openapi": "3.1.0", "info": {"title": "♾️ Infinity - Embedding Inference Server"}})

    def models(self, req: Request) -> Reply:
        info = {
            "id": self.model,
            "stats": {"queue_fraction": 0.0, "queue_absolute": 0, "results_pending": 0, "batch_size": 32},
            "object": "model",
            "owned_by": "infinity",
            "created": self.created,
            "backend": "torch",
            "capabilities": ["rerank"],
        }
        return json_reply({"object": "list", "data": [info]})

    def rerank(self, req: Request) -> Reply:
        data, errors = fastapi_loads(req.body)
        values = {}
        if not errors:
            values, errors = validate(data, self.fields)
        if errors:
            return json_reply({"detail": errors}, 422)
        query = values["query"].strip()  # INPUT_STRING strips surrounding whitespace
        documents = [d.strip() for d in values["documents"]]
        logits = self.infer(query, documents)
        scores = logits if values["raw_scores"] else [scoring.sigmoid(x) for x in logits]
        order = ranked_desc(scores)
        if values["top_n"] is not None:
            order = order[: values["top_n"]]
        # The response model declares `document: Optional[str] = None`, so FastAPI
        # serialises it as null when documents were not requested.
        results = [
            {
                "relevance_score": scores[i],
                "index": i,
                "document": documents[i] if values["return_documents"] else None,
            }
            for i in order
        ]
        tokens = sum(scoring.count_tokens(query) + scoring.count_tokens(d) for d in documents)
        return json_reply(
            {
                "object": "rerank",
                "results": results,
                "model": self.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                "id": f"infinity-{uuid.uuid4()}",
                "created": int(time.time()),
            },
            n_inputs=len(documents),
        )
