"""A hostile server: it echoes the request's Authorization header back in the answer.

    srv.set_faults(echo="score")   # one of ECHO_SHAPES

Each shape puts the header where a client might quote it, in every form a careless server
or proxy could produce: as sent, JSON-escaped, URL-encoded, base64 (of the whole header
line), upper-cased, split in two pieces of a repr, and as hex bytes.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

from .base import Reply, json_reply
from .faults import _items, _score_key

ECHO_SHAPES = (
    "score",  # a 200 whose first score is the header text
    "error_body",  # a 200 carrying {"error": {"message": <header>}} (vLLM <= 0.14's shape)
    "status_4xx",  # a 400 in the server's own error shape, its message the header
    "header",  # a 400 that reflects every request header into its body
    "model",  # a 404 listing the header as the models the server serves
    "redirect",  # a 307 whose Location holds the header; the target 404s naming its URL
    "coding",  # a 200 whose Content-Encoding is the header (as sent: a header holds one form)
    "model_pieces",  # a 404 listing the header cut into 7-character names, none a piece of 8
)
REDIRECTED = "/echo-redirected"


def forms(authorization: str) -> str:
    """The header in every form, in one text."""
    half = len(authorization) // 2
    return " | ".join(
        [
            authorization,
            json.dumps(authorization),
            quote(authorization, safe=""),
            base64.b64encode(f"Authorization: {authorization}".encode()).decode(),
            authorization.upper(),
            f"{authorization[:half]!r} {authorization[half:]!r}",
            authorization.encode().hex(),
        ]
    )


def reply(shape: str, raw_path: str, headers: dict, normal: Reply, backend) -> Reply:
    """The answer for ``shape`` to a request whose normal answer is ``normal``."""
    echoed = forms(headers.get("authorization", ""))
    if raw_path.startswith(REDIRECTED):
        return backend.error_reply(404, f"no route for {raw_path}")
    if shape == "score":
        payload = json.loads(json.dumps(normal.payload)) if normal.has_payload else None
        items = _items(payload)
        key = _score_key(items[0]) if items else None
        if not key:
            return normal
        items[0][key] = echoed
        return json_reply(payload, n_inputs=normal.n_inputs)
    if shape == "error_body":
        return json_reply({"error": {"message": echoed, "type": "BadRequestError"}})
    if shape == "status_4xx":
        return backend.error_reply(400, echoed)
    if shape == "header":
        return backend.error_reply(400, f"unexpected request headers: {json.dumps(headers)}")
    if shape == "model":
        names = [headers.get("authorization", "")] + echoed.split(" | ")
        return backend.error_reply(404, f"Model not found. Available model names are {names!r}")
    if shape == "coding":
        return Reply(
            normal.status, normal.body, normal.content_type, {"content-encoding": headers.get("authorization", "")}
        )
    if shape == "model_pieces":
        sent = headers.get("authorization", "")
        names = [sent[i : i + 7] for i in range(0, len(sent), 7)]
        return backend.error_reply(404, f"Model not found. Available model names are {names!r}")
    if shape == "redirect":
        return Reply(307, b"", None, {"location": f"{REDIRECTED}?token={quote(echoed, safe='')}"})
    raise ValueError(f"unknown echo shape {shape!r}; expected one of {ECHO_SHAPES}")
