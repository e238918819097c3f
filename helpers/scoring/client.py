"""HTTP transport to a reranker: one pooled client per event loop, a total deadline per call,
retries only where a retry can help, batches the server accepts, and a typed error for
everything else. It knows nothing about which route to use; ``probing.py`` decides that.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import math
import random
import threading
import time
import unicodedata
import weakref
from typing import Any, Sequence

import httpx
from tenacity import AsyncRetrying, retry_if_exception

from . import endpoint_guard, key_scrub, qwen3, server_errors
from ..errors import (
    BatchTooLarge,
    DeadlineExceeded,
    MalformedResponse,
    PairTooLong,
    NotConfigured,
    RedirectLoop,
    RerankError,
    ServerError,
    TransportError,
)
from ..deadline import Deadline
from ..settings import Settings, endpoint_secret
from ..vocabulary import transport as words
from .response_body import ACCEPT_ENCODING, read_capped
from .wire import Route, split_endpoint
from .wire._parse import decode_json

# Tests and benchmarks turn backoff sleeps down with ``set_backoff_scale(0)``.
_BACKOFF = {"scale": 1.0}
_MAX_BACKOFF_S = 2.0

# An answer's ceiling, counted after decompression, is sized by what was asked: a rerank
# answer is ~60 bytes per document (SGLang's, with its meta_info, ~300), around an envelope
# of model, usage and ids, and it may echo everything the request sent (vLLM echoes each
# document, Jina does by default), at up to 3x for JSON's \uXXXX escapes. A bigger answer
# only costs: json.loads holds the GIL for ~22 ms per MiB, in a worker thread as much as on
# the event loop (an 8 MiB one stalled every chat ~180 ms either way), so it is parsed where
# it arrives and kept to this size.
_ANSWER_ENVELOPE_BYTES = 64 << 10
_ANSWER_BYTES_PER_DOCUMENT = 1 << 10
ERROR_BODY_BYTES = 64 << 10  # an error answer: its message and a batch limit come first
INFO_BODY_BYTES = 64 << 10  # TEI's /info is ~1 KB
# A best-effort GET (TEI's /info) is given at most this long, inside the call's deadline.
_INFO_SECONDS = 2.0

# The batch limit a server taught us, per base URL + path, so later calls split right away.
_learned_batch: dict[str, int] = {}
# The (document, query) cuts a server taught us (a pair too long for its model), per base URL + path.
_learned_cuts: dict[str, tuple[int, int]] = {}
_learned_lock = threading.Lock()


def forget_batch_limits() -> None:
    """Forget the batch sizes and document cuts servers taught us."""
    with _learned_lock:
        _learned_batch.clear()
        _learned_cuts.clear()


def set_backoff_scale(scale: float) -> None:
    _BACKOFF["scale"] = scale


# ---------------------------------------------------------------------------------------
# One AsyncClient per running event loop. Building one costs tens of milliseconds (its SSL
# context), so it is built once per loop, off the loop, and reused for keep-alive.
_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]" = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def _build_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(
        # Cross-host redirects drop Authorization in httpx, so a key never follows a redirect away.
        follow_redirects=True,
        transport=_StandardReasons(limits=httpx.Limits(max_connections=64, max_keepalive_connections=16)),
        # Only codings response_body.py decodes itself, incrementally and counted.
        headers={"User-Agent": "a0_reranker", "Accept-Encoding": ACCEPT_ENCODING},
        trust_env=False,
    )


class _StandardReasons(httpx.AsyncHTTPTransport):
    """httpx logs every answer's status line at INFO, with the reason phrase the server chose
    ("HTTP/1.1 401 <anything>"): a server that writes the Authorization header there puts the
    key into the host's log. The plugin never reads the phrase; the standard one stands in."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        response.extensions.pop("reason_phrase", None)
        return response


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
    """Text that came back from a server (or the transport) made fit to store or show: one
    line of visible characters, the key and the endpoint's password removed in any form."""
    text = visible_line(text)  # first: a key split by control characters is still found as spaced
    return key_scrub.scrub(key_scrub.scrub(text, settings.api_key), endpoint_secret(settings.endpoint))


# Control and format characters: a newline forges a second log line, an escape sequence
# clears or recolours a terminal, a right-to-left override reverses what a reason seems to say.
_INVISIBLE = ("Cc", "Cf", "Zl", "Zp")


def visible_line(text: str) -> str:
    """``text`` with every control or format character a space."""
    if text.isprintable():
        return text
    return "".join(" " if unicodedata.category(c) in _INVISIBLE else c for c in text)


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asks us to wait, or None when it says nothing readable ("soon")."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (ValueError, TypeError, IndexError, OverflowError):
            return None
        seconds = parsed.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _checked_request(url: str, settings: Settings) -> tuple[httpx.URL, dict[str, str]]:
    """The URL and headers a request needs, or ``NotConfigured`` naming the setting that
    cannot make them. Settings are checked when saved, but another plugin may pass any
    mapping to ``arerank(config=...)``: nothing is sent, and the reason is the same every
    route would meet."""
    try:
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise httpx.InvalidURL(words.NEEDS_SCHEME_AND_HOST)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        reason = scrub(str(exc), settings)[:200]
        raise NotConfigured(words.invalid_endpoint(reason)) from None
    key = settings.api_key
    if key and not (key.isascii() and key.isprintable()):
        # HTTP headers carry ASCII only; saying which character would show part of the key.
        raise NotConfigured(words.KEY_NOT_HEADER_SAFE)
    headers = auth_headers(settings)
    if parsed.userinfo:
        # The user info as the Basic header httpx itself makes of it (and, as before, instead of
        # the Bearer key), on a URL without it: httpx logs every request's URL.
        basic = base64.b64encode(f"{parsed.username}:{parsed.password}".encode()).decode("ascii")
        headers = {"Authorization": f"Basic {basic}"}
        parsed = parsed.copy_with(userinfo=b"")
    return parsed, headers


async def _pinned(target: httpx.URL, headers: dict[str, str], settings: Settings):
    """While rerank_private_only is on, connect to the address the privacy guard checked, not
    to whatever a second lookup of the name answers (DNS rebinding). Host header and TLS
    name (SNI, certificate check) stay the name. Raises ``Refused`` for a name now public."""
    address = await endpoint_guard.pinned(settings, target.host)
    if address is None:
        return target, headers, {}
    named = {**headers, "Host": target.netloc.decode("ascii")}
    return target.copy_with(host=address), named, {"sni_hostname": target.host}


def _transport_failure(exc: Exception, settings: Settings, target: str) -> RerankError:
    """Every httpx failure as a typed reranker error (and what httpx lets through from a
    redirect it follows: a Location it cannot read, a name IDNA refuses)."""
    if isinstance(exc, httpx.TimeoutException):
        return DeadlineExceeded(words.no_answer_within(settings.timeout))
    if isinstance(exc, httpx.TooManyRedirects):
        return RedirectLoop(words.REDIRECT_LOOP)
    if isinstance(exc, httpx.DecodingError):
        return MalformedResponse(words.corrupt_compressed())
    return TransportError(
        f"{type(exc).__name__}: {scrub(str(exc), settings) or words.CONNECTION_FAILED}",
        unreachable=isinstance(exc, httpx.ConnectError) and _same_origin(_failed_url(exc), target),
    )


# What a request may raise besides httpx.HTTPError: a redirect to a Location httpx cannot
# read (InvalidURL), or to a name IDNA refuses (UnicodeError).
_REQUEST_FAILURES = (httpx.HTTPError, httpx.InvalidURL, UnicodeError)


def _failed_url(exc: Exception) -> str:
    try:
        return str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # no request attached
        return ""


def _same_origin(a: str, b: str) -> bool:
    try:
        x, y = httpx.URL(a), httpx.URL(b)
    except (httpx.InvalidURL, UnicodeError, TypeError):
        return False
    return (x.scheme, x.host, x.port) == (y.scheme, y.host, y.port)


def answer_ceiling(documents: int, request_bytes: int) -> int:
    """The most bytes an answer to a request of ``documents`` documents in ``request_bytes``
    bytes may have, decompressed."""
    return _ANSWER_ENVELOPE_BYTES + _ANSWER_BYTES_PER_DOCUMENT * documents + 3 * request_bytes


async def post_json(url: str, body: dict[str, Any], settings: Settings, deadline: Deadline, *, documents: int) -> Any:
    """One POST asking for one score for each of ``documents`` documents; returns the
    decoded JSON or raises a typed ``RerankError``."""
    remaining = deadline.remaining()
    if remaining <= 0:
        raise DeadlineExceeded(words.NOT_SENT_IN_TIME)
    target, headers = _checked_request(url, settings)
    target, headers, extensions = await _pinned(target, headers, settings)
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    limit = answer_ceiling(documents, len(content))
    client = await http_client()
    try:
        # With the privacy guard on, a redirect could lead memory text off the private
        # network after the endpoint passed the check, so it is not followed.
        async with client.stream(
            "POST",
            target,
            content=content,
            headers={**headers, "Content-Type": "application/json"},
            timeout=remaining,
            follow_redirects=not settings.private_only,
            extensions=extensions,
        ) as response:
            status = response.status_code
            if 300 <= status < 400:
                raise ServerError(status, words.REDIRECT_NOT_FOLLOWED)
            if status >= 400:
                return _raise_error_answer(response, await _error_text(response), settings)
            payload = await read_capped(response, limit)
            content_type = response.headers.get("content-type", "")
    except _REQUEST_FAILURES as exc:
        raise _transport_failure(exc, settings, target) from None
    return decode_json(payload, content_type)


async def _error_text(response: httpx.Response) -> str:
    """An error answer's text, cut rather than refused: what it says comes first (a
    validation error's message precedes the documents it echoes), and is read from the cut.
    Read on the event loop, so cut short: 8 MiB of hostile error body took half a second
    to parse and search there; what any server says fits in ERROR_BODY_BYTES."""
    try:
        body = await read_capped(response, ERROR_BODY_BYTES, cut=True)
    except MalformedResponse as exc:  # corrupt compression, or a coding not asked for
        return str(exc)
    return body.decode("utf-8", errors="replace")


def _raise_error_answer(response: httpx.Response, text: str, settings: Settings) -> Any:
    answer = server_errors.read(text)
    message = scrub(answer.message, settings)
    if answer.batch_limit and response.status_code in (413, 422, 400):
        raise BatchTooLarge(response.status_code, message, answer.batch_limit)
    if answer.pair_tokens and response.status_code in (400, 413, 422, 500):
        raise PairTooLong(response.status_code, message, *answer.pair_tokens)
    models = tuple(scrub(name, settings) for name in answer.models)
    # Read together, as the sentence naming them does: a key cut into names too short to
    # give it away one by one is still the key.
    named = ", ".join(models)
    if scrub(named, settings) != named:
        models = ()
    raise ServerError(response.status_code, message, retry_after=_retry_after(response), models=models)


async def get_json(url: str, settings: Settings, deadline: Deadline) -> Any | None:
    """A best-effort GET (e.g. TEI's /info); None on any failure. Under the same rules as the
    call it belongs to: inside its deadline (a server that drips its answer a byte at a time
    is cut off there), no redirects while rerank_private_only is on, the same size ceiling."""
    seconds = min(_INFO_SECONDS, deadline.remaining())
    if seconds <= 0:
        return None
    try:
        target, headers = _checked_request(url, settings)
        client = await http_client()
        async with asyncio.timeout(seconds):
            target, headers, extensions = await _pinned(target, headers, settings)
            async with client.stream(
                "GET",
                target,
                headers=headers,
                timeout=seconds,
                follow_redirects=not settings.private_only,
                extensions=extensions,
            ) as response:
                if response.status_code != 200:
                    return None
                payload = await read_capped(response, INFO_BODY_BYTES)
                content_type = response.headers.get("content-type", "")
        return decode_json(payload, content_type)
    except (*_REQUEST_FAILURES, RerankError, TimeoutError):
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


async def post_with_retries(
    url: str, body: dict[str, Any], settings: Settings, deadline: Deadline, *, documents: int
) -> Any:
    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda e: isinstance(e, RerankError) and e.retryable),
        stop=_stop(settings, deadline),
        wait=_wait_seconds(settings, deadline),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await post_json(url, body, settings, deadline, documents=documents)
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------------------------
def prepare_texts(
    route: Route, query: str, documents: Sequence[str], settings: Settings, cuts: tuple[int, int] | None = None
) -> tuple[str, list[str]]:
    """Documents cut to their budget (``cuts``: the (document, query) characters a server
    taught us, else the setting's); the Qwen3 prompt rendered when the route needs it."""
    doc_chars, query_chars = cuts or (settings.max_doc_chars, len(query))
    query = query[:query_chars]
    if route.templated:
        return qwen3.render(query, documents, settings.instruction, doc_chars)
    return query, [d[:doc_chars] for d in documents]


# How much of what a server's token count allows a new cut uses: characters per token vary
# along a text, so the cut aims below the limit rather than at it.
_PAIR_CUT_MARGIN = 0.8
_MIN_DOC_CHARS = 100
_MIN_QUERY_CHARS = 200  # the user's message comes first in it
_PAIR_CUTS = 3  # tries, each shorter, before the failure is the answer


def _shorter_cuts(query: str, documents: Sequence[str], cuts: tuple[int, int], exc: PairTooLong):
    """(document, query) cuts under which every pair fits the ``exc.limit`` tokens the server
    reads, or None when neither can shrink. The server counted one pair, the first too long,
    without saying which: of the pairs it can have been (every pair before it fitting, at a
    character or more per token), the shortest is assumed, its characters per token the
    fewest, so one cut is enough."""
    asked = min(cuts[1], len(query))
    pairs = [asked + min(cuts[0], len(d)) for d in documents]
    fits = exc.limit / exc.tokens
    counted = [
        length
        for i, length in enumerate(pairs)
        if length >= exc.tokens and all(before <= length * fits for before in pairs[:i])
    ]
    budget = int(min(counted or pairs) * fits * _PAIR_CUT_MARGIN)  # characters a pair may hold
    query_chars = max(_MIN_QUERY_CHARS, min(asked, budget // 2))
    doc_chars = max(_MIN_DOC_CHARS, budget - query_chars)
    longest = max(pairs, default=0) - asked
    if doc_chars >= longest and query_chars >= asked:
        return None
    return min(doc_chars, cuts[0]), min(query_chars, cuts[1])


def learned_cuts(url: str) -> tuple[int, int] | None:
    with _learned_lock:
        return _learned_cuts.get(url)


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
    # The cuts a server taught us (a pair too long for its model), or the setting's.
    taught = learned_cuts(url)
    cuts = (min(settings.max_doc_chars, taught[0]), taught[1]) if taught else (settings.max_doc_chars, len(query))
    asked, (query, texts) = query, prepare_texts(route, query, documents, settings, cuts)
    tries = 0
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
                except PairTooLong as exc:
                    shorter = _shorter_cuts(asked, documents, cuts, exc)
                    tries += 1
                    if shorter is None or tries > _PAIR_CUTS:
                        raise
                    cuts = shorter
                    with _learned_lock:
                        _learned_cuts[url] = cuts
                    query, texts = prepare_texts(route, asked, documents, settings, cuts)
    except TimeoutError:
        raise DeadlineExceeded(words.no_complete_answer_within(settings.timeout)) from None


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


async def _score_one(
    url: str, route: Route, query: str, texts: list[str], settings: Settings, deadline: Deadline
) -> list[float]:
    body = route.dialect.body(query, texts, settings.model)
    payload = await post_with_retries(url, body, settings, deadline, documents=len(texts))
    try:
        return route.dialect.parse(payload, len(texts))
    except ServerError as exc:  # an error body on a 2xx: its text may echo what we sent
        raise ServerError(exc.status, scrub(exc.message, settings)) from None
    except (RecursionError, MemoryError):  # a 2xx answer nested deeper than any answer is
        raise MalformedResponse(words.NESTED_TOO_DEEP) from None
