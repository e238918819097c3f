"""HTTP transport to a reranker: one pooled client per event loop, a total deadline per call,
retries only where a retry can help, batches the server accepts, and a typed error for
everything else. It knows nothing about which route to use; ``detect.py`` decides that.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import httpx
from tenacity import AsyncRetrying, retry_if_exception

from . import key_scrub, qwen3, server_errors
from .errors import BatchTooLarge, DeadlineExceeded, RerankError, ServerError, TransportError
from .settings import Settings
from .wire import Route, split_endpoint
from .wire._parse import decode_json

# Tests and benchmarks turn backoff sleeps down with ``set_backoff_scale(0)``.
_BACKOFF = {"scale": 1.0}
_MAX_BACKOFF_S = 2.0

# The batch limit a server taught us, per base URL + path, so later calls split right away.
_learned_batch: dict[str, int] = {}
_learned_lock = threading.Lock()


def set_backoff_scale(scale: float) -> None:
    _BACKOFF["scale"] = scale


@dataclass
class Deadline:
    """The time left for one whole call, retries and batches included."""

    expires_at: float

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.expires_at - time.monotonic()


# ---------------------------------------------------------------------------------------
# One AsyncClient per running event loop. Building one costs tens of milliseconds (its SSL
# context), so it is built once per loop, off the loop, and reused for keep-alive.
_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]" = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def _build_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(
        # Cross-host redirects drop Authorization in httpx, so a key never follows a redirect away.
        follow_redirects=True,
        limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
        headers={"User-Agent": "a0_reranker"},
        trust_env=False,
    )


def _forget_ended_loops() -> None:
    """Drop the clients of loops that have been closed (Flask runs each API request on a loop
    of its own). The weak keys alone never let go: a client's pooled connections hold their
    loop. Unreferenced, loop and client are collected together and the sockets closed."""
    for ended in [loop for loop in list(_clients.keys()) if loop.is_closed()]:
        _clients.pop(ended, None)


async def http_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    with _clients_lock:
        client = _clients.get(loop)
    if client is not None and not client.is_closed:
        return client
    built = await asyncio.to_thread(_build_client)
    with _clients_lock:
        _forget_ended_loops()
        client = _clients.get(loop)
        if client is None or client.is_closed:
            _clients[loop] = client = built
    if client is not built:
        await built.aclose()
    return client


async def close_client() -> None:
    """Close the running loop's client, if it has one (its loop is about to end)."""
    with _clients_lock:
        client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


# ---------------------------------------------------------------------------------------
def auth_headers(settings: Settings) -> dict[str, str]:
    # Only a real key: an empty or "None" bearer is rejected by some gateways.
    return {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}


def scrub(text: str, settings: Settings) -> str:
    """Remove the key, in any form, from text that came back from a server before it is stored or shown."""
    return key_scrub.scrub(text, settings.api_key)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


async def post_json(url: str, body: dict[str, Any], settings: Settings, deadline: Deadline) -> Any:
    """One POST; returns the decoded JSON or raises a typed ``RerankError``."""
    remaining = deadline.remaining()
    if remaining <= 0:
        raise DeadlineExceeded("timed out before the request was sent")
    client = await http_client()
    try:
        # With the privacy guard on, a redirect could lead memory text off the private
        # network after the endpoint passed the check, so it is not followed.
        response = await client.post(
            url, json=body, headers=auth_headers(settings), timeout=remaining, follow_redirects=not settings.private_only
        )
    except httpx.TimeoutException:
        raise DeadlineExceeded(f"no answer within {settings.timeout:g} s") from None
    except httpx.TransportError as exc:
        raise TransportError(f"{type(exc).__name__}: {scrub(str(exc), settings) or 'connection failed'}") from None
    if 300 <= response.status_code < 400:
        raise ServerError(response.status_code, "redirected; not followed while rerank_private_only is on")
    if response.status_code >= 400:
        answer = server_errors.read(response.text)
        message = scrub(answer.message, settings)
        if answer.batch_limit and response.status_code in (413, 422, 400):
            raise BatchTooLarge(response.status_code, message, answer.batch_limit)
        models = tuple(scrub(name, settings) for name in answer.models)
        raise ServerError(response.status_code, message, retry_after=_retry_after(response), models=models)
    return decode_json(response.content, response.headers.get("content-type", ""))


async def get_json(url: str, settings: Settings, deadline: Deadline) -> Any | None:
    """A best-effort GET (e.g. TEI's /info); None on any failure."""
    try:
        client = await http_client()
        response = await client.get(url, headers=auth_headers(settings), timeout=max(0.1, min(2.0, deadline.remaining())))
        return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def _wait_seconds(settings: Settings, deadline: Deadline):
    def wait(state) -> float:
        exc = state.outcome.exception()
        hinted = getattr(exc, "retry_after", None)
        if hinted is None:  # full jitter, exponential
            hinted = random.uniform(0, min(_MAX_BACKOFF_S, 0.1 * 2 ** (state.attempt_number - 1)))
        return max(0.0, min(hinted * _BACKOFF["scale"], deadline.remaining() - 0.05))

    return wait


def _stop(settings: Settings, deadline: Deadline):
    def stop(state) -> bool:
        if state.attempt_number > settings.retries:
            return True
        hinted = getattr(state.outcome.exception(), "retry_after", None) or 0.0
        # A Retry-After longer than the time left cannot help: give up now, not at the deadline.
        return deadline.remaining() <= 0.05 or hinted * _BACKOFF["scale"] >= deadline.remaining()

    return stop


async def post_with_retries(url: str, body: dict[str, Any], settings: Settings, deadline: Deadline) -> Any:
    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda e: isinstance(e, RerankError) and e.retryable),
        stop=_stop(settings, deadline),
        wait=_wait_seconds(settings, deadline),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await post_json(url, body, settings, deadline)
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------------------------
def prepare_texts(route: Route, query: str, documents: Sequence[str], settings: Settings) -> tuple[str, list[str]]:
    """Documents cut to their budget; the Qwen3 prompt rendered when the route needs it."""
    if route.templated:
        return qwen3.render(query, documents, settings.instruction, settings.max_doc_chars)
    return query, [d[: settings.max_doc_chars] for d in documents]


def learned_batch_limit(url: str) -> int | None:
    with _learned_lock:
        return _learned_batch.get(url)


def remember_batch_limit(url: str, limit: int) -> None:
    with _learned_lock:
        _learned_batch[url] = limit


async def score(
    settings: Settings,
    route: Route,
    query: str,
    documents: Sequence[str],
    deadline: Deadline,
    *,
    batch_limit: int | None = None,
) -> list[float]:
    """Scores for ``documents`` in input order through ``route``, split into batches the
    server accepts and sent concurrently (bounded). Raises ``RerankError`` subclasses."""
    if not documents:
        return []
    base, _ = split_endpoint(settings.endpoint)
    url = base + route.path
    query, texts = prepare_texts(route, query, documents, settings)
    # The smallest cap anyone knows: the user's, one the server taught us, one it published.
    known = [n for n in (settings.batch_size, learned_batch_limit(url), batch_limit) if n]
    limit = min(known) if known else len(texts)
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            while True:
                try:
                    return await _score_batches(url, route, query, texts, settings, deadline, limit)
                except BatchTooLarge as exc:
                    if not 0 < exc.limit < limit:
                        raise
                    limit = exc.limit
                    remember_batch_limit(url, limit)
    except TimeoutError:
        raise DeadlineExceeded(f"no complete answer within {settings.timeout:g} s") from None


async def _score_batches(
    url: str, route: Route, query: str, texts: list[str], settings: Settings, deadline: Deadline, limit: int
) -> list[float]:
    starts = range(0, len(texts), limit)
    if len(starts) == 1:
        return await _score_one(url, route, query, texts, settings, deadline)
    gate = asyncio.Semaphore(settings.max_concurrency)

    async def one(start: int) -> list[float]:
        async with gate:
            return await _score_one(url, route, query, texts[start : start + limit], settings, deadline)

    tasks = [asyncio.ensure_future(one(start)) for start in starts]
    try:
        parts = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    # Each batch's indices are local to it; its position in the list places it.
    return [s for part in parts for s in part]


async def _score_one(url: str, route: Route, query: str, texts: list[str], settings: Settings, deadline: Deadline) -> list[float]:
    payload = await post_with_retries(url, route.dialect.body(query, texts, settings.model), settings, deadline)
    try:
        return route.dialect.parse(payload, len(texts))
    except ServerError as exc:  # an error body on a 2xx: its text may echo what we sent
        raise ServerError(exc.status, scrub(exc.message, settings)) from None
