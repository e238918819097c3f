"""The privacy guard for hosted rerankers: refuse endpoints outside this machine's networks,
and mask secrets in memory text before it leaves the machine."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from urllib.parse import urlsplit

from .settings import Settings

# The host's secret aliases (helpers/secrets.py) look like §§secret(KEY); keep them masked too.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"§§secret\([^)]*\)"), "[secret]"),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[email]"),
    (re.compile(r"(?i)\b(password|passwd|pwd|secret|token|api[_-]?key)\b(\s*[:=]\s*|\s+is\s+)(\S+)"), r"\1\2[redacted]"),
    (re.compile(r"\b(sk|pk|rk|ghp|gho|xox[abp]|hf|AKIA)[-_A-Za-z0-9]{16,}\b"), "[key]"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{12,}=*"), "Bearer [key]"),
)
# Long random-looking tokens (letters and digits mixed) are most likely keys or hashes.
_LONG_TOKEN = re.compile(r"\b[A-Za-z0-9_-]{32,}\b")


def _mask_long_token(match: re.Match[str]) -> str:
    token = match.group(0)
    return "[key]" if any(c.isdigit() for c in token) and any(c.isalpha() for c in token) else token


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return _LONG_TOKEN.sub(_mask_long_token, text)


_resolved: dict[str, bool] = {}


def is_private_host(host: str) -> bool:
    """Loopback or private-network address (resolving names; unresolvable names are not private).
    Name lookups block, so async code calls ``check`` instead, which runs them off the loop."""
    if not host:
        return False
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    return bool(addresses) and all(a.is_loopback or a.is_private or a.is_link_local for a in addresses)


def _guarded_host(settings: Settings) -> str | None:
    if not settings.private_only or settings.api in ("lexical", "local") or not settings.endpoint:
        return None
    return urlsplit(settings.endpoint).hostname or ""


def _refusal_text(host: str) -> str:
    return f"refused by the privacy guard: {host} is not on loopback or a private network (setting 'rerank_private_only')"


def refusal(settings: Settings) -> str:
    """Why memory text may not be sent to this endpoint ("" when it may). May block on DNS."""
    host = _guarded_host(settings)
    if host is None:
        return ""
    if host not in _resolved:
        _resolved[host] = is_private_host(host)
    return "" if _resolved[host] else _refusal_text(host)


async def check(settings: Settings) -> str:
    """``refusal`` for async code: a name lookup runs in a thread, once per host."""
    host = _guarded_host(settings)
    if host is None:
        return ""
    if host not in _resolved:
        _resolved[host] = await asyncio.to_thread(is_private_host, host)
    return "" if _resolved[host] else _refusal_text(host)


def notes(settings: Settings) -> list[str]:
    out = []
    if settings.private_only:
        out.append("privacy guard: only loopback and private-network endpoints are allowed")
    if settings.redact and settings.api not in ("lexical", "local"):
        out.append("privacy guard: e-mails, keys and passwords are masked before memory text is sent")
    return out
