"""What a Save and a chat's scope do to the state recall keeps: the settings a recall reads
follow the chat's project and agent profile at once (not after the cache's few seconds),
and a Save that changes the endpoint, key, model or API closes the circuit breaker the old
settings opened."""

from __future__ import annotations

import pytest

from tests.servers import start
from tests.test_recall_integration import QUESTION, enabled_store


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
