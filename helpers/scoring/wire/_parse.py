"""Checks every dialect's parser shares: is the body JSON, is it an error in disguise,
and does the list of results name each input document exactly once with a finite score."""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

from ...errors import MalformedResponse, ServerError
from ...vocabulary import transport as words


def decode_json(content: bytes, content_type: str = "") -> Any:
    """Parse a response body; HTML pages, empty and non-JSON bodies are malformed answers."""
    text = content.decode("utf-8-sig", errors="replace").strip()  # a byte-order mark is no content
    if not text:
        raise MalformedResponse(words.EMPTY_BODY)
    if text[:1] == "<":
        raise MalformedResponse(words.HTML_NOT_JSON)
    try:
        # NaN/Infinity are not JSON; Python would accept them, so refuse them here.
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError as exc:
        # The body decides, not its label: a proxy may call valid JSON text/html.
        said = words.HTML_NOT_JSON if "html" in content_type.lower() else words.invalid_json(str(exc))
        raise MalformedResponse(said) from None
    except RecursionError:  # nested deeper than the interpreter's stack allows
        raise MalformedResponse(words.JSON_NESTED_TOO_DEEP) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(words.non_finite_constant(name))


def raise_for_error_body(payload: Any, status: int) -> None:
    """A top-level ``error`` means failure whatever the status (vLLM <=0.14 sends it on 200)."""
    if isinstance(payload, dict) and payload.get("error"):
        error = payload["error"]
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("type") or error)
            code = error.get("code")
        else:
            message, code = str(error), None
        raise ServerError(code if isinstance(code, int) and code >= 400 else status, message[:300])
    if isinstance(payload, dict) and payload.get("object") == "error":  # vLLM 0.9 flat shape
        raise ServerError(status, str(payload.get("message", "error"))[:300])


def result_list(payload: Any, containers: Iterable[str]) -> list:
    """The list of results: a bare array, or the first of ``containers`` present in an object."""
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for name in containers:
            if isinstance(payload.get(name), list):
                return payload[name]
    raise MalformedResponse(words.expected_results_under("/".join(containers)))


def scores_by_index(items: list, n: int, score_keys: tuple[str, ...]) -> list[float]:
    """One finite score per input document, placed by each result's ``index``."""
    if len(items) != n:
        raise MalformedResponse(words.results_for_documents(len(items), n))
    scores: list[float | None] = [None] * n
    for item in items:
        if not isinstance(item, dict):
            raise MalformedResponse(words.RESULT_NOT_OBJECT)
        index = item.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedResponse(words.index_not_whole(_shape(index), n - 1))
        if not 0 <= index < n:
            raise MalformedResponse(words.index_out_of_range(index, n - 1))
        if scores[index] is not None:
            raise MalformedResponse(words.index_twice(index))
        score = next((item[k] for k in score_keys if k in item), None)
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise MalformedResponse(words.score_not_number(index, _shape(score)))
        if not _finite(score):
            raise MalformedResponse(words.score_not_finite(index))
        if abs(score) > MAX_SCORE:
            raise MalformedResponse(words.score_beyond(index, MAX_SCORE))
        scores[index] = float(score)
    return scores  # type: ignore[return-value]


# No reranker's score comes near this (logits stay within tens, probabilities within 0..1);
# past it a score only breaks what is worked out from it: squares and sums in the
# standout rule (fusion.standing_out) overflow a float, and one such score would flatten
# every other in a standardised pool.
MAX_SCORE = 1e6


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer too large for a float
        return False


# What a server sent where a number belongs is named by its shape, never quoted: a server
# that echoes the request could put the Authorization header there.
_SHAPES = {
    str: "a string",
    dict: "an object",
    list: "a list",
    bool: "true/false",
    type(None): "missing or null",
    float: "a fraction",
}


def _shape(value: Any) -> str:
    return _SHAPES.get(type(value), words.OTHER_KIND)
