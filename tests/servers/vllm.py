"""vLLM's OpenAI-compatible server, 0.13/0.14 era (protocols doc §2 and §8).

One class, four models behind it (`mode`):
- "qwen3_raw": original Qwen3-Reranker without a score template (0.13). vLLM
  scores the bare concatenation `query + document`, so only a client-rendered
  judge prompt scores correctly; anything else gets compressed, inverted scores.
- "qwen3_template": the same model with `--chat-template` (0.14). vLLM renders the
  prompt itself; a client that renders it too gets 0.5 for everything.
- "cross_encoder": a classic single-logit cross-encoder (sigmoid scores).
- "generative": a model that cannot score; rerank/score answer HTTP 200 with an
  error body.
"""

from __future__ import annotations

import time
import uuid

from . import qwen3, scoring
from .base import Backend, Reply, Request, empty_reply, json_reply
from .validation import Field, fastapi_loads, pydantic_repr, validate

__all__ = ["VllmServer", "MODES"]

MODES = ("qwen3_raw", "qwen3_template", "cross_encoder", "generative")

_COMMON_FIELDS = {
    "model": Field("str", nullable=True),
    "truncate_prompt_tokens": Field("int", nullable=True),
    "use_activation": Field("bool", nullable=True),
    "softmax": Field("bool", nullable=True),
    "activation": Field("bool", nullable=True),
    "priority": Field("int", default=0),
}
_RERANK_FIELDS = {
    "query": Field("str_or_content", required=True),
    "documents": Field("str_list_or_content", required=True),
    "top_n": Field("int", default=0),
    **_COMMON_FIELDS,
}
_SCORE_FIELDS = {
    "text_1": Field("str_or_str_list", required=True),
    "text_2": Field("str_or_str_list", required=True),
    **_COMMON_FIELDS,
}
_ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    405: "MethodNotAllowed",
    429: "TooManyRequestsError",  # vLLM itself never sends 429; only the fault knob does
    500: "InternalServerError",
    501: "NotImplementedError",
    503: "ServiceUnavailableError",
}
_NOT_SUPPORTED = {
    "error": {
        "message": "The model does not support Rerank (Score) API",
        "type": "BadRequestError",
        "code": 400,
    }
}


def _content_text(value) -> str:
    """Flatten vLLM's multimodal `{"content": [...]}` param to its text parts."""
    if isinstance(value, str):
        return value
    parts = value.get("content", [])
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


class VllmServer(Backend):
    kind = "vllm"
    server_header = "uvicorn"
    auth_before_routing = True  # AuthenticationMiddleware, path-prefix based

    def __init__(
        self,
        *,
        mode: str,
        version: str,
        model: str,
        max_model_len: int | None = None,
        **common,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown vLLM mode {mode!r}")
        super().__init__(model=model, **common)
        self.mode = mode
        self.version = version
        self.max_model_len = max_model_len or (8192 if mode == "cross_encoder" else 40960)
        self.created = int(time.time())
        # Tokens the server-side template adds around each pair (vLLM >= 0.14 only).
        self.template_tokens = scoring.count_tokens(qwen3.render_prompt("", "")) if mode == "qwen3_template" else 0
        rerank, score = self.rerank, self.score
        self.routes = {
            ("POST", "/rerank"): rerank,
            ("POST", "/v1/rerank"): rerank,
            ("POST", "/v2/rerank"): rerank,
            ("POST", "/score"): score,
            ("POST", "/v1/score"): score,
            ("GET", "/v1/models"): self.models,
            ("GET", "/health"): self.health,
            ("GET", "/ping"): self.health,
            ("GET", "/version"): self.version_route,
            ("GET", "/openapi.json"): self.openapi,
        }

    # Up to 0.14 only paths starting with /v1 are guarded, so /rerank stays open.
    def needs_auth(self, req: Request) -> bool:
        return self.api_key is not None and req.method != "OPTIONS" and req.path.startswith("/v1")

    # -- errors --------------------------------------------------------------------

    def vllm_error(self, status: int, message: str, err_type: str | None = None, param=None) -> Reply:
        err_type = err_type or _ERROR_TYPES.get(status, "InternalServerError")
        return json_reply({"error": {"message": message, "type": err_type, "param": param, "code": status}}, status)

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        if status == 401:
            return json_reply({"error": "Unauthorized"}, 401)
        if status == 404 and message is None:  # Starlette's routing 404, not vLLM's handler
            return json_reply({"detail": "Not Found"}, 404)
        if status == 405 and message is None:
            return json_reply({"detail": "Method Not Allowed"}, 405)
        return self.vllm_error(status, message or f"Injected error {status}")

    def _validation_error(self, errors: list[dict]) -> Reply:
        # vLLM turns FastAPI's 422 into a 400 with the error list as text.
        return self.vllm_error(400, pydantic_repr(errors), "Bad Request")

    # -- simple routes -------------------------------------------------------------

    def health(self, req: Request) -> Reply:
        return empty_reply(200)

    def version_route(self, req: Request) -> Reply:
        return json_reply({"version": self.version})

    def openapi(self, req: Request) -> Reply:
        paths = sorted({path for method, path in self.routes if method == "POST"})
        return json_reply(
            {"openapi": "3.1.0", "info": {"title": "FastAPI", "version": "0.1.0"}, "paths": {p: {} for p in paths}}
        )

    def models(self, req: Request) -> Reply:
        card = {
            "id": self.model,
            "object": "model",
            "created": self.created,
            "owned_by": "vllm",
            "root": self.model,
            "parent": None,
            "max_model_len": self.max_model_len,
            "permission": [
                {
                    "id": f"modelperm-{uuid.uuid4().hex}",
                    "object": "model_permission",
                    "created": self.created,
                    "allow_create_engine": False,
                    "allow_sampling": True,
                    "allow_logprobs": True,
                    "allow_search_indices": False,
                    "allow_view": True,
                    "allow_fine_tuning": False,
                    "organization": "*",
                    "group": None,
                    "is_blocking": False,
                }
            ],
        }
        return json_reply({"object": "list", "data": [card]})

    # -- rerank and score ----------------------------------------------------------

    def _parse(self, req: Request, fields: dict):
        data, errors = fastapi_loads(req.body)
        if errors:
            return self._validation_error(errors)
        values, errors = validate(data, fields)
        if errors:
            return self._validation_error(errors)
        return values

    def _precheck(self, values: dict) -> Reply | None:
        """The checks that come after body validation, in vLLM's order."""
        if self.mode == "generative":
            # The handler is None; the route *returns* the error, so FastAPI sends 200.
            return json_reply(_NOT_SUPPORTED, 200)
        model = values.get("model")
        if model is not None and model != self.model:
            return self.vllm_error(404, f"The model `{model}` does not exist.", "NotFoundError", "model")
        limit = values.get("truncate_prompt_tokens")
        if limit is not None and limit > self.max_model_len:
            return self.vllm_error(
                400,
                f"truncate_prompt_tokens value ({limit}) is greater than max_model_len "
                f"({self.max_model_len}). Please, select a smaller truncation size.",
            )
        return None

    def rerank(self, req: Request) -> Reply:
        values = self._parse(req, _RERANK_FIELDS)
        if isinstance(values, Reply):
            return values
        early = self._precheck(values)
        if early is not None:
            return early
        query = _content_text(values["query"])
        documents = values["documents"]
        documents = [_content_text(documents)] if isinstance(documents, dict) else documents
        scored = self._score_pairs([query] * len(documents), documents, values)
        if isinstance(scored, Reply):
            return scored
        scores, tokens = scored
        order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
        top_n = values["top_n"]
        if 0 < top_n < len(order):
            order = order[:top_n]
        results = [
            {"index": i, "document": {"text": documents[i], "multi_modal": None}, "relevance_score": scores[i]}
            for i in order
        ]
        return json_reply(
            {
                "id": f"rerank-{uuid.uuid4().hex}",
                "model": self.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                "results": results,
            },
            n_inputs=len(documents),
        )

    def score(self, req: Request) -> Reply:
        values = self._parse(req, _SCORE_FIELDS)
        if isinstance(values, Reply):
            return values
        early = self._precheck(values)
        if early is not None:
            return early
        text_1, text_2 = values["text_1"], values["text_2"]
        text_1 = [text_1] if isinstance(text_1, str) else text_1
        text_2 = [text_2] if isinstance(text_2, str) else text_2
        if not text_1:
            return self.vllm_error(400, "At least one text element must be given")
        if not text_2:
            return self.vllm_error(400, "At least one text_pair element must be given")
        if len(text_1) > 1 and len(text_1) != len(text_2):
            return self.vllm_error(400, "Input lengths must be either 1:1, 1:N or N:N")
        if len(text_1) == 1:
            text_1 = text_1 * len(text_2)
        scored = self._score_pairs(text_1, text_2, values)
        if isinstance(scored, Reply):
            return scored
        scores, tokens = scored
        return json_reply(
            {
                "id": f"score-{uuid.uuid4().hex}",
                "object": "list",
                "created": int(time.time()),
                "model": self.model,
                "data": [{"index": i, "object": "score", "score": s} for i, s in enumerate(scores)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0},
            },
            n_inputs=len(text_2),
        )

    # -- the model -----------------------------------------------------------------

    def _score_pairs(self, queries: list[str], documents: list[str], values: dict):
        """(scores, prompt tokens) for the pairs, or a 400 for an over-long pair."""
        limit = values.get("truncate_prompt_tokens")
        if limit == -1:
            limit = self.max_model_len
        overhead = self.template_tokens
        logits, tokens = [], 0
        if self.latency:
            time.sleep(self.latency)
        for query, document in zip(queries, documents):
            n = scoring.count_tokens(query) + scoring.count_tokens(document) + overhead
            if limit is None and n > self.max_model_len:
                return self.vllm_error(
                    400,
                    f"This model's maximum context length is {self.max_model_len} tokens. However, you "
                    f"requested {n} tokens in the input for score. Please reduce the length of the input.",
                )
            if limit is not None:
                n = min(n, limit)
            tokens += n
            logits.append(self._pair_logit(query, document, limit))
        activate = all(values.get(k) is not False for k in ("use_activation", "softmax", "activation"))
        return [scoring.sigmoid(x) if activate else x for x in logits], tokens

    def _pair_logit(self, query: str, document: str, limit: int | None) -> float:
        if self.mode == "qwen3_raw":
            # The model sees one string; right-side truncation can cut the suffix off.
            prompt = query + document
            if limit is not None:
                prompt = scoring.truncate_tokens(prompt, limit)
            parts = qwen3.parse_prompt(prompt)
            if parts is not None:
                return self.logit(parts.query, parts.document)
            return self._untemplated_logit(query, document)
        if self.mode == "qwen3_template":
            if qwen3.PREFIX in query or qwen3.SUFFIX in document:
                return 0.0  # double templating: the judge prompt inside the judge prompt
            return self.logit(query, document)
        if limit is not None:
            document = scoring.truncate_tokens(document, max(0, limit - scoring.count_tokens(query)))
        return self.logit(query, document)

    def _untemplated_logit(self, query: str, document: str) -> float:
        """What Qwen3 says about a bare `query + document`: compressed, inverted and
        nearly random (vllm-project/vllm#20794), so irrelevant documents win."""
        p = 0.6 - 0.05 * self.logit(query, document) + 0.01 * scoring.jitter(query, document)
        return scoring.logit(min(max(p, 0.02), 0.98))
