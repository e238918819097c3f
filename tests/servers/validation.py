"""Pydantic-v2-style request validation for the FastAPI-based fakes.

vLLM, Infinity and Jina validate bodies with pydantic models behind FastAPI; the
real error lists look like `{"type", "loc": ["body", field, ...], "msg", "input",
"ctx"?}`. This reproduces the handful of checks those servers make, without
depending on pydantic (the fakes use only the standard library).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["Field", "validate", "json_invalid", "fastapi_loads", "pydantic_repr"]


@dataclass(frozen=True)
class Field:
    """One body field. `type` is one of: str, int, bool, str_list, str_or_str_list,
    str_list_or_content (vLLM `documents`), str_or_content (vLLM `query`), any."""

    type: str
    required: bool = False
    default: object = None
    nullable: bool = False
    min_items: int | None = None
    max_items: int | None = None
    gt: int | None = None
    max_chars: int | None = None


def _err(kind: str, loc: list, msg: str, value, ctx: dict | None = None) -> dict:
    out = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        out["ctx"] = ctx
    return out


def _check_str(value, loc: list, spec: Field) -> list[dict]:
    if not isinstance(value, str):
        return [_err("string_type", loc, "Input should be a valid string", value)]
    if spec.max_chars is not None and len(value) > spec.max_chars:
        return [
            _err(
                "string_too_long",
                loc,
                f"String should have at most {spec.max_chars} characters",
                value,
                {"max_length": spec.max_chars},
            )
        ]
    return []


def _check_list(value, loc: list, spec: Field) -> list[dict]:
    if not isinstance(value, list):
        return [_err("list_type", loc, "Input should be a valid list", value)]
    errors = []
    for i, item in enumerate(value):
        errors += _check_str(item, loc + [i], spec)
    n = len(value)
    if spec.min_items is not None and n < spec.min_items:
        plural = "item" if spec.min_items == 1 else "items"
        errors.append(
            _err(
                "too_short",
                loc,
                f"List should have at least {spec.min_items} {plural} after validation, not {n}",
                value,
                {"field_type": "List", "min_length": spec.min_items, "actual_length": n},
            )
        )
    if spec.max_items is not None and n > spec.max_items:
        errors.append(
            _err(
                "too_long",
                loc,
                f"List should have at most {spec.max_items} items after validation, not {n}",
                value,
                {"field_type": "List", "max_length": spec.max_items, "actual_length": n},
            )
        )
    return errors


def _is_content(value) -> bool:
    # vLLM's multimodal parameter: {"content": [...]}
    return isinstance(value, dict) and isinstance(value.get("content"), list)


def _coerce_bool(value):
    # pydantic's lax mode accepts these spellings too.
    lax = {0: False, 1: True, "true": True, "false": False, "0": False, "1": True}
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and value in lax:
        return lax[value]
    return None


def _check(name: str, value, spec: Field) -> tuple[object, list[dict]]:
    loc = ["body", name]
    t = spec.type
    if t == "any":
        return value, []
    if t == "str":
        return value, _check_str(value, loc, spec)
    if t == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            return value, [_err("int_type", loc, "Input should be a valid integer", value)]
        if spec.gt is not None and value <= spec.gt:
            return value, [_err("greater_than", loc, f"Input should be greater than {spec.gt}", value, {"gt": spec.gt})]
        return value, []
    if t == "bool":
        coerced = _coerce_bool(value)
        if coerced is None:
            return value, [_err("bool_type", loc, "Input should be a valid boolean", value)]
        return coerced, []
    if t == "str_list":
        return value, _check_list(value, loc, spec)
    if t in ("str_or_str_list", "str_or_content", "str_list_or_content"):
        # A union: pydantic reports one error per member, tagged with its name.
        first, second = {
            "str_or_str_list": ("str", "list[str]"),
            "str_or_content": ("str", "ScoreMultiModalParam"),
            "str_list_or_content": ("list[str]", "ScoreMultiModalParam"),
        }[t]
        if t == "str_or_str_list" and (isinstance(value, str) or isinstance(value, list)):
            member_errors = (
                _check_str(value, loc + [first], spec)
                if isinstance(value, str)
                else _check_list(value, loc + [second], spec)
            )
            return value, member_errors
        if t == "str_or_content" and (isinstance(value, str) or _is_content(value)):
            return value, [] if _is_content(value) else _check_str(value, loc + [first], spec)
        if t == "str_list_or_content" and (isinstance(value, list) or _is_content(value)):
            return value, [] if _is_content(value) else _check_list(value, loc + [first], spec)
        kinds = {"str": "string_type", "list[str]": "list_type", "ScoreMultiModalParam": "model_type"}
        msgs = {
            "str": "Input should be a valid string",
            "list[str]": "Input should be a valid list",
            "ScoreMultiModalParam": "Input should be a valid dictionary or instance of ScoreMultiModalParam",
        }
        return value, [_err(kinds[m], loc + [m], msgs[m], value) for m in (first, second)]
    raise ValueError(f"unknown field type {t!r}")


def validate(data, fields: dict[str, Field]) -> tuple[dict, list[dict]]:
    """Check a decoded body against `fields`; return (values with defaults, errors)."""
    if not isinstance(data, dict):
        return {}, [
            _err(
                "model_attributes_type",
                ["body"],
                "Input should be a valid dictionary or object to extract fields from",
                data,
            )
        ]
    values, errors = {}, []
    for name, spec in fields.items():
        if name not in data:
            if spec.required:
                errors.append(_err("missing", ["body", name], "Field required", data))
            else:
                values[name] = spec.default
            continue
        value = data[name]
        if value is None and spec.nullable:
            values[name] = None
            continue
        values[name], field_errors = _check(name, value, spec)
        errors += field_errors
    return values, errors


def json_invalid(exc: json.JSONDecodeError) -> list[dict]:
    """FastAPI's error list for a body that is not JSON."""
    return [_err("json_invalid", ["body", exc.pos], "JSON decode error", {}, {"error": exc.msg})]


def fastapi_loads(body: bytes):
    """Decode like FastAPI: returns (data, errors); an empty body counts as missing."""
    if not body.strip():
        return None, [_err("missing", ["body"], "Field required", None)]
    try:
        return json.loads(body.decode("utf-8")), []
    except UnicodeDecodeError:
        return None, [_err("json_invalid", ["body", 0], "JSON decode error", {}, {"error": "Invalid UTF-8"})]
    except json.JSONDecodeError as exc:
        return None, json_invalid(exc)


def pydantic_repr(errors: list[dict]) -> str:
    """The Python repr FastAPI puts in `str(RequestValidationError)` (loc as a tuple)."""
    shown = [{**e, "loc": tuple(e["loc"])} for e in errors]
    return repr(shown)
