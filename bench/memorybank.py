"""MemoryBank's English evaluation set, read as user–assistant chat stored message by message:
a held-out check nothing in the plugin was tuned on.

Zhong et al., "MemoryBank: Enhancing Large Language Models with Long-Term Memory" (AAAI
2024), github ``zhongwanjun/MemoryBank-SiliconFriend``, ``eval_data/en/`` (MIT licence): 15
people, each chatting with an AI companion over ten days (``memory_bank_en.json``: per
person, ``history``: date -> exchanges of ``query`` and ``response``), and 104 probing
questions a person asks afterwards (``probing_questions_en.jsonl``). The data is read from a
folder (``--memorybank DIR``, by default ../shared/data/memorybank beside the repository),
never copied into the repository: ``git clone https://github.com/zhongwanjun/MemoryBank-SiliconFriend``
and copy ``eval_data/en/memory_bank_en.json`` and ``eval_data/en/probing_questions_en.jsonl``
there (read at commit cf61c41).

The questions carry no evidence, so which messages answer each one was labelled by this
project, by reading the chats: ``bench/memorybank_labels.json`` (ours, no text of theirs:
per question its person, its index in that person's list, a category and the gold messages
as (date, exchange, role)). A question no message answers is left out (1 of 100: a day with
no chat).

- **One store per person**, each message one memory in area ``main``: "User: <query>" and
  "Assistant: <response>", in the order they were said, stamped with the day they were said
  on (the host's format, ``2023-04-27 20:00:00``, a minute apart within a day).
- **Asking**: each question is the first message of a new chat, against its person's store.
- **Classes**: the labels' categories: fact, date (the question names a day or asks when),
  preference, summary (what did we talk about), false-premise ("I don't like X, right?").
- **Half**: every question is held out (``held``): no rule was chosen on this set.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.locomo import Conversation

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO_ROOT.parent / "shared" / "data" / "memorybank"
LABELS = Path(__file__).with_name("memorybank_labels.json")
CLASSES = ("all", "fact", "date", "preference", "summary", "false-premise")
# What the figures were measured on: a loader that reads the data otherwise makes numbers
# that do not compare.
EXPECTED = {"people": 15, "memories": 1132, "questions": 99, "no gold": 1}
ROLES = {"query": "User", "response": "Assistant"}


def message_id(person: str, date: str, exchange: int, role: str) -> str:
    return f"M{person.strip()}:{date}:{exchange}:{role}"


def _memories(person: str, history: dict) -> list[dict]:
    memories = []
    for date in sorted(history):
        for n, exchange in enumerate(history[date]):
            for role, speaker in ROLES.items():
                text = exchange.get(role)
                if not isinstance(text, str) or not text.strip():
                    continue
                memory_id = message_id(person, date, n, role)
                memories.append(
                    {
                        "id": memory_id,
                        "area": "main",
                        "timestamp": f"{date} 20:{min(2 * n + (role == 'response'), 59):02d}:00",
                        "text": f"{speaker}: {text.strip()}",
                        "dia_ids": frozenset({memory_id}),
                    }
                )
    return memories


def load(folder: str | Path = DEFAULT_DIR, labels: str | Path = LABELS, *, check: bool = True) -> list[Conversation]:
    """One store per person and the labelled questions asked of it (see the docstring); with
    ``check``, the counts the figures were measured on are asserted."""
    folder = Path(folder)
    chats, asked = folder / "memory_bank_en.json", folder / "probing_questions_en.jsonl"
    for path in (chats, asked):
        if not path.is_file():
            raise FileNotFoundError(f"--memorybank: no {path.name} in {folder}")
    data = {name.strip(): person for name, person in json.loads(chats.read_text(encoding="utf-8")).items()}
    questions_of: dict[str, list[str]] = {}
    for line in asked.read_text(encoding="utf-8").splitlines():
        if line.strip():
            questions_of.update({name.strip(): texts for name, texts in json.loads(line).items()})
    by_person: dict[str, list[dict]] = {}
    for label in json.loads(Path(labels).read_text(encoding="utf-8")):
        label = {**label, "question": questions_of[label["user"]][label["index"]]}
        by_person.setdefault(label["user"], []).append(label)
    conversations = []
    for person, person_data in data.items():
        memories = _memories(person, person_data.get("history") or {})
        known = {m["id"] for m in memories}
        questions, no_gold = [], 0
        for label in by_person.get(person, []):
            gold = [message_id(person, g["date"], g["exchange"], g["role"]) for g in label["gold"]]
            gold = [g for g in gold if g in known]
            if not gold:
                no_gold += 1
                continue
            questions.append(
                {
                    "id": f"M{person}:q{label['index']}",
                    "message": label["question"],
                    "history": "",
                    "relevant": gold,
                    "evidence": frozenset(gold),
                    "category": label["category"],
                    "class": label["category"],
                    "store": person,
                    "half": "held",
                }
            )
        conversations.append(Conversation(person, memories, questions, no_gold, no_gold))
    found = {
        "people": len(conversations),
        "memories": sum(len(c.memories) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "no gold": sum(c.no_gold for c in conversations),
    }
    if check and found != EXPECTED:
        raise AssertionError(
            f"MemoryBank read otherwise than the figures were measured on: {found}, expected {EXPECTED}"
        )
    return conversations
