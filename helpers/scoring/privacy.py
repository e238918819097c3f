"""The privacy guard for hosted rerankers: refuse endpoints outside this machine's networks
(``rerank_private_only``), and mask secrets in memory text before it leaves the machine
(``rerank_redact``).

Redaction is tuned against false positives on ordinary prose: "the password policy" and
"the token is valid for a day" stay as they are; "password: hunter2", "my password is
hunter2", keys, bearer tokens and e-mail addresses are masked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import threading
import time
from urllib.parse import urlsplit

from ..errors import Refused
from ..settings import Settings
from . import calling_agent

# Every pattern here runs in time linear in the text: a memory is hostile input too (12 KB
# of "v1.2v1.2..." took 49 s through the lazy name prefix these patterns once had). The
# rules: no pattern may start a scan at each position of a long run and reach its end
# (so a run is entered once, at its start, or the scan is bounded), and no nested
# quantifier may backtrack. tests/test_redaction.py checks the masks against the
# old patterns on ordinary text and runs adversarial text through them.

# Names that end in one of these words hold a secret when a value is assigned to them:
# "password: x", "DB_PASSWORD=x", "OPENAI_API_KEY=x", "client_secret: x". The word must end
# the name, so "max_tokens: 512" and "token_limit=5" are left alone. What comes before the
# word ("DB_", "OPENAI_") is kept as it is, so it need not be matched at all.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?)\b"
)
# A value: quoted (spaces allowed, and whatever sticks to the closing quote), or one run of
# non-space characters. Taking what sticks to the quote keeps a second pass from finding more.
_VALUE = r"(?:(?:\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)[^\s,;]*|[^\s,;]+)"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # The host's secret aliases (its helpers/secrets.py): §§secret(NAME).
    # An alias name holds no "§": an unclosed one is not read past the next alias.
    (re.compile(r"§§secret\([^)§]*\)"), "[secret]"),
    # Credentials inside a URL: scheme://user:password@host. The scheme is the whole run
    # before "://", entered at its start only (a run of "a.a.a..." is read once).
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z0-9+.-]*+://[^\s:/@]+:)[^\s@/]+@"), r"\1[redacted]@"),
    # name: value / name = value / name => value
    (re.compile(rf"(?i)({_SECRET_NAME}[\"']?\s*(?::|=>|=)\s*){_VALUE}"), r"\1[redacted]"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{12,}=*"), "Bearer [key]"),
    # Well-known key shapes: OpenAI/Stripe-style sk-/pk-/rk-, GitHub, Slack, Hugging Face,
    # AWS access key ids, Google API keys, JSON web tokens.
    # At most 16 segments before the long part ("sk-proj-", "sk-ant-api03-" have 1 to 3): an
    # unbounded count rescanned "sk-sk-sk-..." to its end from every "sk".
    (re.compile(r"\b(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_]){0,16}[A-Za-z0-9]{16,}\b"), "[key]"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})\b"), "[key]"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), "[key]"),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "[key]"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "[key]"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), "[key]"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "[key]"),
)
# "my password is hunter2": prose uses the same words ("the token is valid"), so after
# "is"/"was" only a value that does not read as a word is masked: one with a digit or a
# symbol in it, or one in quotes.
_IS_VALUE = re.compile(rf"(?i)({_SECRET_NAME}\s+(?:is|was)\s+)({_VALUE})")
# Long unbroken tokens that look generated: mixed case and digits, or hex, or letters and
# digits with no separator. Long snake_case names with a version number and file paths are
# left alone; base64 with "/" (AWS secret keys) must mix cases and digits to count.
_LONG_TOKEN = re.compile(r"(?<![\w/-])[A-Za-z0-9_+/=-]{32,}(?![\w/-])")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")

# E-mail addresses, "local@domain.tld", deliberately greedy (no word boundaries): masking a
# little too much beats leaking. Found from each "@" outward rather than by a regex, which
# would scan a long run of address characters once from every position in it.
_EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_EMAIL_DOMAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _email_end(text: str, at: int) -> int | None:
    """Where an address whose "@" is at ``at`` ends: its domain is the run of domain
    characters after the "@", up to the last "." that is followed by two letters or more
    (the top-level domain and the letters after it), or None when there is no such dot."""
    end = at + 1
    while end < len(text) and text[end] in _EMAIL_DOMAIN:
        end += 1
    dot = text.rfind(".", at + 2, end)
    while dot != -1:
        if dot + 2 < end and text[dot + 1] in _LETTERS and text[dot + 2] in _LETTERS:
            tld_end = dot + 3
            while tld_end < end and text[tld_end] in _LETTERS:
                tld_end += 1
            return tld_end
        dot = text.rfind(".", at + 2, dot)
    return None


def _mask_emails(text: str) -> str:
    if "@" not in text:
        return text
    out, done = [], 0  # ``done``: the end of the last address masked
    at = text.find("@")
    while at != -1:
        start = at
        while start > done and text[start - 1] in _EMAIL_LOCAL:
            start -= 1
        end = _email_end(text, at) if start < at else None
        if end is not None:
            out += (text[done:start], "[email]")
            done = end
        at = text.find("@", max(at + 1, done))
    out.append(text[done:])
    return "".join(out)


def _mask_is_value(match: re.Match[str]) -> str:
    value = match.group(2)
    if value[:1] in "\"'`":
        return match.group(1) + "[redacted]"
    core = value.rstrip(".!?)")
    if core and (any(c.isdigit() for c in core) or not core.isalnum()):
        return match.group(1) + "[redacted]" + value[len(core):]
    return match.group(0)


def _mask_long_token(match: re.Match[str]) -> str:
    token = match.group(0)
    digits = any(c.isdigit() for c in token)
    letters = any(c.isalpha() for c in token)
    mixed_case = any(c.islower() for c in token) and any(c.isupper() for c in token)
    if "/" in token:
        looks_generated = mixed_case and digits and not token.startswith("/")
    else:
        looks_generated = digits and letters and (mixed_case or not any(c in "_-" for c in token))
    if _HEX.fullmatch(token) or looks_generated:
        return "[key]"
    return token


def redact(text: str) -> str:
    """``text`` with secrets, keys and e-mail addresses masked."""
    secret_alias, url_credentials, *rest = _PATTERNS
    for pattern, replacement in (secret_alias, url_credentials):
        text = pattern.sub(replacement, text)
    text = _mask_emails(text)
    for pattern, replacement in rest:
        text = pattern.sub(replacement, text)
    text = _IS_VALUE.sub(_mask_is_value, text)
    return _LONG_TOKEN.sub(_mask_long_token, text)


# A secret that straddles the document budget is still whole inside this margin, so the cut
# made before redaction never leaves half an address or key to slip past the patterns; the
# client cuts to the budget itself afterwards.
_CUT_MARGIN = 512


def _redact_all(query: str, documents: list[str]) -> tuple[str, list[str]]:
    return redact(query), [redact(d) for d in documents]


async def redact_for_sending(query: str, documents, max_doc_chars: int) -> tuple[str, list[str]]:
    """``query`` and ``documents`` masked for a server, the documents first cut near the
    budget the server is sent (what is cut away is never sent, so it need not be read), and
    masked in a thread: linear, but ~2 ms per 12 KB, times 200 candidates, is a stall for
    every chat on the loop. The hop costs well under a millisecond."""
    cut = [d[: max_doc_chars + _CUT_MARGIN] for d in documents]
    return await asyncio.to_thread(_redact_all, query, cut)


# --- which endpoints are private ----------------------------------------------------------
# RFC 6598 shared address space (carrier-grade NAT, Tailscale): never routed on the
# public internet, but ``is_private`` is False for it.
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_RESOLVE_TTL_S = 300.0
_resolved: dict[str, tuple[float, bool]] = {}
_resolved_lock = threading.Lock()


def _private_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_private or address.is_link_local or (
        isinstance(address, ipaddress.IPv4Address) and address in _SHARED
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


def _hostname(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _guarded(settings: Settings) -> tuple[str, str] | None:
    """(the host to check, how a refusal names it); None when nothing is to be checked.
    Callers ask only for a scorer that sends text away (scoring/scorers/: ``sends_text``):
    a reranker server's endpoint, or the endpoint of the utility model the judge asks."""
    if not settings.private_only:
        return None
    if settings.api == "utility":
        return _utility_guarded()
    if not settings.endpoint:
        return None
    host = _hostname(settings.endpoint)
    return host, host or "the endpoint"


def _utility_guarded() -> tuple[str, str] | None:
    """The judge sends memory text to the calling agent's utility model: its api_base is
    the endpoint to check. No api_base is a provider's hosted service: never private."""
    agent = calling_agent.current()
    if agent is None:
        return None  # nobody to ask: no text can go anywhere (the judge says there is no agent)
    endpoint = calling_agent.utility_endpoint(agent)
    what = f"Agent Zero's utility model ({calling_agent.model_name(agent)})"
    if endpoint is None:
        return "", f"{what}, whose endpoint cannot be read from Agent Zero's model settings,"
    if not endpoint:
        return "", f"{what}, which has no api_base and so runs at its provider's hosted service,"
    host = _hostname(endpoint)
    return host, f"{what} at {host or 'its api_base'}"


def _refusal_text(shown: str) -> str:
    return f"refused by the privacy guard: {shown} is not on loopback or a private network (setting 'rerank_private_only')"


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


async def check(settings: Settings) -> str:
    """Why memory text may not be sent to this endpoint ("" when it may). A name lookup
    runs in a thread, and is remembered a while."""
    guarded = _guarded(settings)
    if guarded is None:
        return ""
    host, shown = guarded
    return "" if host and (await _look_up(host))[0] else _refusal_text(shown)


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
        raise Refused(_refusal_text(host))
    return address


def forget() -> None:
    """Drop remembered name lookups (tests; a changed network)."""
    with _resolved_lock:
        _resolved.clear()


def notes(settings: Settings, sends_text: bool) -> list[str]:
    """What the probe report says about the guard, for a scorer that does or does not send
    memory text away."""
    out = []
    remote = sends_text
    if settings.api == "utility" and settings.private_only:
        out.append(
            "privacy guard: Agent Zero's utility model judges only when its api_base is on loopback or a private "
            "network (a local utility model: Ollama, LM Studio, vLLM); a hosted one (no api_base) is refused"
        )
    elif settings.private_only:
        out.append(
            "privacy guard: only loopback and private-network endpoints are allowed"
            if remote else "privacy guard: nothing leaves this machine (in-process reranker)"
        )
    if settings.redact:
        out.append(
            "privacy guard: e-mails, keys and passwords are masked before memory text is sent"
            if remote else "privacy guard: redaction not needed, the in-process reranker sends nothing"
        )
    return out
