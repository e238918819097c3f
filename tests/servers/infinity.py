"""michaelfeil/infinity, `infinity_emb v2` (protocols doc §3), as 0.0.78 answers: checked
against the real server (tests/real/test_infinity_real.py).

FastAPI checks the key first (401 `{"detail": "Unauthorized"}`), then the body (422
`{"detail": [...]}`, pydantic 2's error list), then the handler resolves the model (400,
OpenAI-style error object). Each `--model-id` is served under the last two parts of its
path ("/srv/models/bge" -> "models/bge"); with one model any `model` value reaches it, with
several a missing or unknown one is refused with the list of served names. A (query,
document) pair is cut to the model's token limit, longest part first, never refused for
its length; only a text over 122,880 characters is. `usage` counts characters.
"""

from __future__ import annotations

import time
import uuid

from . import scoring
from .base import Backend, Reply, Request, json_reply, ranked_desc
from .validation import Field, fastapi_loads, validate

__all__ = ["InfinityServer", "served_name", "truncate_pair"]

_MAX_CHARS = 8192 * 15  # per input string, after stripping whitespace (INPUT_STRING)
_UNNAMED = "default/not-specified"  # the `model` of a request that names none
_SPECIAL_TOKENS = 3  # [CLS] query [SEP] document [SEP]


def served_name(model_id: str) -> str:
    """EngineArgs' default served_model_name: the id's last two path parts."""
    return "/".join(model_id.split("/")[-2:])


def truncate_pair(query: str, document: str, limit: int) -> tuple[str, str]:
    """The tokenizer's truncation="longest_first": tokens come off the longer text until the
    pair fits, so a short query stays whole and a long document loses its end."""
    q, d = scoring.count_tokens(query), scoring.count_tokens(document)
    if q + d <= limit:
        return query, document
    shorter = min(q, d)
    keep_short = shorter if shorter <= limit // 2 else limit // 2
    keep_long = limit - keep_short
    q_keep, d_keep = (keep_short, keep_long) if q <= d else (keep_long, keep_short)
    return scoring.truncate_tokens(query, q_keep), scoring.truncate_tokens(document, d_keep)


class InfinityServer(Backend):
    kind = "infinity"
    server_header = "uvicorn"
    public_paths = frozenset({"/health"})

    def __init__(
        self,
        *,
        model: str = "mixedbread-ai/mxbai-rerank-xsmall-v1",
        models: tuple[str, ...] = (),
        url_prefix: str = "",
        max_client_batch_size: int = 2048,
        max_length: int = 512,
        **common,
    ) -> None:
        """`model` is one `--model-id`; `models` several (then `model` is ignored)."""
        self.served = [served_name(m) for m in (models or (model,))]
        super().__init__(model=self.served[0], **common)
        self.url_prefix = url_prefix.rstrip("/")
        self.max_length = max_length
        self.created = int(time.time())
        self.fields = {
            "query": Field("str", required=True, max_chars=_MAX_CHARS),
            "documents": Field(
                "str_list", required=True, min_items=1, max_items=max_client_batch_size, max_chars=_MAX_CHARS
            ),
            "return_documents": Field("bool", default=False),
            "raw_scores": Field("bool", default=False),
            "model": Field("str", default=_UNNAMED),
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
            # The queue-full 429 names the model the request asked for.
            message = f"model {_UNNAMED} is currently overloaded" if status == 429 else f"Injected error {status}"
        return json_reply({"error": {"message": message, "type": None, "param": None, "code": status}}, status)

    def _resolve(self, requested: str) -> str | None:
        """AsyncEngineArray[name]: the only engine, or the one of that name."""
        if len(self.served) == 1:
            return self.served[0]
        return requested if requested in self.served else None

    # -- routes --------------------------------------------------------------------

    def root(self, req: Request) -> Reply:
        return Reply(307, b"", None, {"location": "/docs"})

    def health(self, req: Request) -> Reply:
        return json_reply({"unix": time.time()})

    def openapi(self, req: Request) -> Reply:
        return json_reply({"openapi": "3.1.0", "info": {"title": "♾️ Infinity - Embedding Inference Server"}})

    def models(self, req: Request) -> Reply:
        stats = {"queue_fraction": 0.0, "queue_absolute": 0, "results_pending": 0, "batch_size": 32}
        data = [
            {
                "id": name,
                "stats": stats,
                "object": "model",
                "owned_by": "infinity",
                "created": self.created,
                "backend": "torch",
                "capabilities": ["rerank"],
            }
            for name in self.served
        ]
        return json_reply({"data": data, "object": "list"})

    def rerank(self, req: Request) -> Reply:
        data, errors = fastapi_loads(req.body)
        values = {}
        if not errors:
            values, errors = validate(data, self.fields)
        if errors:
            return json_reply({"detail": errors}, 422)
        engine = self._resolve(values["model"])
        if engine is None:
            message = (
                f"Invalid model: Engine for model name `{values['model']}` not found. "
                f"Available model names are {self.served!r}"
            )
            return self.error_reply(400, message)
        query = values["query"].strip()  # INPUT_STRING strips surrounding whitespace
        documents = [d.strip() for d in values["documents"]]
        pairs = [truncate_pair(query, d, self.max_length - _SPECIAL_TOKENS) for d in documents]
        logits = [self.logit(q, d) for q, d in pairs]
        if self.latency:
            time.sleep(self.latency)
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
        # Without lengths_via_tokenize, usage is the characters of query + document per pair.
        used = sum(len(query) + len(d) for d in documents)
        return json_reply(
            {
                "object": "rerank",
                "results": results,
                "model": engine,
                "usage": {"prompt_tokens": used, "total_tokens": used},
                "id": f"infinity-{uuid.uuid4()}",
                "created": int(time.time()),
            },
            n_inputs=len(documents),
        )
