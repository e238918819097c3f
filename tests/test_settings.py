"""Settings: one source of defaults, coercion of UI/LLM strings, clear errors naming the key."""

import pytest
import yaml

from helpers.settings import (
    API_KEY_ENV,
    API_KEY_PLACEHOLDER,
    DEFAULT_CONFIG_PATH,
    LIMITS,
    Settings,
    SettingsError,
    field_name,
)
from helpers.scoring import scorers


def test_defaults_come_from_default_config_yaml_only():
    raw = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    settings = Settings.from_mapping({})
    assert set(raw) == set(LIMITS)
    for key, value in raw.items():
        if key == "rerank_api_key":
            continue
        # an empty number that may be off is off (rerank_min_score: "" rather than null,
        # so that Agent Zero's A0_SET_ variables can set it)
        expected = None if value == "" and LIMITS[key].nullable else value
        assert getattr(settings, field_name(key)) == expected, key


def test_reference_plugin_defaults_are_kept():
    s = Settings.from_mapping({})
    assert (s.api, s.candidates, s.max_doc_chars) == ("auto", 20, 8000)
    assert s.instruction == "Given a web search query, retrieve relevant passages that answer the query"
    assert scorers.for_settings(s) is None  # no endpoint: the built-in fusion alone


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("rerank_candidates", "20", 20),
        ("rerank_candidates", 30.0, 30),
        ("rerank_apply", "true", True),
        ("rerank_apply", "OFF", False),
        ("rerank_apply", 0, False),
        ("rerank_timeout", " 2.5 ", 2.5),
        ("rerank_api", "Qwen3_Score", "qwen3_score"),
        ("rerank_min_score", "", None),
        ("rerank_min_score", "-3", -3.0),
        ("rerank_endpoint", " http://127.0.0.1:8080/ ", "http://127.0.0.1:8080"),
    ],
)
def test_strings_from_the_ui_or_an_llm_are_coerced(key, raw, expected):
    assert getattr(Settings.from_mapping({key: raw}), field_name(key)) == expected


@pytest.mark.parametrize(
    "key, raw, fragment",
    [
        ("rerank_candidates", "many", "a whole number from 1 to 500"),
        ("rerank_candidates", 2.5, "whole number"),
        ("rerank_candidates", 0, "from 1 to 500"),
        ("rerank_timeout", "nan", "a number"),
        ("rerank_apply", "perhaps", "true or false"),
        ("rerank_api", "openai", "one of auto, rerank, qwen3_score, lexical, local"),
        ("rerank_endpoint", "localhost:8080", "http:// or https://"),
        ("rerank_enabled", [1], "true or false"),
        ("rerank_model", {"a": 1}, "text"),
        ("rerank_candidates", True, "whole number"),
    ],
)
def test_bad_values_raise_one_error_type_naming_the_key(key, raw, fragment):
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({key: raw})
    assert info.value.key == key
    assert key in str(info.value) and fragment in str(info.value)


def test_a_non_mapping_config_is_a_clear_error():
    with pytest.raises(SettingsError, match="mapping"):
        Settings.from_mapping(["rerank_api"])


def test_unknown_keys_are_ignored():
    assert Settings.from_mapping({"some_old_key": 1}).api == "auto"


def test_placeholder_means_the_stored_key_and_the_key_stays_out_of_repr():
    s = Settings.from_mapping({"rerank_api_key": API_KEY_PLACEHOLDER}, env={API_KEY_ENV: "sk-stored-123"})
    assert s.api_key == "sk-stored-123"
    assert "sk-stored-123" not in repr(s) and "sk-stored-123" not in str(s)
    assert s.key_fingerprint and "sk-stored" not in s.key_fingerprint
    assert Settings.from_mapping({"rerank_api_key": "None"}).api_key == ""


@pytest.mark.parametrize("raw", ["x" * 1_000_000, ["y"] * 100_000, "7\n" * 50_000])
def test_an_error_quotes_a_huge_value_only_in_part(raw):
    """The message reaches the panel, the log and the status views: a megabyte pasted into a
    field comes back as its start and its size, not as itself."""
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({"rerank_message_threshold": raw})
    assert len(str(info.value)) < 300 and "characters" in str(info.value)


def test_a_value_nested_too_deeply_to_quote_is_refused_by_name_not_by_a_crash():
    """Save (and the panel's check before it) quote a refused value; one nested deeper than
    repr() can go raised RecursionError out of the refusal, and Save read "Save failed"."""
    nested: list = []
    for _ in range(5_000):
        nested = [nested]
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({"rerank_timeout": nested})
    assert info.value.key == "rerank_timeout" and "a value nested too deeply" in str(info.value)


@pytest.mark.parametrize("key", ["rerank_model", "rerank_instruction", "rerank_local_model", "rerank_endpoint"])
def test_a_text_setting_of_a_megabyte_is_refused_by_name(key):
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({key: "http://h/" + "x" * 1_000_000})
    assert info.value.key == key and "at most 4,096 characters" in str(info.value)


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("rerank_model", "bge\x00reranker", "expected one line of printable text, at most 4,096 characters"),
        ("rerank_local_model", "cross\r\nencoder", "expected one line of printable text, at most 4,096 characters"),
        ("rerank_instruction", "Judge\x07 this", "expected text without control characters other than line breaks"),
    ],
)
def test_a_control_character_is_named_as_what_was_refused_not_the_length(key, raw, expected):
    """A short name holding a NUL was refused with "expected text of at most 4,096
    characters": true of the limit, and no help to whoever must find what is wrong."""
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({key: raw})
    assert info.value.key == key and expected in str(info.value)


def test_a_key_of_a_megabyte_is_refused_for_its_length_without_being_quoted():
    key = "sk-" + "Q" * 1_000_000
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping({"rerank_api_key": key})
    message = str(info.value)
    assert info.value.key == "rerank_api_key"
    assert "got 1,000,003 characters, expected text of at most 4,096 characters" in message
    assert "QQQ" not in message and "sk-" not in message
