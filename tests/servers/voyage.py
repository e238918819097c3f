"""Voyage AI's hosted rerank API (protocols doc §6): `top_k`, a `data` list with
`relevance_score`, the document as a plain string when `return_documents`."""

from __future__ import annotations

import json

from . import scoring
from .base import Backend, Reply, Request, json_reply, ranked_desc

__all__ = ["VoyageServer"]

_MAX_DOCUMENTS = 1000


class VoyageServer(Backend):
    kind = "voyage"
    auth_before_routing = True

    def __init__(self, *, model: str = "rerank-2.5", **common) -> None:
        super().__init__(model=model, **common)
        self.routes = {("POST", "/v1/rerank"): self.rerank}

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        default = {401: "Provided API key is invalid.", 404: "Not Found", 429: "Rate limit exceeded."}
        return json_reply({"detail": message or default.get(status, f"Error {status}")}, status)

    def rerank(self, req: Request) -> Reply:
        try:
            body = json.loads(req.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self.error_reply(400, "Request body is not valid JSON.")
        if not isinstance(body, dict):
            return self.error_reply(400, "Request body must be a JSON object.")
        for name in ("query", "documents", "model"):
            if name not in body:
                return self.error_reply(400, f"Field '{name}' is required.")
        query, documents = body["query"], body["documents"]
        if not isinstance(query, str):
            return self.error_reply(400, "Field 'query' must be a string.")
        if not (isinstance(documents, list) and documents and all(isinstance(d, str) for d in documents)):
            return self.error_reply(400, "Field 'documents' must be a non-empty list of strings.")
        if len(documents) > _MAX_DOCUMENTS:
            return self.error_reply(
                400, f"The number of documents ({len(documents)}) exceeds the limit of {_MAX_DOCUMENTS}."
            )
        top_k = body.get("top_k")
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
            return self.error_reply(400, "Field 'top_k' must be a positive integer.")

        scores = [scoring.sigmoid(x) for x in self.infer(query, documents)]
        order = ranked_desc(scores)[: top_k or len(documents)]
        echo = body.get("return_documents") is True
        data = []
        for i in order:
            item = {"relevance_score": scores[i], "index": i}
            if echo:
                item["document"] = documents[i]
            data.append(item)
        tokens = sum(scoring.count_tokens(query) + scoring.count_tokens(d) for d in documents)
        return json_reply(
            {"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": tokens}},
            n_inputs=len(documents),
        )
