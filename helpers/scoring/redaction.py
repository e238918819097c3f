"""Redaction (``rerank_redact``): secrets in memory text masked before it leaves the
machine for a reranker server or a hosted utility model, and the query masked in the
decision log.

Tuned against false positives on ordinary prose: "the password policy" and "the token is
valid for a day" stay as they are; "password: hunter2", "my password is hunter2", keys,
bearer tokens and e-mail addresses are masked.
"""

from __future__ import annotations

import asyncio
import re

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
        return match.group(1) + "[redacted]" + value[len(core) :]
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
