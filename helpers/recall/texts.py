"""What one recall search searches with, and what it asks the reranker: the texts.

The host's recall query is the user's message plus up to 10,000 characters of history. The
plugin also searches with the user's message alone and with the message plus the newest
turns of the conversation, for follow-ups whose meaning lives in the last exchange (the
host's default embedder reads only its first 256 tokens, ~700 characters, so a longer tail
would be silently ignored). The store is searched in store_search.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import conversation

HOST, MESSAGE, FOLLOWUP = "host", "message", "followup"
LEXICAL = "lexical"  # the words of the message (else the host's query) over the whole store


@dataclass(frozen=True)
class Searches:
    """The texts to search with, by role. ``host`` is the caller's own query."""

    host: str
    message: str = ""
    followup: str = ""

    def texts(self) -> dict[str, str]:
        """Role -> text, most precise first, empty ones left out. Roles may share a text
        (memory_load has only the host's query); it is searched once."""
        roles = ((MESSAGE, self.message), (FOLLOWUP, self.followup), (HOST, self.host))
        return {role: text for role, text in roles if text and text.strip() or role == HOST}


def followup_text(message: str, history: str, chars: int) -> str:
    """The message followed by the newest ``chars`` characters of conversation, or ""."""
    tail = conversation.recent_words(history, chars)
    return f"{message}\n\n{tail}" if tail else ""


def reranker_query(message: str | None, history: str | None, host_query: str, budget: int) -> str:
    """The user's message plus the newest conversation that fits ``budget`` characters.

    Without a known message (``memory_load``, an unknown caller) the host's query is cut to
    the budget, keeping its start, where the host puts the message."""
    if message is None:
        return host_query[:budget]
    message = message.strip()
    if len(message) >= budget:
        return message[:budget]
    tail = conversation.recent_words(history or "", budget - len(message) - 2)
    return f"{message}\n\n{tail}" if tail else message


_AGENT_ZERO = re.compile(r"\bagent[\s_-]*(?:zero|0)\b|\ba0\b", re.IGNORECASE)


def names_agent_zero(message: str) -> bool:
    """The user's message is about Agent Zero itself: it names it ("agent zero", "A0")."""
    return bool(_AGENT_ZERO.search(message))
