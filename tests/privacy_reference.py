"""The redaction rules as they were before issue 18 made them linear-time: the oracle the
property tests compare helpers/privacy.py's masks against on ordinary text. Quadratic on
adversarial input (12 KB of "v1.2v1.2..." took 16 s to 49 s), so never fed that."""

from __future__ import annotations

import re

# What the issue left alone is shared, not copied: the long-token pattern and the two masks
# that decide, per match, what is a secret. The oracle differs only in the patterns that
# find the matches.
from helpers.scoring.redaction import _LONG_TOKEN, _mask_is_value, _mask_long_token

# Names that end in one of these words hold a secret when a value is assigned to them:
# "password: x", "DB_PASSWORD=x", "OPENAI_API_KEY=x", "client_secret: x". The word must end
# the name, so "max_tokens: 512" and "token_limit=5" are left alone.
_SECRET_NAME = (
    r"\b[\w.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?)\b"
)
# A value: quoted (spaces allowed, and whatever sticks to the closing quote), or one run of
# non-space characters. Taking what sticks to the quote keeps a second pass from finding more.
_VALUE = r"(?:(?:\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)[^\s,;]*|[^\s,;]+)"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # The host's secret aliases (its helpers/secrets.py): §§secret(NAME).
    (re.compile(r"§§secret\([^)]*\)"), "[secret]"),
    # Credentials inside a URL: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\1[redacted]@"),
    # Deliberately greedy (no word boundaries): masking a little too much beats leaking.
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[email]"),
    # name: value / name = value / name => value
    (re.compile(rf"(?i)({_SECRET_NAME}[\"']?\s*(?::|=>|=)\s*){_VALUE}"), r"\1[redacted]"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{12,}=*"), "Bearer [key]"),
    # Well-known key shapes: OpenAI/Stripe-style sk-/pk-/rk-, GitHub, Slack, Hugging Face,
    # AWS access key ids, Google API keys, JSON web tokens.
    (re.compile(r"\b(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_])*[A-Za-z0-9]{16,}\b"), "[key]"),
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


def redact(text: str) -> str:
    """``text`` with secrets, keys and e-mail addresses masked."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    text = _IS_VALUE.sub(_mask_is_value, text)
    return _LONG_TOKEN.sub(_mask_long_token, text)
