"""What a Save and a chat's scope do to the state recall keeps: the settings a recall reads
follow the chat's project and agent profile at once (not after the cache's few seconds),
and a Save that changes the endpoint, key, model or API closes the circuit breaker the old
settings opened."""

from __future__ import annotations

import json

import pytest

from tests.servers import start
from tests.host.recall import QUESTION, enabled_store


def rerank_calls(srv) -> int:
    return sum(1 for r in srv.requests if r.path.endswith("rerank"))


# --- the settings cache follows the chat's project -------------------------------------------


def test_a_chat_moved_to_another_project_uses_that_projects_settings_at_once(host):
    wrapper = host.import_plugin("helpers.recall.wrapper")
    host.toggle(True)
    host.set_config({"rerank_endpoint": "http://127.0.0.1:1001"}, project="alpha", profile="agent0")
    host.set_config({"rerank_endpoint": "http://127.0.0.1:1002"}, project="beta", profile="agent0")
    agent = host.agent(project="alpha")
    host.agent(project="beta")  # its folder exists
    assert wrapper.agent_settings(agent).endpoint == "http://127.0.0.1:1001"

    agent.context.set_data("project", "beta")  # the chat moved to another project
    assert wrapper.agent_settings(agent).endpoint == "http://127.0.0.1:1002"
    agent.context.set_data("project", None)  # and out of every project: the global settings
    assert wrapper.agent_settings(agent).endpoint == ""


def test_an_agent_profile_change_uses_that_profiles_settings_at_once(host):
    wrapper = host.import_plugin("helpers.recall.wrapper")
    host.toggle(True)
    host.set_config({"rerank_endpoint": "http://127.0.0.1:1003"}, profile="agent0")
    host.set_config({"rerank_endpoint": "http://127.0.0.1:1004"}, profile="researcher")
    agent = host.agent(profile="agent0")
    assert wrapper.agent_settings(agent).endpoint == "http://127.0.0.1:1003"
    agent.config.profile = "researcher"
    assert wrapper.agent_settings(agent).endpoint == "http://127.0.0.1:1004"


# --- a Save closes the breaker the old settings opened ----------------------------------------

RIGHT = "sk-right-0123456789"


def open_breaker_with_a_wrong_key(host, agent, srv):
    host.save_config(
        {
            "rerank_endpoint": srv.url,
            "rerank_model": "rerank-v3.5",
            "rerank_cache": False,
            "rerank_api_key": "sk-wrong-0123456789",
            "rerank_breaker_failures": 1,
            "rerank_breaker_cooldown": 3600,
        }
    )
    host.run(host.recall(agent, QUESTION))
    breaker = host.import_plugin("helpers.scoring.breaker").BREAKER
    assert any(state["open_for_s"] > 0 for state in breaker.snapshot().values())
    srv.clear()
    host.run(host.recall(agent, QUESTION))
    assert rerank_calls(srv) == 0  # skipped: the breaker is open


@pytest.mark.parametrize(
    "change",
    [
        {"rerank_api_key": RIGHT},
        {"rerank_model": "rerank-english-v3.0"},
        {"rerank_api": "rerank"},
    ],
)
def test_a_save_that_changes_key_model_or_api_closes_the_breaker(host, change):
    agent, _ = enabled_store(host)
    with start("cohere", api_key=RIGHT) as srv:
        open_breaker_with_a_wrong_key(host, agent, srv)
        saved = host.save_config({**_saved(host), **change})
        if "rerank_api_key" not in change:  # the stored key is the wrong one: type the right one too
            host.save_config({**_saved(host, saved), "rerank_api_key": RIGHT})
        srv.clear()
        host.run(host.recall(agent, QUESTION))
        assert rerank_calls(srv) >= 1  # asked again at once, not after the cool-down


def test_a_save_that_changes_nothing_the_server_sees_keeps_the_breaker_open(host):
    agent, _ = enabled_store(host)
    with start("cohere", api_key=RIGHT) as srv:
        open_breaker_with_a_wrong_key(host, agent, srv)
        host.save_config({**_saved(host), "rerank_candidates": 25})
        srv.clear()
        host.run(host.recall(agent, QUESTION))
        assert rerank_calls(srv) == 0


def test_a_save_that_changes_the_endpoint_closes_the_old_endpoints_breaker(host):
    agent, _ = enabled_store(host)
    with start("cohere", api_key=RIGHT) as srv, start("cohere", api_key=RIGHT) as other:
        open_breaker_with_a_wrong_key(host, agent, srv)
        host.save_config({**_saved(host), "rerank_endpoint": other.url, "rerank_api_key": RIGHT})
        breaker = host.import_plugin("helpers.scoring.breaker").BREAKER
        assert not any(state["open_for_s"] > 0 for state in breaker.snapshot().values())


def _saved(host, path=None) -> dict:
    import json

    return json.loads((path or host.config_path()).read_text())


@pytest.mark.parametrize(
    "settings, named",
    [
        (["rerank_endpoint"], "config"),  # before: AttributeError out of Save, a 500 with its traceback
        ("rerank_endpoint=http://x", "config"),
        ({"rerank_api_key": float("nan")}, "rerank_api_key"),  # before: saved as the key "nan"
        ({"rerank_api_key": 1e20}, "rerank_api_key"),  # before: the key "1e+20"
        ({"rerank_model": "abc\x00def"}, "rerank_model"),  # before: saved, then sent in every request body
        ({"rerank_model": "abc\r\nX-Evil: 1"}, "rerank_model"),
        ({"rerank_local_model": "cross-encoder/x\x1b[2J"}, "rerank_local_model"),
        ({"rerank_instruction": "\x00" * 10}, "rerank_instruction"),
    ],
    ids=[
        "a list",
        "a string",
        "NaN key",
        "number key",
        "NUL model",
        "CRLF model",
        "escape local model",
        "NUL instruction",
    ],
)
def test_hostile_shapes_at_save_are_refused_naming_the_setting_and_nothing_is_written(host, settings, named):
    with pytest.raises(ValueError, match=named):
        host.save_config(settings)
    assert not host.config_path().exists()


def test_an_instruction_may_span_lines(host):
    host.save_config({"rerank_instruction": "Given a question,\n\tfind the memory that answers it"})
    assert "\n\tfind" in json.loads(host.config_path().read_text())["rerank_instruction"]


# --- Agent Zero's env defaults (A0_SET_a0_reranker__<key>) ----------------------------------


def test_every_default_is_of_a_kind_agent_zeros_env_defaults_can_set():
    """The host converts an A0_SET_ value to the default's type: a null default cannot be
    set at all (the host warns and keeps it), and a list would be split into characters."""
    import yaml

    from tests.host.harness import REPO_ROOT

    defaults = yaml.safe_load((REPO_ROOT / "default_config.yaml").read_text())
    unsettable = {k: v for k, v in defaults.items() if not isinstance(v, (bool, int, float, str))}
    assert not unsettable


@pytest.mark.parametrize("value, expected", [("0.5", 0.5), ("-2", -2.0), ("", None), ("  ", None)])
def test_the_minimum_score_can_be_set_by_an_env_default(host, monkeypatch, value, expected):
    """A Docker user configures by environment: with no config.json saved, the host applies
    A0_SET_a0_reranker__rerank_min_score to the defaults, and the plugin reads it."""
    wrapper = host.import_plugin("helpers.recall.wrapper")
    host.toggle(True)
    monkeypatch.setenv("A0_SET_a0_reranker__rerank_min_score", value)
    assert wrapper.agent_settings(host.agent()).min_score == expected
