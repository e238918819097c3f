"""Why a call to Agent Zero's utility model failed, in words a user can act on, told from
what the failure *is*: the kinds of exception along its chain of causes and the HTTP status
a provider's error carries. Never from its text: a provider's message may name a URL, echo
the request or quote a key, and the host's keys are not the plugin's to scrub.

"call failed (APIError)" left a user unable to tell no network from a refused key; the
chain underneath says which (a name lookup that failed, a refused connection, a 401)."""

from __future__ import annotations

import socket
import ssl
from typing import Any

from ..vocabulary import scorer_words as words

# How far down the chain of causes to look: LiteLLM wraps the OpenAI client's error, which
# wraps the transport's (httpx or aiohttp), which wraps the socket's: four or five deep.
_DEEPEST = 12

# Kinds known by name only: they belong to packages the plugin does not import (LiteLLM,
# openai, aiohttp, httpx), and a name is all that is read of them.
_NAME_LOOKUP = {"ClientConnectorDNSError"}
_TLS = {"ClientConnectorCertificateError", "ClientConnectorSSLError", "ClientSSLError"}
_KEY_REFUSED = {"AuthenticationError", "PermissionDeniedError"}
_NOT_FOUND = {"NotFoundError"}
_RATE_LIMITED = {"RateLimitError"}
_TOO_LONG = {"ContextWindowExceededError"}
_UNREACHABLE = {"APIConnectionError", "ClientConnectorError", "ClientConnectionError", "ConnectError"}


def reason(exc: BaseException) -> str | None:
    """What ``exc`` says of the failed call, or None when its kinds say nothing more than
    its own name does (the caller then names only that)."""
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    status = next((s for s in map(_status, chain) if s is not None), None)
    if _any(chain, socket.gaierror) or names & _NAME_LOOKUP:
        return words.JUDGE_NAME_NOT_FOUND
    if _any(chain, ConnectionRefusedError):
        return words.JUDGE_CONNECTION_REFUSED
    if _any(chain, ssl.SSLError) or names & _TLS:
        return words.JUDGE_TLS_FAILED
    if status in (401, 403) or names & _KEY_REFUSED:
        return words.judge_key_refused(status)
    if status == 404 or names & _NOT_FOUND:
        return words.JUDGE_MODEL_NOT_FOUND
    if status == 429 or names & _RATE_LIMITED:
        return words.JUDGE_RATE_LIMITED
    if names & _TOO_LONG:
        return words.JUDGE_PROMPT_TOO_LONG
    # Before the status: LiteLLM gives its own connection error the status 500.
    if _any(chain, ConnectionError) or names & _UNREACHABLE:
        return words.JUDGE_UNREACHABLE
    if status is not None and status >= 500:
        return words.judge_provider_error(status)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes, each once (a chain may loop), at most _DEEPEST of them."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: Any = exc
    while isinstance(current, BaseException) and id(current) not in seen and len(chain) < _DEEPEST:
        chain.append(current)
        seen.add(id(current))
        current = current.__cause__ if current.__cause__ is not None else current.__context__
    return chain


def _any(chain: list[BaseException], kind: type) -> bool:
    return any(isinstance(e, kind) for e in chain)


def _status(exc: BaseException) -> int | None:
    """The HTTP status a provider's error carries (LiteLLM's and openai's ``status_code``),
    when it is one; an attribute that raises, or holds anything else, says nothing."""
    try:
        status = getattr(exc, "status_code", None)
    except Exception:
        return None
    if isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599:
        return status
    return None
