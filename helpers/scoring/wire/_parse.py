"""Checks every dialect's parser shares: is the body JSON, is it an error in disguise,
and does the list of results name each input document exactly once with a finite score."""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

from ...errors import MalformedResponse, ServerError


def decode_json(content: bytes, content_type: str = "") -> Any:
    """Parse a response body; HTML pages, empty and non-JSON bodies are malformed answers."""
    text = content.decode("utf-8", errors="replace").strip()
    if not text:
        raise MalformedResponse("empty response body")
    if "html" in content_type.lower() or text[:1] == "<":
        raise MalformedResponse("an HTML page instead of JSON (a proxy or login page?)")
    try:
        # NaN/Infinity are not JSON; Python would accept them, so refuse them here.
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise MalformedResponse(f"response is not valid JSON ({exc})") from None
    except RecursionError:  # nested deeper than the interpreter's stack allows
        raise MalformedResponse("response is not valid JSON (nested too deeply)") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")


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
    raise MalformedResponse(f"expected a list of results under {'/'.join(containers)}")


def scores_by_index(items: list, n: int, score_keys: tuple[str, ...]) -> list[float]:
    """One finite score per input document, placed by each result's ``index``."""
    if len(items) != n:
        raise MalformedResponse(f"{len(items)} results for {n} documents")
    scores: list[float | None] = [None] * n
    for item in items:
        if not isinstance(item, dict):
            raise MalformedResponse("a result is not an object")
        index = item.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedResponse(f"result index ({_shape(index)}, not a whole number) is not in 0..{n - 1}")
        if not 0 <= index < n:
            raise MalformedResponse(f"result index {index} is not in 0..{n - 1}")
        if scores[index] is not None:
            raise MalformedResponse(f"result index {index} appears twice")
        score = next((item[k] for k in score_keys if k in item), None)
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise MalformedResponse(f"the score for index {index} is {_shape(score)}, not a finite number")
        if not _finite(score):
            raise MalformedResponse(f"the score for index {index} is not a finite number")
        scores[index] = float(score)
    return scores  # type: ignore[return-value]


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
    return _SHAPES.get(type(value), "a value of another kind")
