"""Mixedbread's hosted reranking API (protocols doc §6): POST /v1/reranking with
`input` and `top_k`; results are `data[]` of `rank_result` objects with `score`."""

from __future__ import annotations

from . import scoring
from .base import Backend, Reply, Request, document_text, json_reply, ranked_desc
from .validation import Field, fastapi_loads, validate

__all__ = ["MixedbreadServer"]

_FIELDS = {
    "model": Field("str", nullable=True),
    "query": Field("str", required=True),
    "input": Field("any", required=True),
    "rank_fields": Field("any", nullable=True),
    "top_k": Field("int", nullable=True, gt=0),
    "return_input": Field("bool", default=False),
    "rewrite_query": Field("bool", default=False),
}


class MixedbreadServer(Backend):
    kind = "mixedbread"
    auth_before_routing = True

    def __init__(self, *, model: str = "mixedbread-ai/mxbai-rerank-large-v2", **common) -> None:
        super().__init__(model=model, **common)
        self.routes = {("POST", "/v1/reranking"): self.rerank}

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        default = {401: "Invalid API key", 404: "Not Found", 429: "Too many requests"}
        return json_reply({"detail": message or default.get(status, f"Error {status}")}, status)

    def rerank(self, req: Request) -> Reply:
        data, errors = fastapi_loads(req.body)
        values = {}
        if not errors:
            values, errors = validate(data, _FIELDS)
        inputs = values.get("input")
        rank_fields = values.get("rank_fields")
        texts = [document_text(d, rank_fields) for d in inputs] if isinstance(inputs, list) else None
        if not errors and (not texts or any(t is None for t in texts)):
            errors = [
                {
                    "type": "value_error",
                    "loc": ["body", "input"],
                    "msg": "input must be a non-empty list of strings or objects",
                    "input": inputs,
                }
            ]
        if errors:
            return json_reply({"detail": errors}, 422)

        query = values["query"]
        scores = [scoring.sigmoid(x) for x in self.infer(query, texts)]
        top_k = values["top_k"] or len(texts)
        data_items = []
        for i in ranked_desc(scores)[:top_k]:
            item = {"index": i, "score": scores[i], "object": "rank_result"}
            if values["return_input"]:
                item["input"] = inputs[i]
            data_items.append(item)
        tokens = sum(scoring.count_tokens(query) + scoring.count_tokens(t) for t in texts)
        return json_reply(
            {
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                "model": values["model"] or self.model,
                "data": data_items,
                "object": "list",
                "top_k": top_k,
                "return_input": values["return_input"],
            },
            n_inputs=len(texts),
        )
