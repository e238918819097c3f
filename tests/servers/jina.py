"""Jina AI's hosted rerank API (protocols doc §6): `{model, usage, results}` with
`document: {text}` echoed unless `return_documents` is false."""

from __future__ import annotations

from . import scoring
from .base import Backend, Reply, Request, document_text, json_reply, ranked_desc
from .validation import Field, fastapi_loads, validate

__all__ = ["JinaServer"]

_FIELDS = {
    "model": Field("str", required=True),
    "query": Field("str", required=True),
    "documents": Field("any", required=True),
    "top_n": Field("int", nullable=True, gt=0),
    "return_documents": Field("bool", default=True),
}


class JinaServer(Backend):
    kind = "jina"
    auth_before_routing = True

    def __init__(self, *, model: str = "jina-reranker-v2-base-multilingual", **common) -> None:
        super().__init__(model=model, **common)
        self.routes = {("POST", "/v1/rerank"): self.rerank}

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        default = {401: "Unauthorized: invalid API key", 404: "Not Found", 429: "Rate limit exceeded"}
        return json_reply({"detail": message or default.get(status, f"Error {status}")}, status)

    def rerank(self, req: Request) -> Reply:
        data, errors = fastapi_loads(req.body)
        values = {}
        if not errors:
            values, errors = validate(data, _FIELDS)
        documents = values.get("documents")
        texts = [document_text(d) for d in documents] if isinstance(documents, list) else None
        if not errors and (not texts or any(t is None for t in texts)):
            errors = [
                {
                    "type": "value_error",
                    "loc": ["body", "documents"],
                    "msg": "documents must be a non-empty list of strings or {text} objects",
                    "input": documents,
                }
            ]
        if errors:
            return json_reply({"detail": errors}, 422)

        query = values["query"]
        scores = [scoring.sigmoid(x) for x in self.infer(query, texts)]
        order = ranked_desc(scores)[: values["top_n"] or len(texts)]
        results = []
        for i in order:
            result = {"index": i}
            if values["return_documents"]:
                result["document"] = {"text": texts[i]}
            result["relevance_score"] = scores[i]
            results.append(result)
        tokens = sum(scoring.count_tokens(query) + scoring.count_tokens(t) for t in texts)
        return json_reply(
            {"model": values["model"], "usage": {"total_tokens": tokens}, "results": results},
            n_inputs=len(texts),
        )
