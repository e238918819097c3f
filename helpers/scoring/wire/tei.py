"""Hugging Face text-embeddings-inference: ``texts`` in, a bare array of {index, score} out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ._parse import raise_for_error_body, result_list, scores_by_index

# TEI's --max-client-batch-size default (v1.5 to today); /info tells the real one.
TEI_DEFAULT_BATCH = 32


@dataclass(frozen=True)
class TeiDialect:
    name: str = "tei"
    api: str = "rerank"

    def body(self, query: str, documents: Sequence[str], model: str) -> dict[str, Any]:
        # truncate: TEI <=1.8 defaults to refusing over-long pairs; truncating keeps long memories scorable.
        return {"query": query, "texts": list(documents), "truncate": True, "raw_scores": False}

    def parse(self, payload: Any, n: int) -> list[float]:
        raise_for_error_body(payload, 200)
        return scores_by_index(result_list(payload, ()), n, ("score",))


TEI = TeiDialect()
