"""The settings panel's markup against the settings it edits (no browser).

Every key of default_config.yaml has a control bound to ``config.<key>``; numbers are bound
with ``x-model.number`` and carry the min/max of ``helpers/settings.py`` LIMITS (the same
numbers the store module uses for its messages); the panel follows the host's conventions
(a store module made with createStore, the store gate, no inline Alpine.store).
"""

from __future__ import annotations

import ast
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG_HTML = REPO / "webui" / "config.html"
STORE_JS = REPO / "webui" / "a0-reranker-store.js"
BOUND = re.compile(r"^config\.(\w+)$")


def _limits() -> dict[str, dict]:
    """helpers/settings.py LIMITS, read from the source (the plugin's top-level `helpers`
    package is not importable by that name next to the stand-in host's)."""
    tree = ast.parse((REPO / "helpers" / "settings.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "LIMITS":
            table = node.value
            break
    else:
        raise AssertionError("LIMITS not found in helpers/settings.py")
    out = {}
    for key_node, call in zip(table.keys, table.values):
        key = ast.literal_eval(key_node)
        args = list(call.args)
        kind = ast.literal_eval(args[0])
        entry = {"kind": kind, "low": None, "high": None, "nullable": False}
        if len(args) > 1:
            entry["low"] = ast.literal_eval(args[1])
        if len(args) > 2:
            entry["high"] = ast.literal_eval(args[2])
        for kw in call.keywords:
            if kw.arg in ("low", "high", "nullable"):
                entry[kw.arg] = ast.literal_eval(kw.value)
        out[key] = entry
    return out


LIMITS = _limits()
DEFAULTS = yaml.safe_load((REPO / "default_config.yaml").read_text())
NUMERIC = {k for k, v in LIMITS.items() if v["kind"] in ("int", "float")}


class Controls(HTMLParser):
    """Every input/select/textarea, with its attributes and the x-model binding."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.controls: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("input", "select", "textarea"):
            return
        attributes = dict(attrs)
        models = {name: value for name, value in attributes.items() if name.split(".")[0] == "x-model"}
        self.controls.append({"tag": tag, "attrs": attributes, "models": models})


def _controls() -> list[dict]:
    parser = Controls()
    parser.feed(CONFIG_HTML.read_text())
    return parser.controls


def _bound(controls) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for control in controls:
        for directive, expression in control["models"].items():
            match = BOUND.match(expression.strip())
            if match:
                out.setdefault(match.group(1), []).append({**control, "directive": directive})
    return out


def test_limits_cover_every_default():
    assert set(LIMITS) == set(DEFAULTS)


def test_every_setting_has_a_bound_control():
    bound = _bound(_controls())
    missing = sorted(set(DEFAULTS) - set(bound))
    assert not missing, f"settings without a control bound to config.<key>: {missing}"
    unknown = sorted(set(bound) - set(DEFAULTS))
    assert not unknown, f"controls bound to keys that are not settings: {unknown}"
    doubled = sorted(k for k, v in bound.items() if len(v) > 1)
    assert not doubled, f"settings bound by more than one control: {doubled}"


@pytest.mark.parametrize("key", sorted(NUMERIC))
def test_numeric_controls_match_limits(key):
    (control,) = _bound(_controls())[key]
    attrs = control["attrs"]
    limit = LIMITS[key]
    assert control["tag"] == "input" and attrs.get("type") == "number", key
    assert control["directive"] == "x-model.number", f"{key}: numbers must be bound with x-model.number"
    assert float(attrs["min"]) == limit["low"], f"{key}: min {attrs['min']} != {limit['low']}"
    assert float(attrs["max"]) == limit["high"], f"{key}: max {attrs['max']} != {limit['high']}"
    step = attrs.get("step")
    assert step, f"{key}: no step"
    if limit["kind"] == "int":
        assert step == "1", f"{key}: whole numbers need step=1"
    # the default must be a valid value of the field (the browser flags step mismatches)
    default = DEFAULTS[key]
    if default is not None and step != "any":
        steps = (default - limit["low"]) / float(step)
        assert abs(steps - round(steps)) < 1e-9, f"{key}: default {default} is off the step {step}"


def test_other_controls_match_their_kind():
    bound = _bound(_controls())
    for key, limit in LIMITS.items():
        (control,) = bound[key]
        if limit["kind"] == "bool":
            assert control["attrs"].get("type") == "checkbox", key
        elif limit["kind"] == "choice":
            assert control["tag"] == "select", key
        elif limit["kind"] == "str":
            assert control["tag"] in ("input", "textarea"), key
    assert bound["rerank_api_key"][0]["attrs"].get("type") == "password"


def test_choice_options_match_settings():
    html = CONFIG_HTML.read_text()
    tree = ast.parse((REPO / "helpers" / "settings.py").read_text())
    tuples = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in ("APIS", "DEVICES")}
    for key, choices in (("rerank_api", tuples["APIS"]), ("rerank_local_device", tuples["DEVICES"])):
        select = re.search(rf'<select name="{key}".*?</select>', html, re.S).group(0)
        options = tuple(re.findall(r'<option value="([^"]*)"', select))
        assert sorted(options) == sorted(choices), key


def test_store_limits_match_settings():
    """The store's range messages use the same numbers as the form and the server."""
    source = STORE_JS.read_text()
    block = re.search(r"export const LIMITS = \{(.*?)\n\};", source, re.S).group(1)
    store = {}
    for key, body in re.findall(r"(\w+): \{([^}]*)\}", block):
        entry = dict(re.findall(r"(\w+): ([^,]+)", body))
        store[key] = {
            "kind": json.loads(entry["kind"]),
            "low": float(entry["min"]),
            "high": float(entry["max"]),
            "nullable": entry.get("nullable", "false").strip() == "true",
        }
    assert set(store) == NUMERIC
    for key in NUMERIC:
        assert store[key] == {k: LIMITS[key][k] for k in ("kind", "low", "high", "nullable")}, key


def test_host_conventions():
    html = CONFIG_HTML.read_text()
    store = STORE_JS.read_text()
    assert "Alpine.store" not in html, "no inline Alpine.store in config.html"
    assert "alpine:init" not in html and "alpine:init" not in store
    assert re.search(r'<head>.*<script type="module">\s*import \{ store \} from '
                     r'"/plugins/a0_reranker/webui/a0-reranker-store\.js";\s*</script>.*</head>', html, re.S)
    assert '<template x-if="$store.a0Reranker">' in html, "store gate missing"
    assert re.search(r'import \{ createStore \} from "/js/AlpineStore\.js"', store)
    assert re.search(r'createStore\("a0Reranker",', store)
    assert "Alpine.store" not in store
    # UI state stays out of `config` (the host saves all of it): the store never writes config.x
    # except the key actions, which set the key field itself
    writes = set(re.findall(r"config\.(\w+)\s*=(?!=)", store))
    assert writes <= {"rerank_api_key"}, writes


def test_test_connection_call():
    store = STORE_JS.read_text()
    assert 'const PLUGIN_API = "/plugins/a0_reranker";' in store
    assert re.search(r'callApi\("test_connection", \{ config: form \}\)', store)
    assert 'await import("/js/api.js")' in store
    assert 'await import("/components/notifications/notification-store.js")' in store
    assert "toastFrontendSuccess" in store and "toastFrontendError" in store
    assert "Test checks the values shown; press Save to keep them." in store


def test_every_control_has_help_text():
    """Each setting's field has a title and a one-line description."""
    html = CONFIG_HTML.read_text()
    for key in DEFAULTS:
        at = re.search(rf'x-model(\.number)?="config\.{key}"', html).start()
        field_start = max(html.rfind('<div class="field">', 0, at), html.rfind('<div class="field ', 0, at),
                          html.rfind('<div class="field" ', 0, at))
        block = html[field_start:at]
        assert 'class="field-title"' in block, key
        description = re.search(r'class="field-description"[^>]*>([^<]{30,})<', block)
        assert description, f"{key}: no help text"
