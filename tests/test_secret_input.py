"""The API key and the endpoint as hostile input, through the save hook the settings modal
calls, Test connection and recall: a key cannot add lines to usr/.env or pull another
secret into the Authorization header, what is stored reads back exactly after a restart,
"none" means no key everywhere, and values the HTTP client would refuse are refused at Save
with a message naming the field (and never repeating the key)."""

from __future__ import annotations

import os

import pytest
from dotenv import dotenv_values

from tests.servers import start
from tests.host.recall import QUESTION, enabled_store

KEY_ENV = "A0_RERANKER_API_KEY"


def dotenv_file(host):
    return host.root / "usr" / ".env"


def restart(host):
    """What a host restart does to usr/.env: a fresh process environment loaded from the
    file by the host's own helper (python-dotenv, with ${} expansion)."""
    os.environ.pop(KEY_ENV, None)
    from helpers import dotenv

    dotenv.load_dotenv()
    from usr.plugins.a0_reranker.helpers import settings_cache

    settings_cache.forget()


def authorizations(srv) -> list[str | None]:
    return [r.headers.get("authorization") for r in srv.requests if r.path.endswith("rerank")]


# --- 1. a key cannot write other lines into usr/.env -----------------------------------------

BAD_KEYS = {
    "line feed": "sk-1\nAUTH_PASSWORD=pwned",
    "carriage return": "sk-1\rAUTH_PASSWORD=pwned",
    "inner space": "sk-1 AUTH_PASSWORD=pwned",
    "tab": "sk-1\tx",
    "NUL": "sk-1\x00x",
    "non-ASCII": "sk-ключ-1",
    "escape character": "sk-\x1b[2J",
}


@pytest.mark.parametrize("key", BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_a_key_that_is_not_printable_ascii_is_refused_at_save_naming_the_field(host, key):
    dotenv_file(host).write_text("AUTH_LOGIN=me\nAUTH_PASSWORD=secret\n")
    with pytest.raises(ValueError, match="rerank_api_key") as refused:
        host.save_config({"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": key})
    assert key not in str(refused.value) and "pwned" not in str(refused.value)
    assert dotenv_file(host).read_text() == "AUTH_LOGIN=me\nAUTH_PASSWORD=secret\n"
    assert not host.config_path().exists()


READ_BACK_KEYS = {
    "another secret's reference": "sk-${AUTH_PASSWORD}",
    "hash": "sk-abc#def",
    "hash after a space-like start": "#sk",
    "single quote": "sk-it's",
    "double quote": 'sk-"q"',
    "backslash": "sk-back\\slash\\",
    "escaped quote": "sk-\\'x",
    "dollar forms": "$X${:-$}$${AUTH_LOGIN:-d}}",
    "everything": "sk-${AUTH_PASSWORD}#'\"\\z",
    "plain": "sk-plain_key.0123456789",
}


@pytest.mark.parametrize("key", READ_BACK_KEYS.values(), ids=READ_BACK_KEYS.keys())
def test_a_saved_key_reads_back_exactly_after_a_restart_and_is_sent_as_typed(host, key):
    dotenv_file(host).write_text("AUTH_LOGIN=me\nAUTH_PASSWORD=secret\n")
    agent, _ = enabled_store(host)
    with start("cohere", api_key=key) as srv:
        saved = host.save_config(
            {"rerank_endpoint": srv.url, "rerank_model": "rerank-v3.5", "rerank_cache": False, "rerank_api_key": key}
        )
        assert key not in saved.read_text()
        restart(host)
        values = dotenv_values(dotenv_file(host))
        assert values["AUTH_PASSWORD"] == "secret" and values["AUTH_LOGIN"] == "me" and len(values) == 3
        assert os.environ[KEY_ENV] == key
        result = host.run(host.recall(agent, QUESTION))
    assert result["error"] is None
    assert authorizations(srv) and set(authorizations(srv)) == {f"Bearer {key}"}


def test_a_crlf_usr_env_keeps_its_line_endings_and_every_other_byte(host):
    original = b"# Agent Zero\r\nAUTH_LOGIN=me\r\n\r\nAUTH_PASSWORD=secret\r\n"
    dotenv_file(host).write_bytes(original)
    host.save_config({"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": "sk-first#1"})
    assert dotenv_file(host).read_bytes() == original + b"A0_RERANKER_API_KEY='sk-first#1'\r\n"
    host.save_config({"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": "sk-second"})
    assert dotenv_file(host).read_bytes() == original + b"A0_RERANKER_API_KEY=sk-second\r\n"
    host.save_config({"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": ""})
    assert dotenv_file(host).read_bytes() == original


# --- 11. "none" means no key, in Test connection and after Save alike ------------------------


@pytest.mark.parametrize("word", ["none", "None", "NULL"])
def test_none_as_the_key_means_no_key_in_test_connection_and_in_recall_after_save(host, word):
    agent, _ = enabled_store(host)
    with start("tei19") as srv:
        form = {"rerank_endpoint": srv.url, "rerank_api_key": word, "rerank_cache": False}
        tested = host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": form}))
        assert tested.get_json()["ok"]
        assert authorizations(srv) and set(authorizations(srv)) == {None}
        srv.clear()
        host.save_config(form)
        assert KEY_ENV not in dotenv_values(dotenv_file(host)) and KEY_ENV not in os.environ
        restart(host)
        result = host.run(host.recall(agent, QUESTION))
    assert result["error"] is None
    assert authorizations(srv) and set(authorizations(srv)) == {None}  # not "Bearer none"


# --- 7. values the HTTP client refuses are refused at Save -----------------------------------

BAD_ENDPOINTS = {
    "full-width letters in the host": "http://ｌocalhost:8080",
    "a tab inside": "http://127.0.0.1:8080/re\trank",
    "a line break inside": "http://127.0.0.1:8080/\nrerank",
    "a space in the host": "http://local host:8080",
}


@pytest.mark.parametrize("endpoint", BAD_ENDPOINTS.values(), ids=BAD_ENDPOINTS.keys())
def test_an_endpoint_the_http_client_refuses_is_refused_at_save_naming_it(host, endpoint):
    with pytest.raises(ValueError, match="rerank_endpoint"):
        host.save_config({"rerank_endpoint": endpoint})
    assert not host.config_path().exists()


def test_a_stored_key_edited_by_hand_into_something_unsendable_is_a_settings_error_not_a_crash(host):
    settings = host.import_plugin("helpers.settings")
    with pytest.raises(settings.SettingsError, match="rerank_api_key") as refused:
        settings.Settings.from_mapping({"rerank_api_key": settings.API_KEY_PLACEHOLDER}, env={KEY_ENV: "sk-ключ"})
    assert "ключ" not in str(refused.value)


def test_a_key_of_the_wrong_type_is_refused_without_showing_it(host):
    with pytest.raises(ValueError, match="rerank_api_key") as refused:
        host.save_config({"rerank_api_key": ["sk-in-a-list-0123"]})
    assert "sk-in-a-list" not in str(refused.value)
