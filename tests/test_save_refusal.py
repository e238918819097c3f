"""A Save the plugin refuses says why in Agent Zero's settings modal.

The host's modal (plugin-settings-store.js) reads the Save's answer as JSON and shows its
``error``; an exception in the save hook reaches it as the ApiHandler's 500 text, which it
shows as "Save failed" and nothing more. The plugin's end extension of the host's
``@extensible`` ``Plugins._save_config`` answers its own hook's refusals as
``{"ok": false, "error": why}`` instead (seen in the real web UI at agent0ai/agent-zero
2d95cd9f: a stored key kept for another server was refused with only "Save failed").
Driven through the stand-in host's api/plugins.py, as the modal calls it."""

from __future__ import annotations

import json
import os

import pytest

STORED = "sk-stored-key-0123456789"


def save(host, settings: dict, plugin: str = "a0_reranker"):
    answer = host.run(host.call_api("plugins", {"action": "save_config", "plugin_name": plugin, "settings": settings}))
    return answer.status_code, answer.get_data(as_text=True)


def test_a_refused_value_is_answered_with_why_and_nothing_is_saved(host):
    status, body = save(host, {"rerank_timeout": 5})
    assert (status, json.loads(body)) == (200, {"ok": True})
    before = host.config_path().read_text()

    status, body = save(host, {"rerank_timeout": 999})
    answer = json.loads(body)
    assert status == 200 and answer["ok"] is False
    assert answer["error"].startswith("setting 'rerank_timeout': ")
    assert "Traceback" not in answer["error"]
    assert host.config_path().read_text() == before


def test_a_key_kept_for_another_server_is_answered_with_why_never_the_key(host):
    status, body = save(host, {"rerank_endpoint": "http://127.0.0.1:8080", "rerank_api_key": STORED})
    assert json.loads(body) == {"ok": True}
    placeholder = json.loads(host.config_path().read_text())["rerank_api_key"]

    # the endpoint changed and the key field still holds the placeholder: a normal user's Save
    status, body = save(host, {"rerank_endpoint": "http://127.0.0.1:8081", "rerank_api_key": placeholder})
    answer = json.loads(body)
    assert status == 200 and answer["ok"] is False
    assert answer["error"].startswith("setting 'rerank_api_key': ")
    assert "127.0.0.1:8081" in answer["error"]
    assert STORED not in body and "sk-stored" not in body
    assert json.loads(host.config_path().read_text())["rerank_endpoint"] == "http://127.0.0.1:8080"


def test_other_failures_and_other_plugins_are_left_as_the_host_answers_them(host):
    host.mount_plugin(
        "other_plugin",
        {"hooks.py": "def save_plugin_config(settings=None, **kwargs):\n    raise ValueError('other says no')\n"},
    )
    status, body = save(host, {"x": 1}, plugin="other_plugin")
    assert status == 500 and "other says no" in body  # the host's own 500 text

    # this plugin's hook failing otherwise than by a refusal: also the host's 500
    config_store = host.import_plugin("helpers.config_store")
    original = config_store.prepare_for_save
    config_store.prepare_for_save = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("disk full"))
    try:
        status, body = save(host, {"rerank_timeout": 5})
    finally:
        config_store.prepare_for_save = original
    assert status == 500 and "disk full" in body


def test_the_extension_never_raises_on_what_it_is_handed(host):
    from helpers.extension import call_extensions_sync

    point = "_functions/plugins/Plugins/_save_config/end"
    for data in ({}, {"args": None, "exception": None}, {"args": (None, "not a dict")}, {"args": (None, {})}):
        call_extensions_sync(point, agent=None, data=data)
    refused = host.import_plugin("helpers.errors").SaveRefused("setting 'x': no")
    data = {"args": (None,), "kwargs": {"input": {"plugin_name": "a0_reranker"}}, "exception": refused}
    call_extensions_sync(point, agent=None, data=data)
    assert data == {
        "args": (None,),
        "kwargs": {"input": {"plugin_name": "a0_reranker"}},
        "exception": None,
        "result": {"ok": False, "error": "setting 'x': no"},
    }


# --- the same refusals, asked before Save (api/settings_check.py) -----------------------------


def check(host, form) -> dict:
    answer = host.run(host.call_api("plugins/a0_reranker/settings_check", {"config": form}))
    assert answer.status_code == 200
    return answer.get_json()


def _tree(root) -> dict:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_the_panel_learns_before_save_what_save_refuses_in_the_same_words(host):
    """The refusals the browser cannot judge itself: an endpoint of another scheme, a log
    path out of its folder, a key with a space, one too long. Each is named with the words
    Save uses, and the check stores nothing: not the form, not the typed key, no origin."""
    usr = host.config_path().parents[2]  # usr/: the configs, .env and the keys' origins
    before = _tree(usr)
    typed_key = "sk-typed key-9876"
    for setting, value in [
        ("rerank_endpoint", "ftp://127.0.0.1:8080/rerank"),
        ("rerank_shadow_log", "../../etc/recall.jsonl"),
        ("rerank_api_key", typed_key),
        ("rerank_api_key", "k" * 5_000),
        ("rerank_timeout", 999),
    ]:
        form = {"rerank_endpoint": "http://127.0.0.1:8080", setting: value}
        answer = check(host, form)
        status, body = save(host, form)
        assert answer == {"ok": False, "setting": setting, "error": json.loads(body)["error"]}
        assert answer["error"].startswith(f"setting '{setting}': ")
        assert typed_key not in json.dumps(answer) and "k" * 100 not in json.dumps(answer)
    assert _tree(usr) == before


def test_a_form_save_takes_is_answered_ok_and_nothing_is_stored(host):
    usr = host.config_path().parents[2]
    before = _tree(usr)
    form = {"rerank_endpoint": "https://api.example.com/v2/rerank", "rerank_api_key": "sk-new-key-123"}
    assert check(host, form) == {"ok": True}
    assert check(host, {}) == {"ok": True}
    assert _tree(usr) == before
    assert "sk-new-key-123" not in os.environ.values()


def test_a_hand_made_request_is_answered_naming_what_is_wrong(host):
    for form in (None, [], "rerank_endpoint=ftp://x", 7):
        answer = check(host, form)
        assert answer["ok"] is False and answer["setting"] == "config", answer


KEY = "sk-pasted-twice-0123456789"
KEY_ELSEWHERE = {
    "the endpoint's password": ("rerank_endpoint", f"http://user:{KEY}@127.0.0.1:8080"),
    "the endpoint's user, percent-encoded": ("rerank_endpoint", "http://sk%2Dpasted%2Dtwice%2D0123456789@127.0.0.1:1"),
    "the endpoint's query": ("rerank_endpoint", f"http://127.0.0.1:8080/rerank?key={KEY}"),
    "the endpoint, nothing else": ("rerank_endpoint", KEY),
    "the model, as a header": ("rerank_model", f"Bearer {KEY}"),
    "the instruction": ("rerank_instruction", f"use {KEY.upper()} please"),
    "the log's path": ("rerank_shadow_log", f"usr/{KEY}.jsonl"),
}


@pytest.mark.parametrize("setting, value", KEY_ELSEWHERE.values(), ids=KEY_ELSEWHERE.keys())
def test_the_key_pasted_into_another_field_is_refused_there_and_never_quoted(host, setting, value):
    """Typed beside the key, or with the key stored from an earlier Save: another field holding
    it would be saved to config.json and shown wherever that field is (the status tool shows
    the model). Save, the panel's check and Test connection name the field and quote nothing."""
    usr = host.config_path().parents[2]
    for key_field in (KEY, None):  # typed now; then the one stored by the first Save below
        if key_field is None:
            assert save(host, {"rerank_api_key": KEY})[0] == 200
            key_field = "************"  # the placeholder: the stored key
        form = {"rerank_api_key": key_field, setting: value}
        before = _tree(usr)
        answers = [
            json.loads(save(host, form)[1]),
            check(host, form),
            host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": form})).get_json(),
        ]
        for answer in answers:
            assert f"setting '{setting}': holds the API key" in json.dumps(answer), answer
            assert "pasted-twice" not in json.dumps(answer).lower()
        assert _tree(usr) == before


@pytest.mark.parametrize(
    "scope",
    [
        {"agent_profile": "../../../../escaped"},
        {"project_name": "..", "agent_profile": "agent0"},
        {"project_name": "a/b"},
        {"agent_profile": "a\\b"},
        {"project_name": "p\nq"},
        {"agent_profile": "p" * 256},
    ],
    ids=["profile climbing out", "project '..'", "a slash", "a backslash", "a line break", "longer than a file name"],
)
def test_a_save_whose_scope_names_no_folder_is_refused_and_writes_nothing(host, scope):
    """The host builds config.json's path from the scope's names as they come; the plugin's
    hook is the one place that can stop ../../ from writing outside Agent Zero."""
    outside = host.root.parent
    before = sorted(p for p in outside.rglob("config.json"))
    answer = host.run(
        host.call_api(
            "plugins",
            {"action": "save_config", "plugin_name": "a0_reranker", "settings": {"rerank_timeout": 5}, **scope},
        )
    )
    body = answer.get_json()
    assert body["ok"] is False and "is not a folder name: nothing was saved" in body["error"], body
    assert sorted(p for p in outside.rglob("config.json")) == before
