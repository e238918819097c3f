"""The line the chat shows with each memory recall: what the plugin did, in plain words.

Agent Zero shows a recall as a step in the chat: the recall extension's log item, with a
heading and key/value lines. The plugin adds one of those lines, under its own key
(``reranker``), beside what the host writes and never over it: the mode, how many of the
memories shown came from beyond Agent Zero's own search, whether the top one changed, and,
when something failed, why — in the vocabulary's words (helpers/vocabulary/), from the kind of
failure only, so no key and no memory text can reach the chat. Shadow mode says what
applying would have changed.

A recall makes two searches (memories, then solutions); the line sums up both. Nothing here
raises: a log item that is missing or of another kind is simply left alone.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from .. import vocabulary

log = logging.getLogger("a0_reranker")

KEY = "reranker"  # the log item's key/value line the chat shows

# Per log item (one per recall), what each of its searches said. Log items are the host's
# dataclasses (not hashable): keyed by id, with a weak reference to tell a reused id apart.
_parts: dict[int, tuple[weakref.ref, dict[str, tuple[str, str]]]] = {}
_lock = threading.Lock()


def forget() -> None:
    """Forget what each recall's searches said (process_state.reset_state)."""
    with _lock:
        _parts.clear()


def say(log_item: Any, done: Any) -> None:
    """One search's outcome (outcome.py) on the recall's line, in the vocabulary's words:
    what ordered its memories and what that changed; for a fallback, why the host's own
    order stood."""
    try:
        if done.fell_back:
            part, head = vocabulary.FALLBACK_PART, vocabulary.fallback_head(done.failure.words)
        else:
            part, head = vocabulary.chat_part(done), vocabulary.chat_head(done)
    except Exception as exc:  # the chat line must never cost a recall
        log.info("a0_reranker: could not word the recall line: %s", type(exc).__name__)
        return
    show(log_item, done.area, part, head)


def show(log_item: Any, area: str, part: str, head: str) -> None:
    """Put this search's ``head`` and ``part`` on the line, with the recall's other search.
    One head when both searches say the same (the usual case), one per search otherwise."""
    if log_item is None or not callable(getattr(log_item, "update", None)):
        return
    try:
        with _lock:
            for stale in [k for k, (ref, _) in _parts.items() if ref() is None]:
                del _parts[stale]
            entry = _parts.get(id(log_item))
            if entry is None or entry[0]() is not log_item:
                entry = (weakref.ref(log_item), {})
                _parts[id(log_item)] = entry
            entry[1][area] = (head, part)
            parts = dict(entry[1])
        areas = [a for a in ("memories", "solutions") if a in parts] + [
            a for a in parts if a not in ("memories", "solutions")
        ]
        heads = {parts[a][0] for a in areas}
        if len(heads) == 1:
            line = f"{heads.pop()} — " + "; ".join(f"{a}: {parts[a][1]}" for a in areas)
        else:
            line = "; ".join(f"{a}: {parts[a][0]} — {parts[a][1]}" for a in areas)
        log_item.update(**{KEY: line})
    except Exception as exc:  # the chat line must never cost a recall
        log.info("a0_reranker: could not add the recall line: %s", exc)
