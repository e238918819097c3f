"""The one cache of validated settings, for the public API and for recall.

The public API is handed the same mapping call after call: each distinct mapping (and
stored key, which the placeholder resolves to) is validated once. Recall reads the host's
config file for an agent at most every few seconds, and at once after a save
(``forget``, from hooks.py). A ``SettingsError`` is never remembered.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

from .settings import Settings

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
    return len(_entries)
