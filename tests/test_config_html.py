"""The settings panel's field schema and markup against the settings they edit (no browser).

webui/a0-reranker-fields.json lists every setting once (group, label, help, control kind,
when it is shown); api/settings_fields.py serves it with each field's limits from
helpers/settings.py LIMITS; webui/config.html renders it with x-for, one control per kind.
These tests keep the three in step with default_config.yaml and LIMITS, so that adding a
setting is one entry in default_config.yaml, its limit in LIMITS and one schema entry. The
panel follows the host's conventions (a store module made with createStore, the store
gate, no inline Alpine.store).
"""

from __future__ import annotations

import asyncio
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from helpers.settings import LIMITS, SettingsError, coerce

REPO = Path(__file__).resolve().parents[1]
CONFIG_HTML = REPO / "webui" / "config.html"
STORE_JS = REPO / "webui" / "a0-reranker-store.js"
FIELDS_JSON = REPO / "webui" / "a0-reranker-fields.json"

DEFAULTS = yaml.safe_load((REPO / "default_config.yaml").read_text())
SCHEMA = json.loads(FIELDS_JSON.read_text())
GROUPS = SCHEMA["groups"]
FIELDS = {field["key"]: field for group in GROUPS for field in group["fields"]}

# control kind -> the LIMITS kinds it can edit
KINDS = {
    "toggle": {"bool"},
    "number": {"int", "float"},
    "text": {"str"},
    "textarea": {"str"},
    "secret": {"str"},
    "choice": {"choice"},
}
GROUP_ATTRS = {"key", "title", "description", "shown_when", "fields"}
FIELD_ATTRS = {
    "key",
    "kind",
    "label",
    "help",
    "help_off",
    "states",
    "placeholder",
    "option_labels",
    "wide",
    "active_when",
    "shown_when",
    "sent_to",
}
KIND_BRANCH = re.compile(r"field\.kind === '(\w+)'")
BINDING = "config[field.key]"


class Controls(HTMLParser):
    """Every input/select/textarea of config.html, with its attributes and the kind whose
    <template x-if="field.kind === '...'"> branch holds it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.templates: list[str] = []  # the x-if of each open <template>
        self.controls: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "template":
            self.templates.append(attributes.get("x-if") or "")
        elif tag in ("input", "select", "textarea"):
            kinds = [m.group(1) for t in self.templates if (m := KIND_BRANCH.fullmatch(t))]
            models = {name: value for name, value in attributes.items() if name.split(".")[0] == "x-model"}
            self.controls.append(
                {"tag": tag, "attrs": attributes, "models": models, "kind": kinds[-1] if kinds else None}
            )

    def handle_endtag(self, tag):
        if tag == "template":
            self.templates.pop()


def _controls() -> list[dict]:
    parser = Controls()
    parser.feed(CONFIG_HTML.read_text())
    return parser.controls


def _conditions():
    """(where, the field it belongs to, condition) for every shown_when / active_when."""
    for group in GROUPS:
        if "shown_when" in group:
            yield f"group {group['key']}", None, group["shown_when"]
        for field in group["fields"]:
            for rule in ("shown_when", "active_when"):
                if rule in field:
                    yield f"{field['key']}.{rule}", field["key"], field[rule]


# --- the schema against default_config.yaml and LIMITS ------------------------------------------


def test_schema_lists_every_setting_once():
    keys = [field["key"] for group in GROUPS for field in group["fields"]]
    doubled = sorted({key for key in keys if keys.count(key) > 1})
    assert not doubled, f"settings listed more than once: {doubled}"
    assert set(keys) == set(DEFAULTS), (
        f"missing from the schema: {sorted(set(DEFAULTS) - set(keys))}, "
        f"not settings: {sorted(set(keys) - set(DEFAULTS))}"
    )
    assert set(LIMITS) == set(DEFAULTS)


def test_groups_are_sections_with_titles():
    keys = [group["key"] for group in GROUPS]
    assert len(keys) == len(set(keys))
    for group in GROUPS:
        assert set(group) <= GROUP_ATTRS, f"group {group['key']}: unknown {set(group) - GROUP_ATTRS}"
        assert group["title"] and group["fields"], group["key"]
    assert "connection" in keys, "config.html puts Test connection under the 'connection' group"


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_each_field_has_label_help_and_a_control_for_its_type(key):
    field, limit = FIELDS[key], LIMITS[key]
    assert set(field) <= FIELD_ATTRS, f"{key}: unknown {set(field) - FIELD_ATTRS}"
    assert field["label"].strip(), key
    assert len(field["help"]) >= 30, f"{key}: no help text"
    assert field["kind"] in KINDS, f"{key}: unknown kind {field['kind']!r}"
    assert limit.kind in KINDS[field["kind"]], f"{key}: a {field['kind']} control cannot edit a {limit.kind}"
    if "sent_to" in field:  # the field whose server a stored key goes to (the panel's key hint)
        assert field["kind"] == "secret" and FIELDS[field["sent_to"]]["kind"] == "text", key
    if "states" in field or "help_off" in field:
        assert field["kind"] == "toggle", f"{key}: states / help_off belong to toggles"
    if "states" in field:
        assert len(field["states"]) == 2 and all(field["states"]), key
    if limit.kind == "choice":
        assert list(field.get("option_labels", {})) == list(limit.choices), (
            f"{key}: a label per choice, in LIMITS order"
        )
    else:
        assert "option_labels" not in field, key


def test_schema_states_no_limit():
    """min, max, step and the choices live in LIMITS only; the handler adds them."""
    for key, field in FIELDS.items():
        assert not {"min", "max", "step", "limit", "options", "choices", "nullable"} & set(field), key


@pytest.mark.parametrize("where,own_key,condition", list(_conditions()), ids=[c[0] for c in _conditions()])
def test_conditions_name_settings_and_values_they_can_take(where, own_key, condition):
    assert condition, f"{where}: empty condition"
    for key, wanted in condition.items():
        assert key in LIMITS and key != own_key, f"{where}: {key} is not another setting"
        if wanted is True:  # "on": the setting's truthiness
            continue
        try:
            assert coerce(key, wanted) == wanted, f"{where}: {key} never holds {wanted!r} exactly"
        except SettingsError as exc:
            pytest.fail(f"{where}: {exc}")


# --- the markup -------------------------------------------------------------------------------------


def test_template_has_one_branch_per_kind():
    branches = re.findall(r"""<template x-if="field\.kind === '(\w+)'">""", CONFIG_HTML.read_text())
    assert sorted(branches) == sorted(KINDS), branches


def test_every_control_is_bound_to_its_field():
    """Each kind's control binds config[field.key] and is named after it; numbers bind with
    x-model.number (the host saves strings otherwise) and take the served limits."""
    controls = [c for c in _controls() if c["models"]]
    assert {c["kind"] for c in controls} == set(KINDS)
    for control in controls:
        kind, attrs = control["kind"], control["attrs"]
        expected = "x-model.number" if kind == "number" else "x-model"
        assert control["models"] == {expected: BINDING}, f"{kind}: {control['models']}"
        assert attrs.get(":name") == "field.key", kind
        if kind == "number":
            assert attrs.get("type") == "number"
            assert (attrs[":min"], attrs[":max"], attrs[":step"]) == (
                "field.limit.min",
                "field.limit.max",
                "field.limit.step",
            )
        elif kind == "toggle":
            assert attrs.get("type") == "checkbox"
        elif kind == "secret":
            assert attrs.get("type") == "password"
        elif kind == "choice":
            assert control["tag"] == "select"
    unbound = [c for c in _controls() if not c["models"]]
    assert not unbound, f"controls that edit nothing: {unbound}"


def test_no_setting_is_named_in_the_browser_files():
    """The browser knows the settings only through the schema: adding one needs no HTML or JS."""
    for path in (CONFIG_HTML, STORE_JS):
        source = path.read_text()
        named = sorted(key for key in LIMITS if re.search(rf"\b{key}\b", source))
        assert not named, f"{path.name} names settings: {named}"


# --- the handler that serves the form ---------------------------------------------------------------


def _served(host) -> dict:
    response = asyncio.run(host.call_api("plugins/a0_reranker/settings_fields"))
    assert response.status_code == 200
    return response.get_json()


def test_handler_serves_the_schema_with_the_limits_of_settings_py(host):
    answer = _served(host)
    assert answer["ok"] is True
    assert [g["key"] for g in answer["groups"]] == [g["key"] for g in GROUPS]
    served = {field["key"]: field for group in answer["groups"] for field in group["fields"]}
    assert list(served) == list(FIELDS)
    for key, field in FIELDS.items():
        limit, out = LIMITS[key], served[key]
        shared = {name: value for name, value in field.items() if name != "option_labels"}
        assert {name: out[name] for name in shared} == shared, key
        assert out["limit"] == {
            "kind": limit.kind,
            "min": limit.low,
            "max": limit.high,
            "nullable": limit.nullable,
            "step": "1" if limit.kind == "int" else "any",
            "accepts": limit.describe(),
        }, key
        if limit.kind == "choice":
            assert out["options"] == [{"value": c, "label": field["option_labels"][c]} for c in limit.choices]
        else:
            assert "options" not in out
    for group, out in zip(GROUPS, answer["groups"]):
        assert {name: out[name] for name in group if name != "fields"} == {
            n: v for n, v in group.items() if n != "fields"
        }


def test_handler_answers_a_short_error_not_a_traceback(host, monkeypatch):
    """A schema entry LIMITS does not know (a half-added setting) gives a clear answer."""
    settings = host.import_plugin("helpers.settings")
    monkeypatch.delitem(settings.LIMITS, "rerank_timeout")
    answer = _served(host)
    assert answer == {"ok": False, "error": "settings form unavailable: KeyError"}


def test_defaults_fit_the_served_limits(host):
    for group in _served(host)["groups"]:
        for field in group["fields"]:
            limit, default = field["limit"], DEFAULTS[field["key"]]
            if limit["kind"] in ("int", "float") and default not in (None, ""):  # "" = off
                assert limit["min"] <= default <= limit["max"], field["key"]


# --- host conventions ---------------------------------------------------------------------------------


def test_host_conventions():
    html = CONFIG_HTML.read_text()
    store = STORE_JS.read_text()
    assert "Alpine.store" not in html, "no inline Alpine.store in config.html"
    assert "alpine:init" not in html and "alpine:init" not in store
    assert re.search(
        r'<head>.*<script type="module">\s*import \{ store \} from '
        r'"/plugins/a0_reranker/webui/a0-reranker-store\.js";\s*</script>.*</head>',
        html,
        re.S,
    )
    assert '<template x-if="$store.a0Reranker && config">' in html, "store gate missing"
    assert re.search(r'import \{ createStore \} from "/js/AlpineStore\.js"', store)
    assert re.search(r'createStore\("a0Reranker",', store)
    assert "Alpine.store" not in store
    # UI state stays out of `config` (the host saves all of it): the store writes config only
    # in the two key actions, which set the secret field itself
    writes = re.findall(r"config(?:\.\w+|\[[^\]]*\])\s*=(?!=)", store)
    assert writes == ["config[key] =", "config[key] ="], writes


def test_test_connection_call():
    store = STORE_JS.read_text()
    assert 'const PLUGIN_API = "/plugins/a0_reranker";' in store
    assert re.search(
        r'callApi\("test_connection", \{ config: form, context \}\)', store
    )  # context: the open chat (rerank_api utility)
    assert re.search(r'callApi\("settings_fields", \{\}\)', store)
    assert 'await import("/js/api.js")' in store
    assert 'await import("/components/notifications/notification-store.js")' in store
    assert "toastFrontendSuccess" in store and "toastFrontendError" in store
    assert "Test checks the values shown; press Save to keep them." in store
