"""What every fake server family shares: the request/reply values, routing with
auth, and scoring through the shared model (or a test's oracle).

A family subclasses `Backend`, fills `self.routes` and implements `error_reply()`
(its own error body for a status, used by the status faults).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from . import scoring

__all__ = [
    "Request",
    "Reply",
    "Recorded",
    "Backend",
    "Permits",
    "json_reply",
    "text_reply",
    "empty_reply",
    "parse_json",
    "ranked_desc",
    "document_text",
]

Scorer = Callable[[str, str], float]


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict
    json: object
    body: bytes


@dataclass
class Request:
    method: str
    path: str  # without the query string
    headers: dict  # lower-cased names
    body: bytes

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)


_NO_PAYLOAD = object()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str | None = None
    headers: dict = field(default_factory=dict)
    # The JSON value behind `body`, kept so body faults can corrupt it structurally.
    payload: object = _NO_PAYLOAD
    # How many documents the request had, for the "out_of_range" body fault.
    n_inputs: int | None = None

    @property
    def has_payload(self) -> bool:
        return self.payload is not _NO_PAYLOAD


def json_reply(payload, status: int = 200, headers: dict | None = None, n_inputs=None) -> Reply:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return Reply(status, body, "application/json", dict(headers or {}), payload, n_inputs)


def text_reply(text: str, status: int, content_type: str = "text/plain; charset=utf-8") -> Reply:
    return Reply(status, text.encode("utf-8"), content_type)


def empty_reply(status: int, headers: dict | None = None) -> Reply:
    return Reply(status, b"", None, dict(headers or {}))


def parse_json(body: bytes):
    """The decoded body, or raise ValueError (json.JSONDecodeError or bad UTF-8)."""
    return json.loads(body.decode("utf-8"))


def ranked_desc(scores: list[float]) -> list[int]:
    """Indices by descending score; ties keep input order (Python/FastAPI servers)."""
    return sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)


class Permits:
    """A counting semaphore over texts, like TEI's one-permit-per-text limiter."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._free = total
        self._cond = threading.Condition()

    def try_acquire(self, n: int) -> bool:
        with self._cond:
            if n > self._free:
                return False
            self._free -= n
            return True

    def acquire(self, n: int) -> int:
        n = min(n, self.total)  # more than the total would wait forever
        with self._cond:
            self._cond.wait_for(lambda: self._free >= n)
            self._free -= n
        return n

    def release(self, n: int) -> None:
        with self._cond:
            self._free += n
            self._cond.notify_all()


class Backend:
    """Base for one server family. Subclasses set `routes` in `__init__`."""

    kind = "?"
    # Value of the Server response header (None = the real server sends none).
    server_header: str | None = None
    # Paths never checked for a key.
    public_paths: frozenset = frozenset()
    # True when the real server checks the key before routing (middleware), so an
    # unknown path without a key is 401 rather than 404.
    auth_before_routing = False

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        scorer: Scorer | None = None,
        latency: float = 0.0,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.scorer = scorer
        self.latency = latency
        self.routes: dict[tuple[str, str], Callable[[Request], Reply]] = {}

    # -- routing -------------------------------------------------------------------

    def handle(self, req: Request) -> Reply:
        if self.auth_before_routing and self._rejects(req):
            return self.unauthorized(req)
        route = self.routes.get((req.method, req.path))
        if route is None and req.method == "HEAD":
            route = self.routes.get(("GET", req.path))
        if route is None:
            if any(path == req.path for _, path in self.routes):
                return self.method_not_allowed(req)
            return self.not_found(req)
        if not self.auth_before_routing and self._rejects(req):
            return self.unauthorized(req)
        return route(req)

    def _rejects(self, req: Request) -> bool:
        return self.needs_auth(req) and not self.authorized(req)

    def needs_auth(self, req: Request) -> bool:
        return self.api_key is not None and req.path not in self.public_paths

    def authorized(self, req: Request) -> bool:
        return req.header("authorization") == f"Bearer {self.api_key}"

    # -- replies every family defines ----------------------------------------------

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        raise NotImplementedError

    def unauthorized(self, req: Request) -> Reply:
        return self.error_reply(401)

    def not_found(self, req: Request) -> Reply:
        return self.error_reply(404)

    def method_not_allowed(self, req: Request) -> Reply:
        reply = self.error_reply(405)
        reply.headers["allow"] = ",".join(sorted({m for m, path in self.routes if path == req.path}))
        return reply

    # -- scoring -------------------------------------------------------------------

    def logit(self, query: str, document: str) -> float:
        """The model's raw score for one pair (the test's oracle if one was given)."""
        if self.scorer is not None:
            return float(self.scorer(query, document))
        return scoring.relevance(query, document)

    def infer(self, query: str, documents: list[str]) -> list[float]:
        """Raw scores for a batch, taking `latency` seconds like a forward pass."""
        if self.latency:
            time.sleep(self.latency)
        return [self.logit(query, d) for d in documents]


def document_text(document, rank_fields=None) -> str | None:
    """The text a hosted API ranks for a string or an object document (None if none).

    Objects are ranked on `rank_fields` when given, else on their `text` field.
    """
    if isinstance(document, str):
        return document
    if not isinstance(document, dict):
        return None
    if rank_fields:
        parts = [str(document[f]) for f in rank_fields if f in document]
        return " ".join(parts) if parts else None
    text = document.get("text")
    return text if isinstance(text, str) else None
