"""LoCoMo (locomo10) read the way the project's figures on it are measured.

The data is public but not ours to ship (CC BY-NC 4.0): it is read from a folder
(``--locomo DIR``, by default ../shared/data/locomo10 beside the repository), never copied
into the repository. Its README.md there says how the figures are measured; this module is
that, to the letter:

- one memory store per conversation (a file ``<n>.json``); each observation fact
  (``session_N_observation``: per speaker, ``[fact, dia_id or dia_ids]``) is one memory in
  area ``main``, its ``timestamp`` the session's date (``session_N_date_time``, "1:56 pm on
  8 May, 2023") in the host's format (``2023-05-08 13:56:00``);
- the questions of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop:
  the original release's numbering; category 5, adversarial with no answer, is left out);
- a question's gold memories are the observations whose dia_ids meet its ``evidence``
  dia_ids; a question with none is counted and left out.

With ``turns`` (``--turns``) the store is the conversation itself, one memory per turn
(``session_N``: ``speaker``, ``dia_id``, ``text``, a shared photo's ``blip_caption``), as
"<speaker>: <text>", its timestamp the session's date: real human chat stored message by
message, short and chatty, full of names and dates (5,882 memories). A question's gold
memories are then the turns its evidence names, and a question whose evidence names no
turn is left out the same way.

dia_ids are written several ways: "D1:3", a list of them, "D8:6; D9:17", "D1:3 D2:4",
"D1:3, D1:5", "D:11:26" (read as D11:26), and a bare "D" (no dia_id). ``dia_ids`` reads all.
Digits are kept as written: one temporal question's evidence "D30:05" meets no turn (the
turns say "D30:5"), and the published figures count it among the questions with no gold.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO_ROOT.parent / "shared" / "data" / "locomo10"

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LEFT_OUT = 5  # adversarial: no answer in the conversation
CLASSES = ("all", "single-hop", "multi-hop", "temporal", "open-domain")

# What the published figures were measured on (the data's README): a loader that reads
# the data otherwise would make numbers that do not compare.
EXPECTED = {
    "memories": 2541,
    "questions": 1311,
    "no gold": 229,
    "per class": {"single-hop": 673, "multi-hop": 273, "temporal": 286, "open-domain": 79},
}
# The turns variant, counted the same way when it was first read (not published figures).
EXPECTED_TURNS = {
    "memories": 5882,
    "questions": 1535,
    "no gold": 5,
    "per class": {"single-hop": 841, "multi-hop": 282, "temporal": 320, "open-domain": 92},
}
# Conversations in two halves, by file: the plugin's rules were tuned on "tuned" (and, before
# this split, on all of LoCoMo); "held" is printed first, as the own corpus's held-out half.
HALF_OF = {
    "26": "tuned",
    "30": "held",
    "41": "tuned",
    "42": "held",
    "43": "tuned",
    "44": "held",
    "47": "tuned",
    "48": "held",
    "49": "tuned",
    "50": "held",
}

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_OBSERVATION = re.compile(r"^session_(\d+)_observation$")
_SESSION_TURNS = re.compile(r"^session_(\d+)$")
_SESSION_DATE = "%I:%M %p on %d %B, %Y"
HOST_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def dia_ids(value: Any) -> frozenset[str]:
    """Every dia_id in ``value`` (a string in any of the formats above, or a list of them),
    as "D<session>:<turn>" with the digits as written."""
    if isinstance(value, (list, tuple)):
        return frozenset().union(*(dia_ids(v) for v in value))
    if not isinstance(value, str):
        raise ValueError(f"dia_id: expected a string or a list, got {type(value).__name__}")
    return frozenset(f"D{s}:{t}" for s, t in _DIA_ID.findall(value))


def host_timestamp(session_date: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "2023-05-08 13:56:00" (the host's memory timestamp)."""
    return datetime.strptime(session_date.strip(), _SESSION_DATE).strftime(HOST_TIME_FORMAT)


@dataclass
class Conversation:
    name: str  # the file's stem: "26"
    memories: list[dict]  # {"id", "area", "timestamp", "text", "dia_ids"}
    questions: list[dict]  # {"id", "message", "history", "relevant", "evidence", "category", "class"}
    no_gold: int = 0  # questions of categories 1-4 no observation answers (left out)
    no_gold_with_evidence: int = 0  # of those, the ones with evidence dia_ids (the paper counts them)


def _turn_memories(name: str, data: dict) -> list[dict]:
    """Every turn of every session, one memory each (the ``turns`` variant)."""
    memories = []
    sessions = sorted((int(m.group(1)), key) for key in data if (m := _SESSION_TURNS.match(key)))
    for session, key in sessions:
        date = data.get(f"session_{session}_date_time")
        if not isinstance(date, str):
            raise ValueError(f"{name}.json: {key} has no session_{session}_date_time")
        stamp = host_timestamp(date)
        for turn in data[key]:
            if not (
                isinstance(turn, dict) and isinstance(turn.get("text"), str) and isinstance(turn.get("dia_id"), str)
            ):
                raise ValueError(f"{name}.json: {key}: expected a turn with text and dia_id, got {turn!r:.80}")
            text = f"{turn.get('speaker', '?')}: {turn['text']}"
            if isinstance(turn.get("blip_caption"), str):
                text += f" [shares {turn['blip_caption']}]"
            memories.append(
                {
                    "id": f"T{name}:{len(memories)}",
                    "area": "main",
                    "timestamp": stamp,
                    "text": text,
                    "dia_ids": dia_ids(turn["dia_id"]),
                }
            )
    return memories


def read_conversation(name: str, data: dict, turns: bool = False, first: int | None = None) -> Conversation:
    """One conversation file's memories and questions (see the module docstring). ``first``:
    the turns variant cut to its first N turns (a young store), and a question's gold to
    the turns it holds."""
    memories = _turn_memories(name, data)[:first] if turns else []
    sessions = sorted((int(m.group(1)), key) for key in data if (m := _SESSION_OBSERVATION.match(key)))
    for session, key in sessions if not turns else ():
        date = data.get(f"session_{session}_date_time")
        if not isinstance(date, str):
            raise ValueError(f"{name}.json: {key} has no session_{session}_date_time")
        stamp = host_timestamp(date)
        for speaker, facts in data[key].items():
            for fact in facts:
                if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str)):
                    raise ValueError(f"{name}.json: {key}/{speaker}: expected [fact, dia_id], got {fact!r:.80}")
                memories.append(
                    {
                        "id": f"L{name}:{len(memories)}",
                        "area": "main",
                        "timestamp": stamp,
                        "text": fact[0],
                        "dia_ids": dia_ids(fact[1]),
                    }
                )
    questions, no_gold, with_evidence = [], 0, 0
    for n, qa in enumerate(data.get("qa", [])):
        category = qa.get("category")
        if category == LEFT_OUT:
            continue
        if category not in CATEGORIES:
            raise ValueError(f"{name}.json: qa[{n}] has category {category!r}")
        evidence = dia_ids(qa.get("evidence", []))
        gold = [m["id"] for m in memories if m["dia_ids"] & evidence]
        if not gold:
            no_gold += 1
            with_evidence += bool(evidence)
            continue
        questions.append(
            {
                "id": f"L{name}:q{n}",
                "message": qa["question"],
                "history": "",
                "relevant": gold,
                "evidence": evidence,
                "category": category,
                "class": CATEGORIES[category],
                "store": name,
                "half": HALF_OF.get(name, "tuned"),
            }
        )
    return Conversation(name, memories, questions, no_gold, with_evidence)


def load(
    folder: str | Path = DEFAULT_DIR, *, check: bool = True, turns: bool = False, first: int | None = None
) -> list[Conversation]:
    """Every ``<n>.json`` in ``folder``, in numeric order, its observations (or with
    ``turns`` its turns, with ``first`` only each conversation's first N) as memories; with
    ``check``, the counts the figures were measured on are asserted (not for ``first``)."""
    folder = Path(folder)
    files = sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if not files:
        raise FileNotFoundError(f"--locomo: no LoCoMo *.json files in {folder}")
    conversations = [read_conversation(p.stem, json.loads(p.read_text(encoding="utf-8")), turns, first) for p in files]
    if check and first is None:
        assert_counts(conversations, EXPECTED_TURNS if turns else EXPECTED)
    return conversations


def counts(conversations: list[Conversation]) -> dict:
    per_class = {c: 0 for c in CLASSES[1:]}
    for conv in conversations:
        for q in conv.questions:
            per_class[q["class"]] += 1
    return {
        "memories": sum(len(c.memories) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "no gold": sum(c.no_gold for c in conversations),
        "per class": per_class,
    }


def assert_counts(conversations: list[Conversation], expected: dict = EXPECTED) -> None:
    found = counts(conversations)
    if found != expected:
        raise AssertionError(f"LoCoMo read otherwise than the figures were measured on: {found}, expected {expected}")
