"""What a server's error answer says, read in one place for every dialect: a short message
for people, the batch limit it names, and the models it serves when it lists them.

The wordings, as the servers' code writes them:

- TEI: ``batch size 40 > maximum allowed batch size 32`` (HTTP 413 up to 1.8, 422 after).
- FastAPI with pydantic 2 (Infinity, vLLM): HTTP 422 ``{"detail": [{"type": "too_long",
  "loc": ["body", "documents"], "msg": "List should have at most 2048 items after
  validation, not 2100", "input": [...every document...], "ctx": {"max_length": 2048}}]}``.
- Infinity serving several models, asked for none or an unknown one: HTTP 400
  ``{"error": {"message": "Invalid model: Engine for model name `default/not-specified`
  not found. Available model names are ['a', 'b']", ...}}``.

Everything is read from the whole body: the message shown is cut to ``MESSAGE_CHARS``, and
a list of model names past that cut must still be found.

A body this module cannot read as structured data (60,000 ``[``: ``json`` raises
RecursionError; a model list nested 25,000 deep: Python's parser raises MemoryError) is
"not structured": it says so, and the caller's error names the HTTP status. Nothing a
server writes escapes as an exception.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from ..vocabulary import transport as words

MESSAGE_CHARS = 300

# At most 9 digits, and no digit after them: a number longer than any batch is no limit at
# all (and int() of thousands of digits raises ValueError past Python's 4,300-digit guard).
_BATCH_LIMITS = (
    re.compile(r"maximum allowed batch size\D{0,8}(\d{1,9})(?!\d)", re.IGNORECASE),  # TEI
    re.compile(r"should have at most (\d{1,9}) items?", re.IGNORECASE),  # pydantic 2's too_long
)
# A pair longer than the model reads: (tokens sent, the limit), in each server's words.
_PAIR_TOO_LONG = (
    # llama.cpp: "input (657 tokens) is too large to process. increase the physical batch size
    # (current batch size: 512)"
    (re.compile(r"input \((\d{1,9}) tokens\) is too large to process\D{0,80}batch size: (\d{1,9})\)"), False),
    # vLLM now (renderers/params.py): "You passed 657 input tokens ... the model's context length is only 512 tokens"
    (re.compile(r"you passed (\d{1,9}) input tokens.{0,120}?context length is only (\d{1,9}) tokens", re.I), False),
    # vLLM before: "This model's maximum context length is 512 tokens. However, you requested 657 tokens"
    (re.compile(r"maximum context length is (\d{1,9}) tokens\. however, you requested (\d{1,9}) tokens", re.I), True),
)
_MODEL_LIST = re.compile(r"available model(?: name)?s(?: are| is)?:?\s*(\[[^\]]*\])", re.IGNORECASE)


@dataclass(frozen=True)
class ErrorAnswer:
    message: str  # short; never the documents a validation error echoes back
    batch_limit: int | None = None  # "send at most this many documents per request"
    models: tuple[str, ...] = ()  # the model names the server says it serves
    pair_tokens: tuple[int, int] | None = None  # a pair too long for the model: (tokens sent, its limit)


NOT_STRUCTURED = words.ERROR_NOT_STRUCTURED


def read(body: str) -> ErrorAnswer:
    """Read an error answer's body (any status, any server). Never raises."""
    text = body.strip()
    try:
        return _read(text)
    except Exception:  # RecursionError, MemoryError: whatever the shape, it is no message
        return ErrorAnswer(NOT_STRUCTURED, _limit_in(text))


def _read(text: str) -> ErrorAnswer:
    try:
        payload = json.loads(text)
    except ValueError:
        shown = "(empty body)" if not text else ("an HTML page" if text.startswith("<") else text)
        return ErrorAnswer(shown[:MESSAGE_CHARS], _limit_in(text), _models_in(text), _pair_tokens_in(text))
    error = payload
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("detail", payload.get("message", payload)))
        if isinstance(error, dict):
            error = error.get("message", error)
    if _is_validation_list(error):
        full = "; ".join(_validation_line(item) for item in error)
        limit = _structured_limit(error) or _limit_in(full)
    else:
        full = str(error)
        limit = _limit_in(full)
    return ErrorAnswer(full[:MESSAGE_CHARS], limit, _models_in(full), _pair_tokens_in(full))


def _pair_tokens_in(text: str) -> tuple[int, int] | None:
    for pattern, limit_first in _PAIR_TOO_LONG:
        match = pattern.search(text)
        if match:
            a, b = int(match.group(1)), int(match.group(2))
            sent, limit = (b, a) if limit_first else (a, b)
            return (sent, limit) if 0 < limit < sent else None
    return None


def _is_validation_list(error: Any) -> bool:
    return isinstance(error, list) and bool(error) and all(isinstance(e, dict) and "msg" in e for e in error)


def _validation_line(item: dict) -> str:
    """``documents: List should have at most 16 items ...``: where and what, not the input."""
    loc = [str(part) for part in item.get("loc") or () if part != "body"]
    return f"{'.'.join(loc)}: {item['msg']}" if loc else str(item["msg"])


def _structured_limit(errors: list[dict]) -> int | None:
    for item in errors:
        ctx = item.get("ctx")
        if item.get("type") == "too_long" and isinstance(ctx, dict):
            limit = ctx.get("max_length")
            if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
                return limit
    return None


def _limit_in(text: str) -> int | None:
    for pattern in _BATCH_LIMITS:
        match = pattern.search(text)
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None


def _models_in(text: str) -> tuple[str, ...]:
    match = _MODEL_LIST.search(text)
    if not match:
        return ()
    try:
        names = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):  # the last two: nested too deeply
        return ()
    return tuple(str(n) for n in names if isinstance(n, str) and n) if isinstance(names, list) else ()
