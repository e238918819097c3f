"""The endpoint guard (``rerank_private_only``): memory text goes only to an endpoint on
loopback or a private network, checked before any connection; a name is resolved once and
the connection pinned to the address that was checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from .. import vocabulary
from ..errors import Refused
from ..settings import Settings

# RFC 6598 shared address space (carrier-grade NAT, Tailscale): never routed on the
# public internet, but ``is_private`` is False for it.
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_RESOLVE_TTL_S = 300.0
_resolved: dict[str, tuple[float, bool]] = {}
_resolved_lock = threading.Lock()


def _private_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED)
    )


def _is_localhost(host: str) -> bool:
    host = host.lower()
    return host in ("localhost", "localhost.localdomain") or host.endswith(".localhost")


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def _lookup(host: str) -> tuple[bool, str | None]:
    """(private?, the address to connect to). A name is resolved once here; every address it
    has must be private, and the first one is what the client connects to (``pinned``), so a
    second lookup by the connection cannot land somewhere this one did not check."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False, None
    addresses = [str(info[4][0]).split("%")[0] for info in infos]
    private = bool(addresses) and all(_private_address(ipaddress.ip_address(a)) for a in addresses)
    return private, (addresses[0] if private else None)


def hostname(url: str) -> str:
    """The host part of ``url``, "" when there is none or it does not parse."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _known(host: str) -> tuple[bool, str | None] | None:
    with _resolved_lock:
        hit = _resolved.get(host)
    return hit[1:] if hit and hit[0] > time.monotonic() else None


def _remember(host: str, answer: tuple[bool, str | None]) -> tuple[bool, str | None]:
    with _resolved_lock:
        if len(_resolved) > 256:
            _resolved.clear()
        _resolved[host] = (time.monotonic() + _RESOLVE_TTL_S, *answer)
    return answer


def _look_up_now(host: str) -> tuple[bool, str | None]:
    """(private?, pinned address): literals and localhost need no lookup (and no pin)."""
    if not host:
        return False, None
    literal = _literal(host)
    if literal is not None:
        return _private_address(literal), None
    if _is_localhost(host):
        return True, None
    return _lookup(host)


async def _look_up(host: str) -> tuple[bool, str | None]:
    return _known(host) or _remember(host, await asyncio.to_thread(_look_up_now, host))


async def check(settings: Settings, scorer: Any) -> str:
    """Why memory text may not be sent where ``scorer`` (one that ``sends_text``) sends it
    ("" when it may): the endpoint it declares (``guarded_endpoint``). A name lookup runs
    in a thread, and is remembered a while."""
    guarded = scorer.guarded_endpoint(settings) if settings.private_only else None
    if guarded is None:
        return ""
    host, shown = guarded
    return "" if host and (await _look_up(host))[0] else vocabulary.refused(shown)


async def pinned(settings: Settings, host: str) -> str | None:
    """The address to connect to for ``host`` while rerank_private_only is on: the one the
    guard checked (DNS rebinding: a name that answers 127.0.0.1 to the check and a public
    address to the connection must never reach the second). None: connect by the name
    itself (an IP literal, localhost, or the guard is off). Raises ``Refused`` when the name
    is (now) not private."""
    if not settings.private_only or not host:
        return None
    private, address = await _look_up(host)
    if not private:
        raise Refused(vocabulary.refused(host))
    return address


def forget() -> None:
    """Drop remembered name lookups (tests; a changed network)."""
    with _resolved_lock:
        _resolved.clear()
