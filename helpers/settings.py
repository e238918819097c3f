"""Settings: the one place that reads, coerces and validates the plugin's configuration.

Defaults come from ``default_config.yaml`` only. Values typed into the settings panel or
written by an LLM arrive as strings ("20", "true"); ``Settings.from_mapping`` coerces them
and raises ``SettingsError`` naming the key and what it accepts when a value is unusable.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import unquote, urlsplit

from . import stored_key
from .errors import SettingsError  # defined with the other errors; every caller imports it from here
from .vocabulary import setting_words as words

PLUGIN_NAME = "a0_reranker"
PLUGIN_DIR = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG_PATH = PLUGIN_DIR / "default_config.yaml"

# The settings panel shows this instead of a stored key; sent back, it means "keep it".
API_KEY_PLACEHOLDER = "************"
# Where the save hook stores the global settings' key (the host's usr/.env); a scope's key
# has a variable of its own (stored_key.py). Not A0_SET_*: that prefix would turn it into a
# config default the settings panel could display.
API_KEY_ENV = stored_key.API_KEY_ENV

# rerank_api's choices: a server's (auto detects its wire, rerank and qwen3_score pin one)
# and the scorers that need none; which kind each names is scoring/scorers' BY_API, the one
# table of them (tests/test_scorers.py holds the two together).
APIS = ("auto", "rerank", "qwen3_score", "lexical", "local", "utility")
DEVICES = ("cpu", "cuda", "mps", "auto")


# The longest any text setting may be: endpoints, model names, keys, paths and the Qwen3
# instruction are all far shorter; anything longer would ride along in every request.
MAX_TEXT_CHARS = 4096


@dataclass(frozen=True)
class Limit:
    """What one setting accepts. ``kind`` is bool, int, float, str or 'choice'."""

    kind: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    nullable: bool = False

    def describe(self) -> str:
        if self.kind == "choice":
            return words.one_of(self.choices)
        if self.kind == "bool":
            return words.TRUE_OR_FALSE
        if self.kind in ("int", "float"):
            text = words.number_range(self.kind == "int", _fmt(self.low), _fmt(self.high))
            return text + (words.OR_EMPTY_FOR_OFF if self.nullable else "")
        return words.text_at_most(MAX_TEXT_CHARS)


def _fmt(x: float | None) -> str:
    return "any" if x is None else (str(int(x)) if float(x).is_integer() else str(x))


# The settings whose field is not the key without its "rerank_": the key is what users
# already have in their config.json, the field the idea's one word (docs/how-it-works.md#words).
FIELD_NAMES = {"rerank_shadow_log": "decision_log"}  # written in apply mode too, not only in shadow mode


def field_name(key: str) -> str:
    """The Settings field a setting key fills."""
    return FIELD_NAMES.get(key, key.removeprefix("rerank_"))


# Every setting's limits. The settings panel checks the same ones: api/settings_fields.py serves them.
LIMITS: dict[str, Limit] = {
    "rerank_enabled": Limit("bool"),
    "rerank_apply": Limit("bool"),
    "rerank_api": Limit("choice", choices=APIS),
    "rerank_endpoint": Limit("str"),
    "rerank_model": Limit("str"),
    "rerank_api_key": Limit("str"),
    "rerank_timeout": Limit("float", 0.5, 120),
    "rerank_candidates": Limit("int", 1, 500),
    "rerank_instruction": Limit("str"),
    # At most what every server accepts: Infinity refuses any one document (or query) over
    # 8192 * 15 characters, failing the whole call; a cross-encoder reads far less anyway.
    "rerank_max_doc_chars": Limit("int", 100, 122_880),
    "rerank_max_query_chars": Limit("int", 50, 50_000),
    "rerank_pool_threshold": Limit("float", 0, 1),
    "rerank_fusion_threshold": Limit("float", 0, 1),
    "rerank_message_threshold": Limit("float", 0, 1),
    "rerank_search_message": Limit("bool"),
    "rerank_search_followup": Limit("bool"),
    "rerank_followup_chars": Limit("int", 0, 5000),
    "rerank_retries": Limit("int", 0, 10),
    "rerank_batch_size": Limit("int", 0, 10_000),
    "rerank_max_concurrency": Limit("int", 1, 64),
    "rerank_breaker_failures": Limit("int", 1, 100),
    "rerank_breaker_cooldown": Limit("float", 0, 3600),
    "rerank_cache": Limit("bool"),
    "rerank_cache_ttl": Limit("float", 0, 86_400),
    "rerank_cache_entries": Limit("int", 0, 1_000_000),
    "rerank_min_score": Limit("float", -1e6, 1e6, nullable=True),
    "rerank_relative_floor": Limit("float", 0, 1),
    "rerank_recency_weight": Limit("float", 0, 1),
    "rerank_recency_half_life_days": Limit("float", 0.01, 36_500),
    "rerank_mmr_lambda": Limit("float", 0, 1),
    "rerank_private_only": Limit("bool"),
    "rerank_redact": Limit("bool"),
    "rerank_shadow_log": Limit("str"),
    "rerank_local_model": Limit("str"),
    "rerank_local_device": Limit("choice", choices=DEVICES),
    "rerank_local_max_length": Limit("int", 16, 8192),
    "rerank_local_batch_size": Limit("int", 1, 1024),
    # Agent Zero's utility model as the judge: every memory it reads is sent as prompt
    # tokens on every search, so the pool it sees is cut to a budget.
    "rerank_judge_max_chars": Limit("int", 500, 100_000),
    "rerank_judge_doc_chars": Limit("int", 50, 8000),
}


@functools.lru_cache(maxsize=1)
def default_mapping() -> Mapping[str, Any]:
    """The parsed ``default_config.yaml`` (read once per process)."""
    import yaml  # here, not at import: the CLI checks values with LIMITS on the standard library alone

    with open(DEFAULT_CONFIG_PATH, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    missing = set(LIMITS) - set(data)
    extra = set(data) - set(LIMITS)
    if missing or extra:  # a packaging mistake, not a user error
        raise RuntimeError(words.defaults_out_of_step(missing, extra))
    return data


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


# How much of a refused value an error message quotes: the message reaches the panel, the
# log and the status views, and a setting can arrive holding megabytes.
SHOWN_CHARS = 80


def shown(value: Any) -> str:
    """A refused value as an error message quotes it: repr, cut to SHOWN_CHARS."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return repr(value[:SHOWN_CHARS]) + f"... ({len(value):,} characters)"
    try:
        text = repr(value)
    except ValueError:  # repr() refuses integers with more than 4,300 digits
        return "a huge integer"
    except RecursionError:  # a list in a list ... a JSON body nests as deep as its parser allows
        return words.NESTED_TOO_DEEPLY
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"... ({len(text):,} characters)"


# The authority of a URL: after the scheme (if any), up to the path, query or fragment.
_AUTHORITY = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?([^/?#]*)")


def shown_endpoint(url: str) -> str:
    """``url`` as every view shows it and every log line writes it: user info in it
    (``http://user:pass@proxy:8080``, the way to reach a basic-auth proxy) becomes ``***``,
    and so does a query or fragment (``?api_key=…``: refused, but quoted in the refusal).
    The one place for that rule; works on any text, a URL the client refuses included."""
    if not isinstance(url, str):
        return url
    match = _AUTHORITY.match(url)
    scheme, authority = match.group(1) or "", match.group(2)
    rest = url[len(scheme) :]
    if "@" in authority:
        rest = "***@" + authority.rsplit("@", 1)[1] + url[match.end() :]
    elif scheme and "@" in rest:
        # User info whose password holds / ? or #, even one that reads as host and port
        # before it ("admin:2024/pw@proxy"): refused at Save, and masked up to the last @.
        rest = "***@" + rest.rsplit("@", 1)[1]
    marks = [i for i in (rest.find("?"), rest.find("#")) if i >= 0]
    if marks:
        rest = rest[: min(marks) + 1] + "***"
    return scheme + rest


def endpoint_secret(url: str) -> str:
    """The secret in ``url``'s user info, as the HTTP client sends it: the password, or a user
    name of token length when there is no password. "" when none. (A short user name is not
    scrubbed: "admin" would withhold every message that holds the word.)"""
    try:
        parts = urlsplit(url)
        password, username = parts.password, unquote(parts.username or "")
    except ValueError:
        return ""
    if password:
        return unquote(password)
    return username if len(username) >= 8 else ""


# Names that travel in request bodies and log lines: printable, one line. (The endpoint,
# the key and the log's path have checks of their own, with their own words.)
_NAMES = frozenset({"rerank_model", "rerank_local_model"})


def coerce(key: str, value: Any) -> Any:
    """Coerce one raw value for ``key``; raise ``SettingsError`` if it does not fit."""
    limit = LIMITS[key]

    # Built only when raised: coerce runs for every key on every load. ``expected``: what the
    # value broke, where that is not its limit as a whole (a control character in a name).
    def bad(expected: str | None = None) -> SettingsError:
        if key == "rerank_api_key":  # a key's value is never shown, not even a wrong one
            if isinstance(value, str):  # text refused only for its length: say that, not the text
                return SettingsError(key, words.got_chars_expected(len(value), limit.describe()))
            return SettingsError(key, words.got_kind_expected_text(type(value).__name__))
        return SettingsError(key, words.got_expected(shown(value), expected or limit.describe()))

    if limit.kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise bad()
    if limit.kind == "choice":
        text = str(value).strip().lower() if isinstance(value, str) else None
        if text not in limit.choices:
            raise bad()
        return text
    if limit.kind == "str":
        if value is None:
            return ""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise bad()
        if key == "rerank_api_key" and not isinstance(value, str):  # NaN or 1e20 would be stored as "nan", "1e+20"
            raise bad()
        try:
            text = str(value)
        except ValueError:  # an integer with more digits than str() converts
            raise bad() from None
        if len(text) > MAX_TEXT_CHARS:  # a model name or a URL is short; a megabyte is a mistake or an attack
            raise bad()
        if key in _NAMES and not text.isprintable():  # a NUL or CRLF in a model name goes into request bodies
            raise bad(words.one_line_at_most(MAX_TEXT_CHARS))
        if key == "rerank_instruction" and any(not c.isprintable() and c not in "\n\t" for c in text):
            raise bad(words.no_control_characters_at_most(MAX_TEXT_CHARS))
        return text.strip() if key != "rerank_instruction" else text
    # numbers
    if value is None or (isinstance(value, str) and not value.strip()):
        if limit.nullable:
            return None
        raise bad()
    if isinstance(value, bool):
        raise bad()
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        raise bad() from None
    if not math.isfinite(number):
        raise bad()
    if limit.kind == "int":
        if not number.is_integer():
            raise bad()
        number = int(number)
    if (limit.low is not None and number < limit.low) or (limit.high is not None and number > limit.high):
        raise bad()
    return number


@dataclass(frozen=True)
class Settings:
    """Validated plugin settings. Build with ``from_mapping``; never mutate."""

    enabled: bool
    apply: bool
    api: str
    endpoint: str
    model: str
    timeout: float
    candidates: int
    instruction: str
    max_doc_chars: int
    max_query_chars: int
    pool_threshold: float
    fusion_threshold: float
    message_threshold: float
    search_message: bool
    search_followup: bool
    followup_chars: int
    retries: int
    batch_size: int
    max_concurrency: int
    breaker_failures: int
    breaker_cooldown: float
    cache: bool
    cache_ttl: float
    cache_entries: int
    min_score: float | None
    relative_floor: float
    recency_weight: float
    recency_half_life_days: float
    mmr_lambda: float
    private_only: bool
    redact: bool
    decision_log: str
    local_model: str
    local_device: str
    local_max_length: int
    local_batch_size: int
    judge_max_chars: int
    judge_doc_chars: int
    # The resolved secret: kept out of repr, str, equality and every report.
    api_key: str = field(default="", repr=False, compare=False)
    # The origin a stored key was saved for, when it is not this endpoint's (so none is sent)
    key_saved_for: str = field(default="", compare=False)

    @classmethod
    def from_mapping(
        cls,
        mapping: Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        origins: Mapping[str, str] | None = None,
    ) -> "Settings":
        """Defaults overlaid with ``mapping``; unknown keys are ignored (older configs). The
        placeholder resolves to the stored key (``env``, the process environment) only for an
        endpoint of the origin it was saved for (``origins``, the recorded ones)."""
        if mapping is not None and not isinstance(mapping, Mapping):
            raise SettingsError("config", words.not_a_mapping(type(mapping).__name__))
        merged = dict(default_mapping())
        for key, value in (mapping or {}).items():
            if key in LIMITS:
                merged[key] = value
        _refuse_the_key_elsewhere(merged, mapping or {}, env)  # before any refusal quotes a value
        values = {key: coerce(key, merged[key]) for key in LIMITS}
        endpoint = values["rerank_endpoint"].rstrip("/")
        shown_url = shown(shown_endpoint(values["rerank_endpoint"])) if endpoint else ""
        if endpoint and not _is_http_url(endpoint):
            raise SettingsError("rerank_endpoint", words.not_an_http_url(shown_url))
        if endpoint and "@" in urlsplit(endpoint).path:  # the client would send it to the name before the /
            raise SettingsError("rerank_endpoint", words.endpoint_problem(shown_url, words.AT_AFTER_HOST))
        if endpoint and (problem := _url_problem(endpoint)):
            raise SettingsError("rerank_endpoint", words.endpoint_problem(shown_url, problem))
        kwargs = {field_name(key): values[key] for key in LIMITS if key != "rerank_api_key"}
        kwargs["endpoint"] = endpoint
        variable = stored_key.variable_named(mapping or {})
        if variable is None:
            raise SettingsError("rerank_api_key", words.unknown_key_variable(stored_key.VARIABLE_FIELD))
        kwargs["api_key"], kwargs["key_saved_for"] = _resolved_key(
            merged["rerank_api_key"], env, endpoint, variable, origins
        )
        return cls(**kwargs)

    @property
    def shown_endpoint(self) -> str:
        """The endpoint as every view shows it (shown_endpoint: no password)."""
        return shown_endpoint(self.endpoint)

    @property
    def key_fingerprint(self) -> str:
        """A short, one-way tag of the key, so caches can tell keys apart without holding them."""
        if not self.api_key:
            return ""
        return hashlib.sha256(self.api_key.encode()).hexdigest()[:12]

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)


# A key shorter than this is no secret worth the check, and could be part of any word.
_KEY_LEAST = 8


def _refuse_the_key_elsewhere(merged: Mapping[str, Any], mapping: Mapping[str, Any], env) -> None:
    """Refuse a text setting that holds the API key (typed now, or the one stored): pasted
    into the endpoint (as its password, say), the model or the instruction, it would be
    saved to config.json and shown wherever that setting is. Named, never quoted."""
    keys = []
    typed = merged.get("rerank_api_key")
    if isinstance(typed, str) and typed.strip() != API_KEY_PLACEHOLDER:
        keys.append(typed.strip())
    variable = stored_key.variable_named(mapping)
    if variable is not None:
        keys.append(((os.environ if env is None else env).get(variable) or "").strip())
    keys = [k.lower() for k in keys if len(k) >= _KEY_LEAST]
    if not keys:
        return
    for name, value in merged.items():
        if name == "rerank_api_key" or LIMITS[name].kind != "str" or not isinstance(value, str):
            continue
        text = unquote(value).lower()  # a password in a URL is often percent-encoded
        if any(key in text or key in value.lower() for key in keys):
            raise SettingsError(name, words.HOLDS_THE_KEY)


def _is_http_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def _url_problem(endpoint: str) -> str:
    """Why the HTTP client would refuse ``endpoint`` (full-width letters in the host, control
    characters...), or "". Asked of httpx itself, so the two can never disagree; imported
    here, not at the top: the CLI's built-in reranker runs on the standard library alone."""
    if any(c.isspace() or not c.isprintable() for c in endpoint):
        return words.URL_SPACES
    if "?" in endpoint or "#" in endpoint:  # the route's path is added at the end: it would land in them
        return words.URL_QUERY
    import httpx

    try:
        httpx.URL(endpoint)
    except (httpx.InvalidURL, ValueError, UnicodeError):
        return words.URL_UNUSABLE
    return ""


# The field's words for "no key": the same in Test connection, at Save and at recall.
NO_KEY_WORDS = ("none", "null")


def key_input(raw: Any) -> str:
    """What the key field holds, read the one way everything reads it: "" (no key), the
    placeholder (keep the stored key), or a key. "none" and "null" mean no key.
    Raises ``SettingsError`` for a key that could not travel in an HTTP header or be
    stored in usr/.env intact; the message never repeats the key."""
    text = coerce("rerank_api_key", raw)
    if text == API_KEY_PLACEHOLDER:
        return text
    if text.lower() in NO_KEY_WORDS:
        return ""
    check_key(text)
    return text


def check_key(key: str, where: str = "") -> None:
    """A key is printable ASCII without spaces: anything else breaks the Authorization
    header (non-ASCII) or usr/.env (a line break adds variables). Raises ``SettingsError``."""
    if not all("!" <= c <= "~" for c in key):
        raise SettingsError("rerank_api_key", where + words.KEY_NOT_PRINTABLE)


def stored_value(variable: str, env: Mapping[str, str] | None = None) -> str:
    """The key stored in ``variable`` ("" for none). Raises ``SettingsError`` for one that
    could not be sent (edited by hand)."""
    stored = ((os.environ if env is None else env).get(variable) or "").strip()
    if stored.lower() in NO_KEY_WORDS:  # saved as a key by an older version
        return ""
    check_key(stored, words.stored_key_where(variable))
    return stored


def _resolved_key(
    raw: Any, env: Mapping[str, str] | None, endpoint: str | None, variable: str, origins: Mapping[str, str] | None
) -> tuple[str, str]:
    """(the key, "") or, for a stored key saved for another origin than ``endpoint``'s, ("",
    that origin). A stored key with no origin recorded (saved by an older version) goes with
    the endpoint it is configured with, as it did then."""
    text = key_input(raw)
    if text != API_KEY_PLACEHOLDER:
        return text, ""
    stored = stored_value(variable, env)
    if not stored or endpoint is None:
        return stored, ""
    bound = (stored_key.recorded() if origins is None else origins).get(variable)
    if bound is not None and bound != stored_key.origin(endpoint):
        return "", bound or "no endpoint"
    return stored, ""
