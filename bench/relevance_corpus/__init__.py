"""Hand-written evaluation corpus for memory recall (see README.md)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
AREAS = {"main", "fragments", "solutions"}
KINDS = {"direct", "followup"}
HISTORY_MIN, HISTORY_MAX = 2500, 9000


def load() -> tuple[list[dict], list[dict]]:
    """Return (memories, questions) as plain dicts."""
    with open(HERE / "memories.yaml", encoding="utf-8") as f:
        memories = yaml.safe_load(f)
    with open(HERE / "questions.yaml", encoding="utf-8") as f:
        questions = yaml.safe_load(f)
    return memories, questions


def check() -> None:
    """Validate the corpus; raises AssertionError on the first problem."""
    memories, questions = load()

    assert isinstance(memories, list) and len(memories) >= 150, f"{len(memories)} memories"
    ids = [m["id"] for m in memories]
    assert len(ids) == len(set(ids)), "duplicate memory ids"
    for m in memories:
        assert set(m) == {"id", "area", "timestamp", "text"}, f"{m.get('id')}: keys {sorted(m)}"
        assert m["area"] in AREAS, f"{m['id']}: area {m['area']!r}"
        datetime.strptime(m["timestamp"], "%Y-%m-%d %H:%M:%S")
        assert isinstance(m["text"], str) and m["text"].strip(), f"{m['id']}: empty text"
    known = set(ids)

    assert isinstance(questions, list) and len(questions) >= 40, f"{len(questions)} questions"
    qids = [q["id"] for q in questions]
    assert len(qids) == len(set(qids)), "duplicate question ids"
    for q in questions:
        assert set(q) == {"id", "kind", "drifted", "message", "history", "relevant"}, f"{q.get('id')}: keys {sorted(q)}"
        assert q["kind"] in KINDS, f"{q['id']}: kind {q['kind']!r}"
        assert isinstance(q["drifted"], bool), f"{q['id']}: drifted must be a bool"
        assert isinstance(q["message"], str) and q["message"].strip(), f"{q['id']}: empty message"
        n = len(q["history"])
        assert HISTORY_MIN <= n <= HISTORY_MAX, f"{q['id']}: history has {n} chars"
        assert q["history"].startswith("User:"), f"{q['id']}: history must start with a User: turn"
        rel = q["relevant"]
        assert isinstance(rel, list) and rel, f"{q['id']}: no relevant ids"
        missing = [r for r in rel if r not in known]
        assert not missing, f"{q['id']}: unknown memory ids {missing}"

    followups = sum(q["kind"] == "followup" for q in questions)
    assert 3 * followups >= len(questions), f"only {followups} followups of {len(questions)}"
    drifted = sum(q["drifted"] for q in questions)
    assert drifted >= 8, f"only {drifted} drifted questions"
