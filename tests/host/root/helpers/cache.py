"""Stand-in for helpers/cache.py: named areas of key -> value, lock-guarded, with
glob-style clearing and idle-time trimming like the host's."""
import fnmatch
import threading
import time
from dataclasses import dataclass
from typing import Any

_lock = threading.RLock()
_areas: dict[str, dict[Any, "CacheEntry"]] = {}
_enabled_global = True
_enabled_areas: dict[str, bool] = {}


@dataclass
class CacheEntry:
    value: Any
    timestamp: float


def _enabled(area: str) -> bool:
    return _enabled_global and _enabled_areas.get(area, True)


def _is_pattern(area: str) -> bool:
    return any(ch in area for ch in "*?[")


def toggle_global(enabled: bool) -> None:
    global _enabled_global
    _enabled_global = enabled


def toggle_area(area: str, enabled: bool) -> None:
    _enabled_areas[area] = enabled


def has(area: str, key: Any) -> bool:
    if not _enabled(area):
        return False
    with _lock:
        entry = _areas.get(area, {}).get(key)
        if entry is None:
            return False
        entry.timestamp = time.time()
        return True


def add(area: str, key: Any, data: Any) -> None:
    if not _enabled(area):
        return
    with _lock:
        _areas.setdefault(area, {})[key] = CacheEntry(data, time.time())


def get(area: str, key: Any, default: Any = None) -> Any:
    if not _enabled(area):
        return default
    with _lock:
        entry = _areas.get(area, {}).get(key)
        if entry is None:
            return default
        entry.timestamp = time.time()
        return entry.value


def remove(area: str, key: Any) -> None:
    if not _enabled(area):
        return
    with _lock:
        _areas.get(area, {}).pop(key, None)


def clear(area: str) -> None:
    with _lock:
        if _is_pattern(area):
            for name in [n for n in _areas if fnmatch.fnmatch(n, area)]:
                del _areas[name]
        else:
            _areas.pop(area, None)


def trim_cache(area: str, seconds: float = 300) -> None:
    cutoff = time.time() - seconds
    with _lock:
        names = [n for n in _areas if fnmatch.fnmatch(n, area)] if _is_pattern(area) else [area]
        for name in names:
            entries = _areas.get(name)
            if not entries:
                continue
            for key in [k for k, e in entries.items() if e.timestamp < cutoff]:
                del entries[key]
            if not entries:
                _areas.pop(name, None)


def clear_all() -> None:
    with _lock:
        _areas.clear()


def determine_cache_key(agent, *additional):
    if agent:
        return (agent.config.profile or "none",
                agent.context.get_data("project") or "none", *additional)
    return ("none", "none", *additional)
