"""What a wire dialect is: how to build a request body and read one score per document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


class Dialect(Protocol):
    name: str  # short id shown in probe reports: "rerank", "tei", "vllm-score", ...
    api: str  # the setting value it belongs to: "rerank" or "qwen3_score"

    def body(self, query: str, documents: Sequence[str], model: str) -> dict[str, Any]: ...

    def parse(self, payload: Any, n: int) -> list[float]:
        """Scores in input order; raises MalformedResponse / ServerError."""
        ...


@dataclass(frozen=True)
class Route:
    """One way to reach a reranker: a dialect on a path, with or without the Qwen3 template."""

    dialect: Dialect
    path: str
    templated: bool = False

    @property
    def api(self) -> str:
        return "qwen3_score" if self.templated else self.dialect.api

    def describe(self) -> str:
        return f"{self.dialect.name} {self.path}" + (" + Qwen3 template" if self.templated else "")

    def as_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect.name, "path": self.path, "templated": self.templated, "api": self.api}
