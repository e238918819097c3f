"""vLLM ``/score``: ``text_1`` (the query) against each ``text_2``; ``data[].score`` comes
back in input order, but is still placed by ``index`` like every other dialect."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ._parse import raise_for_error_body, result_list, scores_by_index


@dataclass(frozen=True)
class ScoreDialect:
    name: str = "vllm-score"
    api: str = "qwen3_score"

    def body(self, query: str, documents: Sequence[str], model: str) -> dict[str, Any]:
        body: dict[str, Any] = {"text_1": query, "text_2": list(documents)}
        if model:
            body["model"] = model
        return body

    def parse(self, payload: Any, n: int) -> list[float]:
        raise_for_error_body(payload, 200)
        return scores_by_index(result_list(payload, ("data",)), n, ("score",))


SCORE = ScoreDialect()
