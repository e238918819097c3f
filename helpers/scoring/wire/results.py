"""The ``results``/``data`` family: Cohere v1/v2, Jina, vLLM /rerank, Infinity, llama.cpp,
Voyage and Mixedbread. They differ only in field names, so one class takes them as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ._parse import raise_for_error_body, result_list, scores_by_index


@dataclass(frozen=True)
class ResultsDialect:
    name: str
    documents_field: str = "documents"
    top_field: str = "top_n"
    score_keys: tuple[str, ...] = ("relevance_score",)
    containers: tuple[str, ...] = ("results", "data")
    api: str = "rerank"

    def body(self, query: str, documents: Sequence[str], model: str) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, self.documents_field: list(documents), self.top_field: len(documents)}
        if model:
            body["model"] = model
        return body

    def parse(self, payload: Any, n: int) -> list[float]:
        raise_for_error_body(payload, 200)
        return scores_by_index(result_list(payload, self.containers), n, self.score_keys)


# Cohere, Jina, vLLM /rerank, Infinity, llama.cpp (Jina mode), Xinference, LocalAI.
RERANK = ResultsDialect("rerank")
VOYAGE = ResultsDialect("voyage", top_field="top_k", containers=("data",))
MIXEDBREAD = ResultsDialect(
    "mixedbread", documents_field="input", top_field="top_k", score_keys=("score",), containers=("data",)
)
