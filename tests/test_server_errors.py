"""helpers/server_errors.py: each server's wording of "too many documents" and "which model?",
read from the whole body; what is shown never echoes the documents back."""

import json

import pytest

from helpers.scoring.server_errors import MESSAGE_CHARS, read
from helpers.settings import Settings, SettingsError

SECRET_MEMORY = "the user's bank PIN is 0000"


def _too_long(msg, max_length=16, n=40):
    return json.dumps(
        {
            "detail": [
                {
                    "type": "too_long",
                    "loc": ["body", "documents"],
                    "msg": msg,
                    "input": [SECRET_MEMORY] * n,
                    "ctx": {"field_type": "List", "max_length": max_length, "actual_length": n},
                }
            ]
        }
    )


@pytest.mark.parametrize(
    "body, limit",
    [
        ('{"error": "batch size 40 > maximum allowed batch size 8", "error_type": "Validation"}', 8),  # TEI
        ("batch size 40 > maximum allowed batch size 8", 8),  # TEI's text, no JSON
        (_too_long("List should have at most 16 items after validation, not 40"), 16),  # Infinity
        (_too_long("a wording of another pydantic release", max_length=12), 12),  # the structured ctx alone
        ('{"detail": "List should have at most 5 items after validation, not 9"}', 5),
        ('{"detail": [{"type": "missing", "loc": ["body", "texts"], "msg": "Field required"}]}', None),
        (
            '{"detail": [{"type": "string_too_long", "loc": ["body", "documents", 0], '
            '"msg": "String should have at most 122880 characters", "ctx": {"max_length": 122880}}]}',
            None,
        ),
        ('{"error": {"message": "model x is currently overloaded", "code": 429}}', None),
    ],
)
def test_the_batch_limit_each_server_names(body, limit):
    assert read(body).batch_limit == limit


def test_a_validation_message_says_where_and_what_but_not_the_input():
    answer = read(_too_long("List should have at most 16 items after validation, not 40", n=2000))
    assert answer.message == "documents: List should have at most 16 items after validation, not 40"
    assert SECRET_MEMORY not in answer.message


def test_the_models_a_server_lists_are_found_past_the_shown_cut():
    names = [f"organisation-{i}/a-rather-long-model-name-v{i}" for i in range(12)]
    body = json.dumps(
        {
            "error": {
                "message": (
                    "Invalid model: Engine for model name `default/not-specified` not found. "
                    f"Available model names are {names!r}"
                ),
                "type": None,
                "param": None,
                "code": 400,
            }
        }
    )
    answer = read(body)
    assert answer.models == tuple(names) and len(answer.message) == MESSAGE_CHARS


@pytest.mark.parametrize(
    "body",
    ["", "<html>no</html>", '{"error": "Available model names are [oops"}', '{"error": "available models: [1, 2]"}'],
)
def test_no_model_list_where_there_is_none(body):
    assert read(body).models == ()


def test_the_document_budget_stops_at_what_infinity_accepts():
    assert Settings.from_mapping({"rerank_max_doc_chars": 122_880}).max_doc_chars == 122_880
    with pytest.raises(SettingsError, match="rerank_max_doc_chars.*from 100 to 122880"):
        Settings.from_mapping({"rerank_max_doc_chars": 122_881})
