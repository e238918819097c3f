"""Which stored key a configuration means, and which server that key belongs to.

The keys live in the host's ``usr/.env``: ``A0_RERANKER_API_KEY`` for the global settings,
``A0_RERANKER_API_KEY_SCOPE_<16 hex digits>`` for a project or agent-profile scope (derived
from the scope, so a scoped Save never overwrites another scope's key; a scoped
``config.json`` names its variable in ``rerank_api_key_variable``).

Beside ``usr/.env``, ``a0_reranker.key_origins.json`` records, for each variable, the origin
(scheme, host, port) its key was saved for. No secret is in it. The placeholder resolves to a
key only for an endpoint of that origin: a form, a Save or a hand-edited ``config.json``
pointing at another server sends that server no key. A key saved before origins were
recorded has none; it is bound to the endpoint it is configured with until the next start
(``config_store.bind_unbound_key``) or Save records the one saved with it.

This module reads files and the process environment only; it imports nothing of the plugin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from typing import Any, Mapping
from urllib.parse import urlsplit

API_KEY_ENV = "A0_RERANKER_API_KEY"
SCOPE_PREFIX = API_KEY_ENV + "_SCOPE_"
# In a scoped config.json: the variable its placeholder means.
VARIABLE_FIELD = "rerank_api_key_variable"
ORIGINS_FILE = "a0_reranker.key_origins.json"

_SCOPED = re.compile(re.escape(SCOPE_PREFIX) + r"[0-9A-F]{16}")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def variable_for(project: str = "", profile: str = "") -> str:
    """The variable holding the key saved at this scope (global: both empty)."""
    project, profile = project or "", profile or ""
    if not project and not profile:
        return API_KEY_ENV
    digest = hashlib.sha256(f"{project}\0{profile}".encode()).hexdigest()[:16].upper()
    return SCOPE_PREFIX + digest


def is_own_variable(name: Any) -> bool:
    """One of the plugin's key variables (never another secret of usr/.env)."""
    return isinstance(name, str) and (name == API_KEY_ENV or _SCOPED.fullmatch(name) is not None)


def origin(url: Any) -> str:
    """``scheme://host:port`` of ``url``, lower case, the default port written out; "" for no
    URL or one that cannot be read. User info is not part of it."""
    if not isinstance(url, str) or not url.strip():
        return ""
    try:
        parts = urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return ""
    if not host or scheme not in _DEFAULT_PORTS:
        return ""
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS[scheme]}"


def origins_path(dotenv_path: str) -> str:
    """Where the origins are recorded: beside the host's usr/.env."""
    return os.path.join(os.path.dirname(os.path.abspath(dotenv_path)), ORIGINS_FILE)


class Origins:
    """The recorded origins, one JSON object ``{variable: origin}`` in a file (``path``), or in
    memory only (``path`` None). Reads are cached by the file's modification time."""

    def __init__(self, path: str | None):
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple | None = None
        self._data: dict[str, str] = {}

    def all(self) -> dict[str, str]:
        with self._lock:
            return dict(self._read())

    def get(self, variable: str) -> str | None:
        return self.all().get(variable)

    def set(self, variable: str, value: str | None) -> None:
        """Record ``value`` for ``variable`` (None: forget it). Raises ``OSError``."""
        with self._lock:
            data = dict(self._read())
            if value is None:
                if variable not in data:
                    return
                data.pop(variable)
            elif data.get(variable) == value:
                return
            else:
                data[variable] = value
            self._write(data)

    def remove_file(self) -> bool:
        with self._lock:
            self._data, self._seen = {}, None
            if self.path is None:
                return False
            try:
                os.remove(self.path)
                return True
            except FileNotFoundError:
                return False

    def _read(self) -> dict[str, str]:
        if self.path is None:
            return self._data
        try:
            stat = os.stat(self.path)
        except OSError:  # no file yet: nothing recorded
            self._seen, self._data = None, {}
            return self._data
        seen = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if seen != self._seen:
            try:
                with open(self.path, encoding="utf-8") as fh:
                    loaded = json.load(fh)
            except (OSError, ValueError):
                loaded = {}
            # Only the plugin's own variables, and origins as this module writes them
            self._data = (
                {k: v for k, v in loaded.items() if is_own_variable(k) and isinstance(v, str)}
                if isinstance(loaded, dict)
                else {}
            )
            self._seen = seen
        return self._data

    def _write(self, data: dict[str, str]) -> None:
        if self.path is None:
            self._data = data
            return
        temporary = self.path + ".tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temporary, self.path)
        self._seen = None  # read back (and its new modification time) on the next read


_host_origins: Origins | None = None
_host_lock = threading.Lock()


def host_origins() -> Origins | None:
    """The origins beside the host's usr/.env when running inside Agent Zero, else None."""
    global _host_origins
    if not (__package__ or "").startswith("usr.plugins."):
        return None
    try:
        from helpers import dotenv  # the host's module, only present inside Agent Zero

        path = origins_path(dotenv.get_dotenv_file_path())
    except Exception:
        return None
    with _host_lock:
        if _host_origins is None or _host_origins.path != path:
            _host_origins = Origins(path)
        return _host_origins


def recorded() -> Mapping[str, str]:
    """Every recorded origin (the host's file), {} outside Agent Zero."""
    found = host_origins()
    return found.all() if found is not None else {}


def variable_named(mapping: Mapping[str, Any]) -> str | None:
    """The variable a configuration's placeholder means: the one it names, else the global
    one. None for a name that is not one of the plugin's (another secret of usr/.env)."""
    named = mapping.get(VARIABLE_FIELD) if isinstance(mapping, Mapping) else None
    if named in (None, ""):
        return API_KEY_ENV
    return named if is_own_variable(named) else None
