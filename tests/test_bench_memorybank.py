"""bench/memorybank.py reads MemoryBank's chats as one store per person, one memory per
message, and the project's labels as each question's gold messages (a question whose gold
no message is, is left out)."""

import json

import pytest

from bench import memorybank


@pytest.fixture
def folder(tmp_path):
    chats = {
        " Ann ": {
            "history": {
                "2023-04-28": [{"query": "I ran 5 km today.", "response": "Great run!"}],
                "2023-04-27": [
                    {"query": "Hi, I'm Ann.", "response": "Hello Ann."},
                    {"query": "I love jazz.", "response": "Try Kind of Blue."},
                ],
            }
        },
        "Bo": {"history": {"2023-05-01": [{"query": "I baked bread.", "response": ""}]}},
    }
    (tmp_path / "memory_bank_en.json").write_text(json.dumps(chats), encoding="utf-8")
    questions = [{"Ann": ["What music do I like?", "What did you recommend?", "What did I do on May 9th?"]}]
    (tmp_path / "probing_questions_en.jsonl").write_text(
        "\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8"
    )
    labels = [
        {
            "user": "Ann",
            "index": 0,
            "category": "preference",
            "gold": [{"date": "2023-04-27", "exchange": 1, "role": "query"}],
        },
        {
            "user": "Ann",
            "index": 1,
            "category": "fact",
            "gold": [{"date": "2023-04-27", "exchange": 1, "role": "response"}],
        },
        {"user": "Ann", "index": 2, "category": "date", "gold": []},
    ]
    (tmp_path / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    return tmp_path


def test_each_message_is_a_memory_of_its_persons_store_in_the_order_said(folder):
    ann, bo = memorybank.load(folder, folder / "labels.json", check=False)
    assert [m["text"] for m in ann.memories] == [
        "User: Hi, I'm Ann.",
        "Assistant: Hello Ann.",
        "User: I love jazz.",
        "Assistant: Try Kind of Blue.",
        "User: I ran 5 km today.",
        "Assistant: Great run!",
    ]
    assert [m["timestamp"] for m in ann.memories][:3] == [
        "2023-04-27 20:00:00",
        "2023-04-27 20:01:00",
        "2023-04-27 20:02:00",
    ]
    assert [m["text"] for m in bo.memories] == ["User: I baked bread."]  # an empty answer is no memory
    assert all(m["area"] == "main" for m in ann.memories)


def test_the_labels_give_each_question_its_gold_messages_and_one_with_none_is_left_out(folder):
    ann, bo = memorybank.load(folder, folder / "labels.json", check=False)
    assert [(q["message"], q["class"], q["half"]) for q in ann.questions] == [
        ("What music do I like?", "preference", "held"),
        ("What did you recommend?", "fact", "held"),
    ]
    by_text = {m["id"]: m["text"] for m in ann.memories}
    assert [[by_text[g] for g in q["relevant"]] for q in ann.questions] == [
        ["User: I love jazz."],
        ["Assistant: Try Kind of Blue."],
    ]
    assert ann.no_gold == 1 and bo.questions == []


def test_counts_other_than_the_measured_ones_are_refused(folder):
    with pytest.raises(AssertionError, match="otherwise than the figures were measured on"):
        memorybank.load(folder, folder / "labels.json")
