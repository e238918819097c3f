"""Checks every dialect's parser shares: is the body JSON, is it an error in disguise,
and does the list of results name each input document exactly once with a finite score."""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

from ..errors import MalformedResponse, ServerError


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
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise MalformedResponse(f"result index {index!r} is not in 0..{n - 1}")
        if scores[index] is not None:
            raise MalformedResponse(f"result index {index} appears twice")
        score = next((item[k] for k in score_keys if k in item), None)
        if not isinstance(score, (int, float)) or isinstance(score, bool) or not _finite(score):
            raise MalformedResponse(f"score {_shown(score)} for index {index} is not a finite number")
        scores[index] = float(score)
    return scores  # type: ignore[return-value]


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer too large for a float
        return False


def _shown(value: Any) -> str:
    try:
        return repr(value)[:80]
    except ValueError:  # repr() refuses integers with more than 4,300 digits
        return "(a huge integer)"
