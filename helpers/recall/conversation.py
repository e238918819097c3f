"""The conversation's own words, read out of the history text Agent Zero hands its recall.

The host renders its history as one record per message, ``user: <content>`` or
``ai: <content>``. Little of it is conversation: a user message is the JSON of
``fw.user_message.md`` (``{"user_message": "..."}``), an agent turn is the model's raw JSON
(thoughts, headline, a tool call), a tool's output is ``{"tool_name": ..., "tool_result":
...}``, and a new chat opens with the canned greeting. Searching or reranking with that text
spends the embedder's few hundred tokens, and the reranker's attention, on wrapping.

This module keeps what was said: the user's messages and the agent's answers (the text of
its ``response`` tool). Tool calls, tool output, warnings and the greeting are dropped.
Text that is not the host's JSON (a summary of older topics, a plain transcript) is kept
as it is.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

# A record starts at the beginning of a line with the host's label. Content never puts a
# label at a line start: JSON escapes its newlines, and plain text is kept whole.
_RECORD = re.compile(r"^(user|ai): ?", re.MULTILINE)
# Plain transcripts (no host JSON), as people paste them or tests write them.
_PLAIN_TURN = re.compile(r"^(user|ai|agent|assistant|human)\s*:\s?", re.MULTILINE | re.IGNORECASE)

USER_KEYS = ("user_message", "user_intervention")  # fw.user_message.md, fw.intervention.md
SUMMARY_KEYS = ("messages_summary",)  # fw.msg_summary.md: older messages, summarised
ANSWER_TOOL = "response"  # the tool whose text the user reads


@dataclass(frozen=True)
class Turn:
    role: str  # "user" or "agent"
    text: str


def turns(history: str) -> list[Turn]:
    """The conversation in ``history``, oldest first, as the words people read."""
    if not history or not history.strip():
        return []
    return list(_read_turns(history))


# One recall plans two searches, and each reads its history three times (whether anything
# was said, the follow-up's text, the reranker's query): 0.14 ms a read of a 10,000-character
# history, on the event loop. The same history is read once.
@functools.lru_cache(maxsize=8)
def _read_turns(history: str) -> tuple[Turn, ...]:
    starts = list(_RECORD.finditer(history))
    if not starts:
        return tuple(_plain_turns(history))
    out: list[Turn] = []
    seen_user = False
    for n, match in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(history)
        role = "user" if match.group(1) == "user" else "agent"
        content = history[match.end() : end].strip()
        # The greeting: an agent turn that opens the whole history, before anyone spoke.
        # (A window cut from a longer chat starts inside a record, never at offset 0.)
        if role == "agent" and not seen_user and match.start() == 0:
            continue
        text = _user_words(content) if role == "user" else _agent_words(content)
        seen_user = seen_user or role == "user"
        if text:
            out.append(Turn(role, text))
    # Text before the first label is the cut-off end of an older record: its JSON cannot be
    # read, and it is the oldest part of the window anyway.
    return tuple(out)


def recent_words(history: str, chars: int) -> str:
    """The newest ``chars`` characters of the conversation, whole turns where they fit.

    A turn that does not fit whole contributes its last words (the newest), cut at a word
    boundary; older turns are left out."""
    if chars <= 0:
        return ""
    picked: list[str] = []
    used = 0
    for turn in reversed(turns(history)):
        text, separator = turn.text, 1 if picked else 0
        if used + separator + len(text) <= chars:
            picked.append(text)
            used += separator + len(text)
            continue
        room = chars - used - separator
        if room > 20:  # a few words are worth having; a fragment of one is not
            cut = text[len(text) - room :]
            space = cut.find(" ")
            picked.append(cut[space + 1 :] if 0 <= space < len(cut) // 2 else cut)
        break
    return "\n".join(reversed(picked)).strip()


def user_message(rendered: str) -> str:
    """The user's own words from the recall extension's ``user_instruction``.

    The host renders the message as ``user: {"user_message": "...", ...}`` (history label
    plus the JSON of prompts/fw.user_message.md, empty parts removed). Decode that format;
    anything else is returned as it is. The format without its message (an empty one, its
    part removed: ``user: {}``) holds no words of the user's: ""."""
    text = rendered.strip()
    if text.startswith("user:"):
        text = text[len("user:") :].strip()
    data = _json_object(text)
    message = data.get("user_message") if data is not None else None
    if isinstance(message, str):
        return message
    whole_object = data is not None and text.startswith("{") and text.endswith("}")
    return "" if whole_object else text


def _user_words(content: str) -> str:
    data = _json_object(content)
    if data is None:
        return content  # a summary or plain text: words as they are
    for key in USER_KEYS + SUMMARY_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""  # tool output, warnings and other wrapping


def _agent_words(content: str) -> str:
    data = _json_object(content)
    if data is None:
        # Raw text the host could not read as a tool call is what the user saw; but a
        # half-written JSON object (a cut-off or misformatted turn) is not conversation.
        return "" if content.lstrip().startswith("{") else content
    if data.get("tool_name") == ANSWER_TOOL:
        args = data.get("tool_args")
        text = args.get("text") if isinstance(args, dict) else None
        return text.strip() if isinstance(text, str) else ""
    for key in SUMMARY_KEYS:
        if isinstance(data.get(key), str):
            return data[key].strip()
    return ""  # a call of another tool: its JSON is not conversation


def _json_object(content: str) -> dict | None:
    """``content`` as a JSON object, tolerating the code fences and stray text models add."""
    text = content.strip()
    if not text or "{" not in text:
        return None
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):  # nested deeper than the stack: no turn of conversation
            continue
        return value if isinstance(value, dict) else None
    return None


def _plain_turns(history: str) -> list[Turn]:
    marks = list(_PLAIN_TURN.finditer(history))
    if not marks:
        text = history.strip()
        return [Turn("user", text)] if text else []
    out = []
    lead = history[: marks[0].start()].strip()
    if lead:
        out.append(Turn("user", lead))
    for n, match in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(history)
        text = history[match.end() : end].strip()
        if text:
            role = "user" if match.group(1).lower() in ("user", "human") else "agent"
            out.append(Turn(role, text))
    return out
