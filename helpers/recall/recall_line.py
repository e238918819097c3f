"""The line the chat shows with each memory recall: what the plugin did, in plain words.

Agent Zero shows a recall as a step in the chat: the recall extension's log item, with a
heading and key/value lines. The plugin adds one of those lines, under its own key
(``reranker``), beside what the host writes and never over it: the mode, how many of the
memories shown came from beyond Agent Zero's own search, whether the top one changed, and,
when something failed, why — from the kind of failure only, so no key and no memory text
can reach the chat. Shadow mode says what applying would have changed.

A recall makes two searches (memories, then solutions); the line sums up both. Nothing here
raises: a log item that is missing or of another kind is simply left alone.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from ..errors import BreakerOpen, DeadlineExceeded, MalformedResponse, NotConfigured, ProbeFailed, Refused, ServerError, TooSlow, TransportError
from .. import mode
from ..settings import Settings, SettingsError

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


# A failed probe, by its verdict (scoring/verdicts.py).
PROBE_WORDS = {
    "unreachable": "the server could not be reached",
    "auth": "the server refused the API key",
    "model": "the server needs a model named (see Test connection)",
    "misranks": "it did not rank the probe correctly (see Test connection)",
    "unsupported": "the server does not support reranking",
    "refused": "the privacy guard refused the endpoint",
    "bad_setting": "a setting cannot make a request (see Test connection)",
}


def with_judge_words(search: Any, head: str, part: str) -> tuple[str, str]:
    """The utility-model judge's words: on the head, that the host's own post-filter asks
    the same model again when it is on too; on the search's part, how long its answer took
    (per search, so the two searches still share one head)."""
    if search.settings.api != "utility":
        return head, part
    scored = search.scored
    if scored is not None and scored.same_call:
        part += ", judged in the same call"
    elif scored is not None and scored.latency_ms is not None:
        part += f", judged in {scored.latency_ms / 1000:.1f} s"
    elif scored is not None:
        part += ", judged from the score cache"
    if search.call.post_filter:
        head += "; Agent Zero's memory post-filter is on too, so the utility model judges twice (turn the post-filter off)"
    return head, part


def unavailable_words(exc: BaseException, settings: Settings) -> str:
    """Why the reranker was not used, from the kind of failure alone."""
    judge = settings.api == "utility"
    if isinstance(exc, ProbeFailed):
        return _judge_probe_failed(exc, settings) if judge else _probe_failed(exc, settings)
    words = _JUDGE_UNAVAILABLE if judge else _SERVER_UNAVAILABLE
    return next(say(exc, settings) for kind, say in words if isinstance(exc, kind))


def _probe_failed(exc: ProbeFailed, settings: Settings) -> str:
    if exc.verdict == "timeout":
        return f"no answer within {settings.timeout:g} s"
    if exc.verdict in PROBE_WORDS:
        return PROBE_WORDS[exc.verdict]
    if exc.status is not None:
        return f"the server answered HTTP {exc.status}"
    return "its answer could not be read" if exc.malformed else "no route answered the probe correctly (see Test connection)"


_JUDGE = "Agent Zero's utility model"  # for the utility model there is no server to name


def _judge_probe_failed(exc: ProbeFailed, settings: Settings) -> str:
    if exc.verdict == "too_slow":  # the measured seconds and what to change, in the scorer's words
        return str(exc)
    if exc.verdict == "timeout":
        return f"{_JUDGE} gave no answer within {settings.timeout:g} s"
    if exc.verdict == "misranks":
        return f"{_JUDGE} did not judge the probe correctly (see Test connection)"
    if exc.verdict == "not_configured":
        return "no agent to ask the utility model for"
    return f"{_JUDGE} failed the probe (see Test connection)"


# Any other failure, by the first kind that matches: (kind, words for (exc, settings)).
_SERVER_UNAVAILABLE = (
    ((TimeoutError, DeadlineExceeded), lambda exc, s: f"no answer within {s.timeout:g} s"),
    (BreakerOpen, lambda exc, s: f"the server kept failing, skipped for up to {s.breaker_cooldown:g} s"),
    (TransportError, lambda exc, s: "the server could not be reached"),
    (ServerError, lambda exc, s: "the server refused the API key" if exc.status in (401, 403) else f"the server answered HTTP {exc.status}"),
    (MalformedResponse, lambda exc, s: "its answer could not be read"),
    (Refused, lambda exc, s: "the privacy guard refused the endpoint"),
    (NotConfigured, lambda exc, s: "it is not set up (see Test connection)"),
    (BaseException, lambda exc, s: "it failed (see Test connection)"),
)
_JUDGE_UNAVAILABLE = (
    (TooSlow, lambda exc, s: str(exc)),
    ((TimeoutError, DeadlineExceeded), lambda exc, s: f"{_JUDGE} gave no answer within {s.timeout:g} s"),
    (BreakerOpen, lambda exc, s: f"{_JUDGE} kept failing, skipped for up to {s.breaker_cooldown:g} s"),
    (MalformedResponse, lambda exc, s: f"{_JUDGE}'s answer could not be read"),
    (NotConfigured, lambda exc, s: "no agent to ask the utility model for"),
    (Refused, lambda exc, s: f"the privacy guard refused {_JUDGE}: its endpoint is not private (rerank_private_only)"),
    (TransportError, lambda exc, s: f"the call to {_JUDGE} failed"),
    (BaseException, lambda exc, s: f"{_JUDGE} failed (see Test connection)"),
)


def fallback_words(exc: BaseException) -> str:
    """Why the plugin left the host's own result, from the kind of failure alone."""
    if isinstance(exc, SettingsError):
        return f"the setting {exc.key} is invalid"
    if isinstance(exc, TimeoutError):
        return "the recall's time ran out"
    return f"the plugin's search failed ({type(exc).__name__})"


def say(log_item: Any, done: Any, search: Any = None) -> None:
    """One search's outcome (outcome.py) on the recall's line: what ordered its memories and
    what that changed. ``search``: the finished search it is of (its settings name the
    reranker); None for a fallback, which says only why the host's own order stood."""
    if done.fell_back:
        show(log_item, done.area, "as Agent Zero found them", f"Agent Zero's own order ({done.failure.words})")
        return
    head, part = with_judge_words(search, _head(done, search.settings), _part(done))
    show(log_item, done.area, part, head)


def _head(done: Any, settings: Settings) -> str:
    """What ordered the memories, and why not the reranker when it was configured."""
    if done.reranked:
        head = mode.chat_words(settings, done.route)
    elif done.scored:
        head = f"{mode.CHAT[mode.FUSION]}; {mode.no_say_words(settings, done.route, done.trust)}"
    elif done.no_opinion:
        head = f"{mode.CHAT[mode.FUSION]}; {done.no_opinion}"
    elif done.failure is not None:
        head = f"{mode.CHAT[mode.FUSION]}; the reranker was not used: {done.failure.words}"
    else:
        head = mode.chat_words(settings)
    return head if done.applied else f"shadow mode, not applied: {head}"


def _part(done: Any) -> str:
    """One search's part of the line: of what reached (or would reach) the prompt, how many
    Agent Zero alone would not have shown there (not in its own first ``slots``), and
    whether the first one differs."""
    if not done.shown:
        return "none found" if not done.dropped_by_floor else "none above the relevance floor"
    new, top_changed = done.changes.entered_top_k, done.changes.top_changed
    if done.applied:
        text = f"{new} of {done.shown} that Agent Zero alone would not have shown"
        return text + (", first one changed" if top_changed else ", same first one")
    text = f"{new} of {done.shown} would be ones Agent Zero alone does not show"
    return text + (", the first one would change" if top_changed else ", the same first one")


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
        areas = [a for a in ("memories", "solutions") if a in parts] + [a for a in parts if a not in ("memories", "solutions")]
        heads = {parts[a][0] for a in areas}
        if len(heads) == 1:
            line = f"{heads.pop()} — " + "; ".join(f"{a}: {parts[a][1]}" for a in areas)
        else:
            line = "; ".join(f"{a}: {parts[a][0]} — {parts[a][1]}" for a in areas)
        log_item.update(**{KEY: line})
    except Exception as exc:  # the chat line must never cost a recall
        log.info("a0_reranker: could not add the recall line: %s", exc)
