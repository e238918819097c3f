"""The one cache of validated settings, for the public API and for recall.

The public API is handed the same mapping call after call: each distinct mapping (and
stored key, which the placeholder resolves to) is validated once. Recall reads the host's
config file for an agent at most every few seconds per scope (its chat's project and its
profile, ``agent_key``), and at once after a save (``forget``, from hooks.py). A ``SettingsError`` is never remembered.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from typing import Any, Callable, Mapping

from . import stored_key
from .settings import API_KEY_ENV, PLUGIN_NAME, Settings, default_mapping

log = logging.getLogger("a0_reranker")

_ENTRIES = 256
_entries: dict[tuple, tuple[float, Settings]] = {}
_lock = threading.Lock()


def remembered(key: tuple, make: Callable[[], Settings], ttl_s: float = math.inf) -> Settings:
    """``make()``'s settings, remembered under ``key`` for ``ttl_s`` seconds."""
    now = time.monotonic()
    with _lock:
        hit = _entries.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    settings = make()  # raises SettingsError: never remembered
    with _lock:
        if len(_entries) >= _ENTRIES:
            _entries.clear()
        _entries[key] = (now + ttl_s, settings)
    return settings


def forget() -> None:
    with _lock:
        _entries.clear()


def size() -> int:
    """Entries held (a testing switch: helpers/process_state.py)."""
    return len(_entries)


def agent_key(agent: Any) -> tuple:
    """What an agent's settings are remembered under: the scope the host reads its config
    for (its chat's project and its profile: a chat moved to another project reads that
    project's settings at once, not when the entry expires), and its chat."""
    project = None
    context = getattr(agent, "context", None)
    try:
        from helpers import projects  # the host's module, only present inside Agent Zero

        project = projects.get_context_project_name(context)
    except Exception:  # no host, or no project: the global and profile scopes
        pass
    return ("agent", project or "", getattr(getattr(agent, "config", None), "profile", ""), id(context))


def configured_mapping(agent: Any = None) -> Mapping[str, Any]:
    """The host's saved config when running inside Agent Zero, else ``default_config.yaml``."""
    if __package__ and __package__.startswith("usr.plugins."):
        try:
            from helpers import plugins  # the host's module, only present inside Agent Zero

            return plugins.get_plugin_config(PLUGIN_NAME, agent=agent) or default_mapping()
        except Exception as exc:  # a broken host config must not break a caller
            log.warning("a0_reranker: reading the plugin config failed (%s); using defaults", type(exc).__name__)
    return default_mapping()


def load_settings(config: Mapping[str, Any] | None = None, agent: Any = None) -> Settings:
    mapping = configured_mapping(agent) if config is None else config
    try:
        # The stored key and the origin it was saved for are part of the key, since the
        # placeholder resolves to the one for the other.
        variable = stored_key.variable_named(mapping) or API_KEY_ENV
        stored = (os.environ.get(variable), stored_key.recorded().get(variable))
        key = ("mapping", tuple(sorted(mapping.items())), stored)
        hash(key)
    except (TypeError, AttributeError):  # unhashable values, or not a mapping: not remembered
        return Settings.from_mapping(mapping)
    return remembered(key, lambda: Settings.from_mapping(mapping))
