"""The stored key follows the server it was saved for, and each scope has its own.

A key saved for server A is sent to A only: Test connection with the placeholder and an
endpoint on B sends B nothing and says the stored key belongs to another server; a Save of
the placeholder with B is refused naming the setting; a config.json edited by hand to point
at B sends B no key, over http:// or https://. A key saved before origins were recorded
keeps working with the endpoint saved with it. A project or agent-profile Save stores its
key in a variable of its own: the global settings keep theirs, and uninstall removes all."""

from __future__ import annotations

import json
import os

import pytest
from dotenv import dotenv_values

from tests.servers import start
from tests.host.recall import QUESTION, enabled_store, memory_texts

GLOBAL_KEY = "sk-global-0123456789"
SCOPED_KEY = "sk-project-9876543210"
KEY_ENV = "A0_RERANKER_API_KEY"
PLACEHOLDER = "************"


def bearers(srv) -> set:
    return {r.headers.get("authorization") for r in srv.requests}


def saved(host, **scope) -> dict:
    return json.loads(host.config_path(**scope).read_text())


def connection(srv) -> dict:
    return {"rerank_endpoint": srv.url, "rerank_model": "rerank-v3.5", "rerank_cache": False, "rerank_retries": 0}


def probe_form(host, form) -> dict:
    return host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": form})).get_json()


# --- 1. the key is bound to the origin it was saved for --------------------------------------


def test_test_connection_with_the_placeholder_and_another_server_sends_it_no_key(host):
    with start("cohere", api_key=GLOBAL_KEY) as a, start("cohere", api_key=GLOBAL_KEY) as b:
        host.save_config({**connection(a), "rerank_api_key": GLOBAL_KEY})
        assert probe_form(host, {**connection(a), "rerank_api_key": PLACEHOLDER})["ok"]  # its own server: sent
        answer = probe_form(host, {**connection(b), "rerank_api_key": PLACEHOLDER})
    # b is tested without a key: the stored one is not sent to it
    assert b.requests and not any("authorization" in {k.lower() for k in r.headers} for r in b.requests)
    report = answer["report"]
    assert not answer["ok"] and report["verdict"] == "auth"
    assert "rerank_api_key" in report["reason"] and "another server" in report["reason"]
    assert a.url.split("//")[1] in report["reason"]  # which server the key was saved for
    assert GLOBAL_KEY not in json.dumps(answer)


def test_a_save_of_the_placeholder_with_another_server_is_refused_naming_the_setting(host):
    with start("cohere", api_key=GLOBAL_KEY) as a, start("cohere", api_key=GLOBAL_KEY) as b:
        host.save_config({**connection(a), "rerank_api_key": GLOBAL_KEY})
        before = host.config_path().read_text()
        with pytest.raises(ValueError, match="rerank_api_key") as refused:
            host.save_config({**connection(b), "rerank_api_key": PLACEHOLDER})
        assert "another server" in str(refused.value) and GLOBAL_KEY not in str(refused.value)
        assert host.config_path().read_text() == before
        # typing the key again, or clearing it, saves
        host.save_config({**connection(b), "rerank_api_key": GLOBAL_KEY})
        host.save_config({**connection(a), "rerank_api_key": ""})
    assert KEY_ENV not in os.environ


@pytest.mark.parametrize("edit", ["another port", "http instead of https", "another host"])
def test_a_config_edited_by_hand_to_another_server_sends_it_no_key(host, edit):
    agent, _ = enabled_store(host)
    with start("cohere", api_key=GLOBAL_KEY) as srv:
        host.save_config(
            {
                **connection(srv),
                "rerank_api_key": GLOBAL_KEY,
                "rerank_endpoint": {
                    "another port": srv.url.rsplit(":", 1)[0] + ":9",  # saved for :9, the server is elsewhere
                    "http instead of https": srv.url.replace("http://", "https://"),
                    "another host": srv.url.replace("127.0.0.1", "localhost"),
                }[edit],
            }
        )
        host.set_config({**saved(host), "rerank_endpoint": srv.url})  # edited by hand, placeholder kept
        host.import_plugin("helpers.settings_cache").forget()
        result = host.run(host.recall(agent, QUESTION))
        status = host.run(host.call_api("plugins/a0_reranker/status", {})).get_json()["status"]
    assert result["error"] is None
    assert srv.requests and f"Bearer {GLOBAL_KEY}" not in bearers(srv)
    assert status["api_key_set"] is False and status["api_key_saved_for"]


def test_a_key_saved_before_origins_were_recorded_keeps_working_and_is_then_bound(host):
    """An older version's Save: the key in usr/.env, the placeholder in config.json, no origin."""
    agent, _ = enabled_store(host)
    (host.root / "usr" / ".env").write_text(f"{KEY_ENV}={GLOBAL_KEY}\n")
    host.setenv(KEY_ENV, GLOBAL_KEY)
    with start("cohere", api_key=GLOBAL_KEY) as srv, start("cohere", api_key=GLOBAL_KEY) as other:
        host.set_config({**connection(srv), "rerank_api_key": PLACEHOLDER})
        host.import_plugin("helpers.settings_cache").forget()
        assert host.run(host.recall(agent, QUESTION))["error"] is None
        assert f"Bearer {GLOBAL_KEY}" in bearers(srv)  # as before the change
        assert probe_form(host, {**connection(srv), "rerank_api_key": PLACEHOLDER})["ok"]
        assert not probe_form(host, {**connection(other), "rerank_api_key": PLACEHOLDER})["ok"]
        assert f"Bearer {GLOBAL_KEY}" not in bearers(other)  # tested without the key
        # the first Save binds it to the endpoint it was saved with
        with pytest.raises(ValueError, match="rerank_api_key"):
            host.save_config({**connection(other), "rerank_api_key": PLACEHOLDER})
        host.save_config({**connection(srv), "rerank_api_key": PLACEHOLDER})
        host.set_config({**saved(host), "rerank_endpoint": other.url})  # then edited by hand
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, QUESTION))
    assert other.requests and f"Bearer {GLOBAL_KEY}" not in bearers(other)


def test_origins_compare_scheme_host_and_port(host):
    stored_key = host.import_plugin("helpers.stored_key")
    assert stored_key.origin("https://API.example.com/v1") == "https://api.example.com:443"
    assert stored_key.origin("https://api.example.com:443/x") == stored_key.origin("https://api.example.com")
    assert stored_key.origin("http://api.example.com") != stored_key.origin("https://api.example.com")
    assert stored_key.origin("http://u:p@[::1]:8080/x") == "http://[::1]:8080"
    assert stored_key.origin("") == "" and stored_key.origin("not a url") == ""


# --- 10. a key per scope -----------------------------------------------------------------------


def test_a_project_save_keeps_its_own_key_and_the_global_settings_keep_theirs(host):
    agent, _ = enabled_store(host)
    host.set_config({"rerank_endpoint": "", "rerank_enabled": True})
    with start("cohere", api_key=GLOBAL_KEY) as global_srv, start("cohere", api_key=SCOPED_KEY) as project_srv:
        host.save_config({**connection(global_srv), "rerank_api_key": GLOBAL_KEY})
        host.save_config({**connection(project_srv), "rerank_api_key": SCOPED_KEY}, project="alpha", profile="agent0")
        assert os.environ[KEY_ENV] == GLOBAL_KEY  # not overwritten by the project's Save
        assert dotenv_values(host.root / "usr" / ".env")[KEY_ENV] == GLOBAL_KEY
        assert SCOPED_KEY not in host.config_path(project="alpha", profile="agent0").read_text()

        host.run(host.recall(agent, QUESTION))  # a chat outside the project: the global settings
        in_project = host.agent(project="alpha")
        host.run(host.insert(host.run(host.memory(in_project)), memory_texts()))
        host.run(host.recall(in_project, QUESTION))
        # saving the project's placeholder again keeps its key
        host.save_config(saved(host, project="alpha", profile="agent0"), project="alpha", profile="agent0")
    assert bearers(global_srv) == {f"Bearer {GLOBAL_KEY}"}
    assert f"Bearer {SCOPED_KEY}" in bearers(project_srv) and f"Bearer {GLOBAL_KEY}" not in bearers(project_srv)
    assert os.environ[KEY_ENV] == GLOBAL_KEY


def test_a_scopes_first_save_of_an_inherited_key_gives_it_its_own_copy(host):
    with start("cohere", api_key=GLOBAL_KEY) as srv, start("cohere", api_key=GLOBAL_KEY) as other:
        host.save_config({**connection(srv), "rerank_api_key": GLOBAL_KEY})
        # the panel of a scope with no config of its own shows the global one: its placeholder
        host.save_config({**saved(host), "rerank_candidates": 30}, profile="researcher")
        with pytest.raises(ValueError, match="rerank_api_key"):  # and the inherited key follows its server only
            host.save_config({**connection(other), "rerank_api_key": PLACEHOLDER}, project="beta")
        host.save_config({**connection(srv), "rerank_api_key": "sk-new-global-000"})  # the global key changes
    scoped = saved(host, profile="researcher")
    settings = host.import_plugin("helpers.settings")
    assert settings.Settings.from_mapping(scoped).api_key == GLOBAL_KEY  # its own copy, unchanged
    assert settings.Settings.from_mapping(saved(host)).api_key == "sk-new-global-000"


def test_a_config_naming_another_secret_as_its_variable_is_refused(host):
    settings = host.import_plugin("helpers.settings")
    host.setenv("API_KEY_OPENAI", "sk-openai-secret")
    with pytest.raises(settings.SettingsError, match="rerank_api_key"):
        settings.Settings.from_mapping({"rerank_api_key": PLACEHOLDER, "rerank_api_key_variable": "API_KEY_OPENAI"})


def test_uninstall_removes_every_scopes_key_and_the_recorded_origins(host):
    env_path = host.root / "usr" / ".env"
    env_path.write_text(f"AUTH_LOGIN=admin\n{KEY_ENV}_BACKUP=keep-me\n")
    host.save_config({"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": GLOBAL_KEY})
    host.save_config({"rerank_endpoint": "http://127.0.0.1:8", "rerank_api_key": SCOPED_KEY}, project="alpha")
    host.save_config({"rerank_endpoint": "http://127.0.0.1:7", "rerank_api_key": "sk-profile-55555"}, profile="dev")
    origins = host.root / "usr" / "a0_reranker.key_origins.json"
    assert len(json.loads(origins.read_text())) == 3 and GLOBAL_KEY not in origins.read_text()

    host.call_hook("uninstall")

    assert env_path.read_text() == f"AUTH_LOGIN=admin\n{KEY_ENV}_BACKUP=keep-me\n"
    assert not origins.exists()
    assert [n for n in os.environ if n.startswith(KEY_ENV) and n != f"{KEY_ENV}_BACKUP"] == []


@pytest.mark.parametrize("how", ["start", "install"])
def test_a_key_saved_before_origins_were_recorded_is_bound_at_the_next_start(host, how):
    agent, _ = enabled_store(host)
    (host.root / "usr" / ".env").write_text(f"{KEY_ENV}={GLOBAL_KEY}\n")
    host.setenv(KEY_ENV, GLOBAL_KEY)
    with start("cohere", api_key=GLOBAL_KEY) as srv, start("cohere", api_key=GLOBAL_KEY) as other:
        host.set_config({**connection(srv), "rerank_api_key": PLACEHOLDER})  # an older version's Save
        host.init_a0() if how == "start" else host.call_hook("install")
        host.set_config({**saved(host), "rerank_endpoint": other.url})  # then edited by hand
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, QUESTION))
        assert other.requests and f"Bearer {GLOBAL_KEY}" not in bearers(other)
        host.set_config({**saved(host), "rerank_endpoint": srv.url})  # its own server still gets it
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, QUESTION))
    assert f"Bearer {GLOBAL_KEY}" in bearers(srv)
