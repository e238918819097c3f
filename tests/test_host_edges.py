"""The host-facing edges: the settings hook keeps the key out of config.json, the status
tool answers for healthy / disabled / broken setups, the skill loads under the host's
rules, and hooks and extensions never raise into the host."""

import asyncio
import json
import socket

import pytest

from tests.servers import start

SECRET = "sk-test-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_save_moves_the_key_to_usr_env_and_coerces_values(host):
    path = host.save_config(
        {"rerank_endpoint": "http://127.0.0.1:9", "rerank_api_key": SECRET, "rerank_candidates": "30"}
    )
    saved = json.loads(path.read_text())
    assert SECRET not in path.read_text()
    assert saved["rerank_api_key"] == "************" and saved["rerank_candidates"] == 30
    assert f"A0_RERANKER_API_KEY={SECRET}" in (host.root / "usr" / ".env").read_text()
    settings_mod = host.import_plugin("helpers.settings")
    assert settings_mod.Settings.from_mapping(saved).api_key == SECRET  # the placeholder resolves to it
    # saving the placeholder again keeps the stored key; an emptied field forgets it
    host.save_config({**saved})
    assert f"A0_RERANKER_API_KEY={SECRET}" in (host.root / "usr" / ".env").read_text()
    host.save_config({**saved, "rerank_api_key": ""})
    assert SECRET not in (host.root / "usr" / ".env").read_text()


def test_save_refuses_a_bad_value_with_a_message_naming_the_setting(host):
    with pytest.raises(ValueError, match="rerank_timeout"):
        host.save_config({"rerank_timeout": "soon"})
    assert not host.config_path().exists()


def test_hooks_never_raise_even_when_the_host_is_broken(host, monkeypatch):
    import sys

    host.call_hook("install")
    monkeypatch.setitem(sys.modules, "plugins._memory.helpers.memory", None)  # importing it fails
    assert host.call_hook("install") is None
    assert host.call_hook("uninstall") is None
    assert host.call_hook("pre_update") is None


def test_the_start_extension_wraps_and_never_raises(host, monkeypatch):
    host.init_a0()
    from plugins._memory.helpers.memory import Memory

    assert getattr(Memory.__dict__["search_similarity_threshold"], "__a0_reranker_wrapper__", False)
    import sys

    monkeypatch.setitem(sys.modules, "plugins._memory.helpers.memory", None)
    host.init_a0()  # a broken host: still no exception out of start-up


async def _status(host, agent, probe=False):
    tool = agent.get_tool(name="reranker_status", method=None, args={"probe": probe}, message="", loop_data=None)
    assert type(tool).__name__ == "RerankerStatus"  # found in the plugin's tools/, not "unknown"
    return (await tool.execute(probe=probe)).message


def test_status_tool_healthy_disabled_and_broken(host):
    async def main():
        agent = host.agent()
        await host.memory(agent)
        host.call_hook("install")
        with start("tei19") as srv:
            host.set_config({"rerank_endpoint": srv.url})
            healthy = await _status(host, agent, probe=True)
            assert healthy.startswith("WORKING: tei /rerank"), healthy
            assert srv.url in healthy and "wrap live: True" in healthy
        host.set_config({"rerank_endpoint": f"http://127.0.0.1:{free_port()}", "rerank_timeout": 1})
        broken = await _status(host, agent, probe=True)
        assert broken.startswith("RERANKER NOT WORKING (recall uses built-in fusion meanwhile): cannot reach"), broken
        host.set_config({"rerank_timeout": "abc"})
        invalid = await _status(host, agent)
        assert invalid.startswith("NOT WORKING: a setting is invalid") and "rerank_timeout" in invalid
        host.set_config({"rerank_endpoint": ""})
        fusion = await _status(host, agent, probe=True)
        assert fusion.startswith("WORKING: built-in fusion, no reranker server; nothing to probe"), fusion
        host.toggle(False)
        from helpers import plugins

        assert "a0_reranker" not in plugins.get_enabled_plugins(agent)
        # a disabled plugin's tools are not loaded by the host at all; the module itself says OFF
        status = host.import_plugin("helpers.status_report")
        assert host.import_plugin("helpers.vocabulary").status_text(status.collect(agent)).startswith("OFF")

    asyncio.run(main())


def test_the_status_tools_probe_waits_no_longer_than_test_connection(host, monkeypatch):
    """A hung server with rerank_timeout 120 held the agent's turn for the whole timeout
    (and its calibration after); the tool waits what Test connection waits (ASKED_WAIT_S,
    made short here) and says so."""
    monkeypatch.setattr(host.import_plugin("helpers.scoring.async_api"), "ASKED_WAIT_S", 0.5)

    async def main():
        agent = host.agent()
        await host.memory(agent)
        host.call_hook("install")
        with start("tei19") as srv:
            srv.set_faults(delay=30)
            host.set_config({"rerank_endpoint": srv.url, "rerank_timeout": 120})
            text = await _status(host, agent, probe=True)
            srv.set_faults()
        assert text.startswith("RERANKER NOT WORKING (recall uses built-in fusion meanwhile): the test took longer"), (
            text
        )

    asyncio.run(main())


def test_status_output_never_holds_the_key(host):
    async def main():
        agent = host.agent()
        host.setenv("A0_RERANKER_API_KEY", SECRET)
        with start("cohere", api_key="other") as srv:
            host.set_config(
                {"rerank_endpoint": srv.url, "rerank_api_key": "************", "rerank_model": "rerank-v3.5"}
            )
            text = await _status(host, agent, probe=True)
        assert SECRET not in text and "api key: set" in text
        response = await host.call_api("plugins/a0_reranker/status", {})
        assert SECRET not in json.dumps(response.get_json())

    asyncio.run(main())


def test_the_skill_loads_under_the_hosts_rules(host):
    skills = host.skills(host.agent())
    names = [getattr(s, "name", None) or s.get("name") for s in skills]
    assert "reranker-status" in names


def test_the_tool_prompt_is_where_the_host_collects_it(host):
    prompt = host.plugin_dir / "prompts" / "agent.system.tool.reranker_status.md"
    assert "reranker_status" in prompt.read_text()


def test_test_connection_api_probes_unsaved_values_and_answers_json(host):
    async def main():
        with start("tei19") as srv:
            response = await host.call_api(
                "plugins/a0_reranker/test_connection", {"config": {"rerank_endpoint": srv.url}}
            )
            body = response.get_json()
            assert response.status_code == 200 and body["ok"] and body["report"]["route"] == "tei /rerank"
            assert "rerank_endpoint" in body["unsaved"] and "press Save" in body["note"]
        dead = await host.call_api(
            "plugins/a0_reranker/test_connection", {"config": {"rerank_endpoint": f"http://127.0.0.1:{free_port()}"}}
        )
        assert dead.status_code == 200 and dead.get_json()["report"]["verdict"] == "unreachable"
        bad = await host.call_api("plugins/a0_reranker/test_connection", {"config": {"rerank_candidates": "lots"}})
        assert bad.status_code == 200 and "rerank_candidates" in bad.get_json()["report"]["reason"]
        nothing = await host.call_api("plugins/a0_reranker/test_connection", {})
        assert nothing.status_code == 200 and not nothing.get_json()["ok"]

    asyncio.run(main())
