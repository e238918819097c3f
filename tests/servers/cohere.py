"""Cohere's hosted rerank API, v1 and v2 (protocols doc §6).

Errors are `{"message": ...}`. v2 requires `model`, takes only strings and never
echoes documents; v1 also takes objects and echoes `{text}` on request.
"""

from __future__ import annotations

import json
import uuid

from . import scoring
from .base import Backend, Reply, Request, document_text, json_reply, ranked_desc

__all__ = ["CohereServer"]

_MESSAGES = {
    401: "invalid api token",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "You are past the rate limit for this API key. Please slow down.",
    500: "internal server error",
    503: "service unavailable",
}


class CohereServer(Backend):
    kind = "cohere"
    auth_before_routing = True  # a gateway: every path needs the key

    def __init__(self, *, model: str = "rerank-v3.5", **common) -> None:
        super().__init__(model=model, **common)
        self.routes = {
            ("POST", "/v1/rerank"): lambda req: self.rerank(req, version=1),
            ("POST", "/v2/rerank"): lambda req: self.rerank(req, version=2),
        }

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        return json_reply({"message": message or _MESSAGES.get(status, f"error {status}")}, status)

    def _invalid(self, detail: str) -> Reply:
        return self.error_reply(400, f"invalid request: {detail}")

    def rerank(self, req: Request, version: int) -> Reply:
        try:
            body = json.loads(req.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._invalid("could not parse the request body as JSON.")
        if not isinstance(body, dict):
            return self._invalid("the request body must be a JSON object.")
        if version == 2 and not isinstance(body.get("model"), str):
            return self._invalid("model is required.")
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            return self._invalid("query must not be empty.")
        documents = body.get("documents")
        if not isinstance(documents, list) or not documents:
            return self._invalid("list of documents must not be empty.")
        rank_fields = body.get("rank_fields") if version == 1 else None
        texts = []
        for i, document in enumerate(documents):
            text = document_text(document, rank_fields) if version == 1 else document
            if not isinstance(text, str):
                wanted = "a string or an object with a text field" if version == 1 else "a string"
                return self._invalid(f"documents[{i}] must be {wanted}.")
            texts.append(text)
        top_n = body.get("top_n")
        if top_n is not None and (not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1):
            return self._invalid("top_n must be a positive integer.")

        scores = [scoring.sigmoid(x) for x in self.infer(query, texts)]
        order = ranked_desc(scores)[: top_n or len(texts)]
        echo = version == 1 and body.get("return_documents") is True
        results = []
        for i in order:
            result = {"index": i, "relevance_score": scores[i]}
            if echo:
                result["document"] = documents[i] if isinstance(documents[i], dict) else {"text": texts[i]}
            results.append(result)
        meta = {"api_version": {"version": str(version)}, "billed_units": {"search_units": 1}}
        return json_reply({"id": str(uuid.uuid4()), "results": results, "meta": meta}, n_inputs=len(texts))
