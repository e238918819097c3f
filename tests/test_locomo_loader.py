"""The LoCoMo loader (bench/locomo.py) reads dia_ids in every format the data writes them,
and the published counts, on tiny synthetic conversations (never LoCoMo's own text)."""

import json

import pytest

from bench import locomo


@pytest.mark.parametrize(
    "written, read",
    [
        ("D1:3", {"D1:3"}),
        (["D1:3", "D2:14"], {"D1:3", "D2:14"}),
        ("D8:6; D9:17", {"D8:6", "D9:17"}),
        ("D1:3 D1:5 D2:1", {"D1:3", "D1:5", "D2:1"}),
        ("D4:21, D4:23", {"D4:21", "D4:23"}),
        ("D:11:26", {"D11:26"}),
        ("D", set()),
        ("", set()),
        ([], set()),
        ("D30:05", {"D30:05"}),  # kept as written: it does not meet the turn D30:5
    ],
)
def test_dia_ids_in_every_written_format(written, read):
    assert locomo.dia_ids(written) == read


def test_a_dia_id_that_is_neither_text_nor_list_is_refused_by_name():
    with pytest.raises(ValueError, match="dia_id"):
        locomo.dia_ids(7)


def test_session_date_in_the_hosts_timestamp_format():
    assert locomo.host_timestamp("1:56 pm on 8 May, 2023") == "2023-05-08 13:56:00"
    assert locomo.host_timestamp("10:04 am on 19 January, 2024") == "2024-01-19 10:04:00"


def _conversation() -> dict:
    return {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "9:00 am on 2 March, 2022",
        "session_2_date_time": "3:30 pm on 9 March, 2022",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "hello"}],
        "session_2_observation": {"Ben": [["Ben bought a red kite.", "D2:4"]]},
        "session_1_observation": {
            "Ana": [["Ana keeps bees.", "D1:1"], ["Ana moved to a farm.", ["D1:3", "D1:5"]]],
            "Ben": [["Ben plays the tuba.", "D1:2, D1:6"]],
        },
        "qa": [
            {"question": "single", "answer": "x", "evidence": ["D1:1"], "category": 4},
            {"question": "multi", "answer": "x", "evidence": ["D1:5; D2:4"], "category": 1},
            {"question": "when", "answer": "x", "evidence": ["D:1:6"], "category": 2},
            {"question": "open", "answer": "x", "evidence": ["D1:3 D1:2"], "category": 3},
            {"question": "adversarial", "evidence": ["D1:1"], "category": 5, "adversarial_answer": "y"},
            {"question": "no gold", "answer": "x", "evidence": ["D1:4"], "category": 4},
            {"question": "no evidence", "answer": "x", "evidence": ["D"], "category": 2},
        ],
    }


def test_with_turns_every_turn_is_a_memory_and_the_gold_is_the_turns_the_evidence_names():
    data = _conversation()
    data["session_1"] = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I keep bees now."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a tuba"},
    ]
    conv = locomo.read_conversation("7", data, turns=True)
    assert [(m["text"], m["timestamp"], set(m["dia_ids"])) for m in conv.memories] == [
        ("Ana: I keep bees now.", "2022-03-02 09:00:00", {"D1:1"}),
        ("Ben: Look! [shares a photo of a tuba]", "2022-03-02 09:00:00", {"D1:2"}),
    ]
    by_message = {q["message"]: q["relevant"] for q in conv.questions}
    assert by_message == {"single": [conv.memories[0]["id"]], "open": [conv.memories[1]["id"]]}
    assert conv.no_gold == 4  # multi, when, no gold, no evidence: no turn of theirs was said
    assert {q["half"] for q in conv.questions} == {locomo.HALF_OF.get("7", "tuned")}


def test_observations_become_memories_of_area_main_stamped_with_their_sessions_date():
    conv = locomo.read_conversation("7", _conversation())
    assert [(m["text"], m["area"], m["timestamp"], set(m["dia_ids"])) for m in conv.memories] == [
        ("Ana keeps bees.", "main", "2022-03-02 09:00:00", {"D1:1"}),
        ("Ana moved to a farm.", "main", "2022-03-02 09:00:00", {"D1:3", "D1:5"}),
        ("Ben plays the tuba.", "main", "2022-03-02 09:00:00", {"D1:2", "D1:6"}),
        ("Ben bought a red kite.", "main", "2022-03-09 15:30:00", {"D2:4"}),
    ]
    assert len({m["id"] for m in conv.memories}) == 4


def test_gold_is_every_observation_meeting_the_evidence_and_questions_without_gold_are_left_out():
    conv = locomo.read_conversation("7", _conversation())
    ids = {m["text"]: m["id"] for m in conv.memories}
    got = {q["message"]: (q["class"], sorted(q["relevant"])) for q in conv.questions}
    assert got == {
        "single": ("single-hop", [ids["Ana keeps bees."]]),
        "multi": ("multi-hop", sorted([ids["Ana moved to a farm."], ids["Ben bought a red kite."]])),
        "when": ("temporal", [ids["Ben plays the tuba."]]),
        "open": ("open-domain", sorted([ids["Ana moved to a farm."], ids["Ben plays the tuba."]])),
    }
    assert conv.no_gold == 2  # "no gold" and "no evidence"; category 5 is not counted at all
    assert conv.no_gold_with_evidence == 1  # "no gold": its evidence meets no observation
    assert all(q["history"] == "" and q["store"] == "7" for q in conv.questions)  # first messages


def test_an_unknown_category_or_a_session_without_a_date_is_a_clear_error():
    data = _conversation()
    data["qa"].append({"question": "?", "evidence": ["D1:1"], "category": 9})
    with pytest.raises(ValueError, match="category 9"):
        locomo.read_conversation("7", data)
    data = _conversation()
    del data["session_2_date_time"]
    with pytest.raises(ValueError, match="session_2_date_time"):
        locomo.read_conversation("7", data)


def test_a_folder_read_otherwise_than_the_published_figures_fails_the_count_check(tmp_path):
    (tmp_path / "7.json").write_text(json.dumps(_conversation()))
    assert locomo.counts(locomo.load(tmp_path, check=False))["questions"] == 4
    with pytest.raises(AssertionError, match="the figures were measured on"):
        locomo.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="--locomo"):
        locomo.load(tmp_path / "missing")


@pytest.mark.skipif(not locomo.DEFAULT_DIR.is_dir(), reason="LoCoMo is not in ../shared/data/locomo10")
def test_the_real_data_gives_the_published_counts():
    assert locomo.counts(locomo.load(locomo.DEFAULT_DIR, check=False)) == locomo.EXPECTED


def test_the_evidence_share_is_the_part_of_the_evidence_the_prompts_memories_cover():
    from langchain_core.documents import Document

    from bench.relevance import Question, _evidence_share

    conv = locomo.read_conversation("7", _conversation())
    dia = {m["id"]: m["dia_ids"] for m in conv.memories}
    multi = next(q for q in conv.questions if q["message"] == "multi")
    q = Question(multi, ("all", "multi-hop"), "locomo", store="7", dia_ids=dia)
    farm = Document(page_content="", metadata={"corpus_id": multi["relevant"][0]})
    assert _evidence_share(q, [farm]) == 0.5
    assert _evidence_share(q, []) == 0.0
