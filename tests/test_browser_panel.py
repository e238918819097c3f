"""The settings panel in a real browser: Debian's headless Chromium, driven by Playwright,
on the harness that reproduces Agent Zero's settings modal (tests/browser/harness.py),
with the REAL api/*.py handlers behind it and wire-faithful reranker servers on loopback.

Every case types into the form, presses Test connection and reads what a user would see:
the verdict, the route, the Qwen3-template line and the toast. The form itself is driven
from its field schema (webui/a0-reranker-fields.json, limits from helpers/settings.py):
every field renders, typing into each sends the right type, and the shown/greyed rules hold. Screenshots go to
test-output/screenshots/<case>.png. The stored API key (A0_RERANKER_API_KEY in the
handler process; the saved config holds only the placeholder) must never reach the
browser: every response body is checked for it.
"""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.timeout(180), pytest.mark.browser]

if os.environ.get("A0_RERANKER_SKIP_BROWSER") == "1":  # the unit lane: Playwright not even imported
    pytest.skip("browser tests skipped (A0_RERANKER_SKIP_BROWSER=1)", allow_module_level=True)
try:
    import playwright.sync_api as playwright_api
except ImportError:  # a missing install step must not pass as a skip
    raise ImportError(
        "the browser tests need Playwright for Python: pip install -r requirements-test.txt "
        "(or set A0_RERANKER_SKIP_BROWSER=1 to skip them)"
    ) from None

from helpers.settings import LIMITS  # noqa: E402
from tests.browser import alpine, docs_shots, harness  # noqa: E402
from tests.servers import start as start_server  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "test-output" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_TIMEOUT_MS = 15_000

PLACEHOLDER = "************"
STORED_KEY = "stored-secret-key-123"
RIGHT_KEY = "right-key"
QWEN3 = "Qwen/Qwen3-Reranker-0.6B"

expect = playwright_api.expect
expect.set_options(timeout=PAGE_TIMEOUT_MS)

# the panel's field schema: [(group, field)] in display order, and each field by key
SCHEMA_GROUPS = json.loads((REPO / "webui" / "a0-reranker-fields.json").read_text())["groups"]
SCHEMA_FIELDS = [(group, field) for group in SCHEMA_GROUPS for field in group["fields"]]
FIELD = {field["key"]: field for _, field in SCHEMA_FIELDS}


def saved_config() -> dict:
    """What Save left in config.json: the defaults, with a key stored (placeholder only)."""
    config = yaml.safe_load((REPO / "default_config.yaml").read_text())
    config["rerank_api_key"] = PLACEHOLDER
    return config


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alpine_js():
    try:
        return alpine.ensure()
    except alpine.AlpineUnavailable as exc:
        if os.environ.get("A0_RERANKER_SKIP_BROWSER") == "1":
            pytest.skip(f"Alpine.js unavailable: {exc}")
        pytest.fail(f"Alpine.js unavailable: {exc}")


@pytest.fixture(scope="module")
def servers():
    with (
        start_server("tei19") as tei,
        start_server("vllm013", model=QWEN3) as vllm,
        start_server("cohere", api_key=RIGHT_KEY) as cohere,
    ):
        yield {"tei19": tei, "vllm013": vllm, "cohere": cohere}


@pytest.fixture(scope="module")
def site(tmp_path_factory, alpine_js):
    work = tmp_path_factory.mktemp("browser-harness")
    with harness.start(work, saved_config(), env={"A0_RERANKER_API_KEY": STORED_KEY}, alpine_js=alpine_js) as h:
        yield h


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        message = "Debian's Chromium is not installed: apt-get install -y chromium"
        if os.environ.get("A0_RERANKER_SKIP_BROWSER") == "1":
            pytest.skip(message)
        pytest.fail(message + " (or set A0_RERANKER_SKIP_BROWSER=1 to skip the browser tests)")
    with playwright_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=PAGE_TIMEOUT_MS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="session", autouse=True)
def _screenshot_dir():
    SHOTS.mkdir(parents=True, exist_ok=True)


class Panel:
    """One open settings modal, with every response the browser received."""

    def __init__(self, page, site):
        self.page = page
        self.site = site
        self.responses = []
        self.errors: list[str] = []
        self.console: list[str] = []
        page.on("response", lambda response: self.responses.append(response))
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))

    def open(self, theme: str = "dark") -> "Panel":
        # toast_scale keeps toasts up long enough to be asserted and photographed
        self.page.goto(f"{self.site.url}/?theme={theme}&toast_scale=5")
        try:
            expect(self.test_button).to_be_visible()
            expect(self.page.get_by_test_id("status-enabled")).to_be_visible()  # status loaded on open
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\nconsole: {self.console}\nerrors: {self.errors}\n"
                f"responses: {[(r.status, r.url) for r in self.responses]}\n"
                f"harness log: {self.site.log()[-3000:]}"
            ) from None
        return self

    @property
    def test_button(self):
        return self.page.get_by_test_id("test-connection")

    def field(self, key: str):
        return self.page.locator(f'[name="{key}"]')

    def row(self, key: str):
        """A field's whole row: label, help and control."""
        return self.page.locator(f'.field[data-field="{key}"]')

    def set(self, key: str, value) -> None:
        """Give a setting `value` the way a user would, through its control."""
        kind, control = FIELD[key]["kind"], self.field(key)
        if kind == "toggle":
            if control.is_checked() != bool(value):
                self.page.locator(f'label:has(input[name="{key}"])').click()
        elif kind == "choice":
            control.select_option(value)
        else:
            control.fill("" if value is None else str(value))

    def config(self) -> dict:
        """The live `config` object of the modal (what the host's Save would send)."""
        return self.page.evaluate(
            "() => JSON.parse(JSON.stringify(Alpine.$data(document.querySelector('#plugin-settings-modal > "
            "[x-data]')).config))"
        )

    def run_test(self):
        self.test_button.click()
        verdict = self.page.get_by_test_id("verdict")
        expect(verdict).to_be_visible()
        expect(self.test_button).to_have_text("Test connection")
        expect(self.test_button).to_be_enabled()
        return verdict

    def toast(self, kind: str):
        return self.page.locator(f"#toasts .toast.{kind}")

    def shot(self, case: str) -> Path:
        self.page.get_by_test_id("test-report").scroll_into_view_if_needed()
        path = SHOTS / f"{case}.png"
        path.unlink(missing_ok=True)
        self.page.screenshot(path=str(path))
        assert path.stat().st_size > 10_000
        docs_shots.publish(case, path)
        return path

    def bodies(self) -> list[str]:
        out = []
        for response in self.responses:
            try:
                out.append(response.body().decode("utf-8", "replace"))
            except Exception:  # redirects and aborted loads have no body
                continue
        return out

    def assert_no_stored_key(self):
        assert self.bodies(), "no responses were recorded"
        leaked = [r.url for r, body in zip(self.responses, self.bodies()) if STORED_KEY in body]
        assert not leaked, f"the stored key reached the browser in {leaked}"
        assert self.field("rerank_api_key").input_value() != STORED_KEY
        assert STORED_KEY not in json.dumps(self.config())
        assert not self.errors, f"page errors: {self.errors}"


@pytest.fixture
def panel(browser, site):
    context = browser.new_context(viewport={"width": 1100, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.set_default_navigation_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield Panel(page, site).open()
    finally:
        context.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the four Test connection cases ------------------------------------------------------------


def test_working_server(panel, servers):
    panel.field("rerank_endpoint").fill(servers["tei19"].url)
    verdict = panel.run_test()

    expect(verdict).to_contain_text("✓")
    expect(verdict).to_contain_text("Works")
    expect(panel.page.get_by_test_id("test-report")).to_have_class(re.compile("a0rr-ok"))
    expect(panel.page.get_by_test_id("detected-api")).to_have_text("rerank")
    expect(panel.page.get_by_test_id("route")).to_contain_text("/rerank")
    expect(panel.page.get_by_test_id("scores")).to_contain_text("probability scale")
    expect(panel.page.get_by_test_id("attempts")).to_contain_text("pass")
    toast = panel.toast("success")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("Reranker")
    expect(panel.toast("error")).to_have_count(0)
    # the endpoint was typed, not saved: the panel says so
    expect(panel.page.get_by_test_id("unsaved-note")).to_be_visible()
    expect(panel.page.get_by_test_id("unsaved-note")).to_contain_text(
        "Test checks the values shown; press Save to keep them."
    )
    panel.shot("working")
    panel.assert_no_stored_key()


def test_qwen3_needs_client_side_template(panel, servers):
    panel.field("rerank_endpoint").fill(servers["vllm013"].url)
    panel.field("rerank_model").fill(QWEN3)
    verdict = panel.run_test()

    expect(verdict).to_contain_text("✓")
    expect(panel.page.get_by_test_id("templated")).to_contain_text("client-side")
    expect(panel.page.get_by_test_id("route")).to_contain_text("Qwen3 template")
    expect(panel.page.get_by_test_id("detected-api")).to_have_text("qwen3_score")
    expect(panel.toast("success")).to_be_visible()
    panel.shot("qwen3_template")
    panel.assert_no_stored_key()


def test_dead_endpoint(panel):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    panel.field("rerank_endpoint").fill(endpoint)
    verdict = panel.run_test()

    expect(verdict).to_contain_text("✗")
    expect(verdict).to_contain_text("cannot connect", ignore_case=True)
    expect(panel.page.get_by_test_id("verdict-reason")).to_contain_text(endpoint)
    expect(panel.page.get_by_test_id("test-report")).to_have_class(re.compile("a0rr-fail"))
    toast = panel.toast("error")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("Reranker")
    expect(toast).to_contain_text("cannot", ignore_case=True)
    expect(panel.toast("success")).to_have_count(0)
    panel.shot("dead_endpoint")
    panel.assert_no_stored_key()


def test_wrong_stored_key(panel, servers):
    """The stored key (behind the placeholder) was saved with another endpoint (the saved
    config has none): Test connection tests this server without it and asks for the key again."""
    cohere = servers["cohere"]
    cohere.clear()
    key_input = panel.field("rerank_api_key")
    assert key_input.get_attribute("type") == "password"
    expect(key_input).to_have_value(PLACEHOLDER)
    panel.field("rerank_endpoint").fill(cohere.url)
    panel.field("rerank_model").fill("rerank-v3.5")
    verdict = panel.run_test()

    expect(verdict).to_contain_text("✗")
    expect(verdict).to_contain_text("key", ignore_case=True)
    expect(panel.page.get_by_test_id("verdict-reason")).to_contain_text("another server")
    toast = panel.toast("error")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("another server")
    panel.shot("wrong_key")
    # tested without a key: the stored key went to no server it was not saved for
    assert not any("authorization" in {k.lower() for k in r.headers} for r in cohere.requests)
    expect(key_input).to_have_value(PLACEHOLDER)
    panel.assert_no_stored_key()


def test_wrong_typed_key_then_right_one(panel, servers):
    cohere = servers["cohere"]
    panel.field("rerank_endpoint").fill(cohere.url)
    panel.field("rerank_model").fill("rerank-v3.5")
    panel.field("rerank_api_key").fill("typed-wrong-key")
    verdict = panel.run_test()
    expect(verdict).to_contain_text("✗")
    expect(verdict).to_contain_text("API key")
    expect(panel.toast("error")).to_be_visible()
    expect(panel.page.get_by_test_id("unsaved-note")).to_contain_text("api_key")

    panel.field("rerank_api_key").fill(RIGHT_KEY)
    verdict = panel.run_test()
    expect(verdict).to_contain_text("✓")
    expect(panel.toast("success")).to_be_visible()
    panel.assert_no_stored_key()


def test_several_models_none_set(panel):
    """One Infinity serving two models: the verdict names them, so the user can pick one."""
    with start_server("infinity", models=("/srv/models/bge-reranker", "/srv/models/bge-small")) as infinity:
        panel.field("rerank_endpoint").fill(infinity.url)
        verdict = panel.run_test()
        expect(verdict).to_contain_text("✗")
        expect(verdict).to_contain_text("Choose a model")
        reason = panel.page.get_by_test_id("verdict-reason")
        expect(reason).to_contain_text("set 'rerank_model' to one of models/bge-reranker, models/bge-small")
        expect(panel.page.get_by_test_id("verdict-hint")).to_contain_text("model names above")
        panel.shot("several_models")

        panel.field("rerank_model").fill("models/bge-reranker")
        expect(panel.run_test()).to_contain_text("✓")
    panel.assert_no_stored_key()


# --- the rest of the panel ---------------------------------------------------------------------


def test_button_says_testing_while_it_runs(panel, servers):
    tei = servers["tei19"]
    tei.set_faults(delay=0.4)
    try:
        panel.field("rerank_endpoint").fill(tei.url)
        panel.test_button.click()
        expect(panel.test_button).to_have_text("Testing…")
        expect(panel.test_button).to_be_disabled()
        expect(panel.page.get_by_test_id("verdict")).to_contain_text("✓")
        expect(panel.test_button).to_have_text("Test connection")
        expect(panel.test_button).to_be_enabled()
    finally:
        tei.recover()


def test_saved_values_have_no_unsaved_note(panel):
    """Testing what is saved (no endpoint: the built-in default) names the mode, counts as
    working, and shows no unsaved note."""
    verdict = panel.run_test()
    expect(verdict).to_contain_text("✓")
    expect(verdict).to_contain_text("Built-in fusion, no reranker server")
    expect(panel.page.get_by_test_id("verdict-reason")).to_contain_text(
        "set 'rerank_endpoint' to add a reranker server"
    )
    expect(panel.toast("success")).to_be_visible()
    expect(panel.page.get_by_test_id("unsaved-note")).to_be_hidden()
    panel.assert_no_stored_key()
    panel.shot("builtin_mode")


def test_handler_failure_is_a_failed_verdict_not_a_crash(panel):
    panel.page.route(
        "**/api/plugins/a0_reranker/test_connection",
        lambda route: route.fulfill(
            status=500,
            content_type="text/plain",
            body='Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: the handler broke',
        ),
    )
    verdict = panel.run_test()
    expect(verdict).to_contain_text("✗")
    expect(panel.page.get_by_test_id("verdict-reason")).to_have_text(
        "the test could not run: RuntimeError: the handler broke"
    )
    expect(panel.toast("error")).to_be_visible()
    expect(panel.test_button).to_be_enabled()
    assert not panel.errors


def test_status_section(panel):
    expect(panel.page.get_by_test_id("status-enabled")).to_contain_text("yes")
    expect(panel.page.get_by_test_id("status-mode")).to_have_text("built-in fusion, no reranker server")
    expect(panel.page.get_by_test_id("status-endpoint")).to_have_text("none set")
    expect(panel.page.get_by_test_id("status-totals")).to_contain_text("0 reranked, 0 fused")
    expect(panel.page.get_by_test_id("status-latency")).to_have_text("no calls yet")
    expect(panel.page.get_by_test_id("status-error")).to_have_text("none")
    panel.page.get_by_test_id("refresh-status").click()
    expect(panel.page.get_by_test_id("refresh-status")).to_have_text("Refresh status")


def test_form_binds_config_and_validates_ranges(panel):
    before = panel.config()
    defaults = yaml.safe_load((REPO / "default_config.yaml").read_text())
    assert set(before) == set(defaults)

    timeout = panel.field("rerank_timeout")
    timeout.fill("999")
    row = timeout.locator("xpath=..")
    expect(row.locator(".a0rr-field-error")).to_have_text("Out of range: a number from 0.5 to 120.")
    expect(panel.page.get_by_test_id("invalid-summary")).to_be_visible()
    assert panel.config()["rerank_timeout"] == 999  # a number, not "999"

    panel.field("rerank_candidates").fill("2.5")
    expect(panel.field("rerank_candidates").locator("xpath=..").locator(".a0rr-field-error")).to_contain_text(
        "whole number"
    )
    panel.page.get_by_test_id("invalid-summary").scroll_into_view_if_needed()
    panel.page.screenshot(path=str(SHOTS / "validation.png"))

    timeout.fill("12")
    panel.field("rerank_candidates").fill("30")
    expect(panel.page.get_by_test_id("invalid-summary")).to_be_hidden()

    # empty minimum score = off = null; a number there is a number
    min_score = panel.field("rerank_min_score")
    min_score.fill("0.25")
    assert panel.config()["rerank_min_score"] == 0.25
    min_score.fill("")
    assert panel.config()["rerank_min_score"] is None
    expect(min_score.locator("xpath=..").locator(".a0rr-field-error")).to_be_hidden()

    # the local group is in the DOM, shown only for api = local
    local = panel.page.locator('[data-group="local"]')
    expect(local).to_be_hidden()
    panel.field("rerank_api").select_option("local")
    expect(local).to_be_visible()
    assert panel.config()["rerank_api"] == "local"

    # the shadow/live switch flips rerank_apply and says what it means
    panel.page.locator('label:has(input[name="rerank_apply"])').click()
    assert panel.config()["rerank_apply"] is False
    expect(panel.page.locator('[data-group="behaviour"]')).to_contain_text("Shadow: the reranker is called")

    # after a test, UI state stayed out of config (api back to auto: a local probe would
    # try to fetch its model)
    panel.field("rerank_api").select_option("auto")
    panel.run_test()
    assert set(panel.config()) == set(defaults)


def test_clear_stored_key(panel):
    key_input = panel.field("rerank_api_key")
    expect(key_input).to_have_value(PLACEHOLDER)
    expect(panel.page.get_by_test_id("key-state")).to_contain_text("A key is stored")
    panel.page.get_by_test_id("clear-key").click()
    expect(key_input).to_have_value("")
    assert panel.config()["rerank_api_key"] == ""
    expect(panel.page.get_by_test_id("key-state")).to_contain_text("removed when you press Save")
    panel.page.get_by_role("button", name="Keep stored key").click()
    expect(key_input).to_have_value(PLACEHOLDER)


def test_the_key_hint_says_save_refuses_the_stored_key_for_another_server(panel):
    """The stored key was saved with no endpoint: naming a server with the placeholder kept is
    what Save refuses (helpers/config_store.py), so the form says so before Save."""
    state = panel.page.get_by_test_id("key-state")
    expect(state).to_contain_text("for the server it was saved with only")
    panel.field("rerank_endpoint").fill("http://127.0.0.1:8080/rerank")
    expect(state).to_contain_text("for no endpoint only")
    expect(state).to_contain_text("Save refuses the stored key there")
    panel.field("rerank_api_key").fill("typed-key")  # a key for this server: nothing to warn of
    expect(state).to_contain_text("A new key")
    panel.page.get_by_role("button", name="Keep stored key").click()
    expect(state).to_contain_text("Save refuses the stored key there")
    panel.field("rerank_endpoint").fill("")  # back to the server it was saved for
    expect(state).to_contain_text("for the server it was saved with only")


def test_the_form_names_what_save_would_refuse_before_save(panel):
    """What the browser cannot judge (a URL's scheme, a path out of its folder, a key with a
    space) is asked of api/settings_check.py as the user types: the refusal shows under its
    field and beside Test connection, in Save's words, and goes when the value is mended."""
    summary = panel.page.get_by_test_id("save-refusal")
    expect(summary).to_be_hidden()
    for key, value, words in [
        ("rerank_endpoint", "ftp://127.0.0.1:8080/rerank", "expected an http:// or https:// URL"),
        ("rerank_api_key", "sk-typed key", "an API key is printable ASCII without spaces"),
    ]:
        before = panel.config()[key]
        panel.field(key).fill(value)
        expect(panel.row(key).get_by_test_id("field-refusal")).to_contain_text(f"setting '{key}': ")
        expect(panel.row(key).get_by_test_id("field-refusal")).to_contain_text(words)
        expect(summary).to_contain_text(f"Save will refuse this form: setting '{key}': ")
        if key == "rerank_endpoint":
            summary.scroll_into_view_if_needed()
            panel.page.screenshot(path=str(SHOTS / "save-refusal.png"))
        panel.field(key).fill(before)
        expect(panel.row(key).get_by_test_id("field-refusal")).to_be_hidden()
        expect(summary).to_be_hidden()
    assert "sk-typed key" not in "".join(panel.bodies())  # the check never echoes a key

    # a number out of range says so itself, once: the browser's words, not the server's too
    panel.field("rerank_timeout").fill("999")
    expect(panel.page.get_by_test_id("invalid-summary")).to_be_visible()
    panel.page.wait_for_function("() => Alpine.store('a0Reranker').refusal.setting === 'rerank_timeout'")
    expect(panel.row("rerank_timeout").get_by_test_id("field-refusal")).to_be_hidden()
    expect(summary).to_be_hidden()


def test_the_panels_origin_is_the_one_save_binds_a_key_to(panel):
    """The key hint's origin (webui) and Save's (helpers/stored_key.py) must agree, or the
    hint would warn of a refusal Save does not make, or miss one it does."""
    from helpers import stored_key

    urls = [
        "http://127.0.0.1:8080/rerank",
        "HTTP://Reranker.Example.COM/v1/rerank",
        "https://api.cohere.com/v2/rerank",
        "https://api.cohere.com:443",
        "http://[::1]:7997/rerank",
        "http://user:pw@host.lan:9000/",
        "  http://host.lan/  ",
        "ftp://host.lan/",
        "not a url",
        "",
    ]
    shown = panel.page.evaluate(
        """async (urls) => {
            const m = await import("/plugins/a0_reranker/webui/a0-reranker-store.js");
            return urls.map((u) => m.origin(u));
        }""",
        urls,
    )
    assert shown == [stored_key.origin(url) for url in urls]


def test_light_theme(browser, site, servers):
    context = browser.new_context(viewport={"width": 1100, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        panel = Panel(context.new_page(), site).open(theme="light")
        panel.field("rerank_endpoint").fill(servers["tei19"].url)
        expect(panel.run_test()).to_contain_text("✓")
        panel.shot("working_light")
        panel.field("rerank_endpoint").fill(f"http://127.0.0.1:{closed_port()}")
        expect(panel.run_test()).to_contain_text("✗")
        panel.shot("dead_endpoint_light")
    finally:
        context.close()


def test_csrf_is_required(site):
    import httpx

    answer = httpx.post(f"{site.url}/api/plugins/a0_reranker/status", json={}, timeout=10)
    assert answer.status_code == 403


def test_save_keeps_the_key_out_of_config(tmp_path, alpine_js, browser):
    """Save runs the plugin's hook: the typed key goes to usr/.env, config.json and the
    reloaded form keep only the placeholder. Own harness: saving changes the stored key."""
    with harness.start(tmp_path, saved_config(), env={"A0_RERANKER_API_KEY": STORED_KEY}, alpine_js=alpine_js) as h:
        context = browser.new_context(viewport={"width": 1100, "height": 1000})
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        try:
            panel = Panel(context.new_page(), h).open()
            panel.field("rerank_api_key").fill("typed-new-key-456")
            panel.field("rerank_endpoint").fill("http://127.0.0.1:8080")
            panel.page.get_by_test_id("modal-save").click()
            expect(panel.toast("success").filter(has_text="Settings saved")).to_be_visible()
            expect(panel.field("rerank_api_key")).to_have_value(PLACEHOLDER)
            saved = json.loads(
                (tmp_path / "root" / "a0" / "usr" / "plugins" / "a0_reranker" / "config.json").read_text()
            )
            assert saved["rerank_api_key"] == PLACEHOLDER
            assert saved["rerank_endpoint"] == "http://127.0.0.1:8080"
            assert "typed-new-key-456" in (tmp_path / "root" / "a0" / "usr" / ".env").read_text()
            assert all("typed-new-key-456" not in body for body in panel.bodies())

            # an out-of-range value: the hook refuses it and the modal shows why (through the
            # plugin's end extension of Plugins._save_config: the host's modal shows only
            # "Save failed" for the 500 a raising hook gives)
            panel.field("rerank_timeout").fill("999")
            panel.page.get_by_test_id("modal-save").click()
            error = panel.page.get_by_test_id("modal-error")
            expect(error).to_contain_text("setting 'rerank_timeout'")

            # another server, the key field left holding the stored key's placeholder: refused, and why
            panel.field("rerank_timeout").fill("5")
            panel.field("rerank_endpoint").fill("http://127.0.0.1:8081")
            panel.page.get_by_test_id("modal-save").click()
            expect(error).to_contain_text("setting 'rerank_api_key': the stored key was saved for another server")
            expect(error).not_to_contain_text("Save failed")
            assert "typed-new-key-456" not in error.inner_text()
            saved = json.loads(
                (tmp_path / "root" / "a0" / "usr" / "plugins" / "a0_reranker" / "config.json").read_text()
            )
            assert saved["rerank_endpoint"] == "http://127.0.0.1:8080"
        finally:
            context.close()


# --- the form, driven by its schema -----------------------------------------------------------------


def holds(condition: dict | None, config: dict) -> bool:
    """A schema condition, as the panel reads it: true = on (true, non-zero, non-empty)."""
    return all(
        bool(config.get(key)) if wanted is True else config.get(key) == wanted
        for key, wanted in (condition or {}).items()
    )


def typed_value(key: str, default):
    """A valid value for `key` other than its default, of the setting's own type."""
    limit = LIMITS[key]
    if limit.kind == "bool":
        return not default
    if limit.kind == "choice":
        return [choice for choice in limit.choices if choice != default][-1]
    if limit.kind == "int":
        value = limit.low + (limit.high - limit.low) // 4
        return value if value != default else value + 1
    if limit.kind == "float":
        return limit.low + (limit.high - limit.low) / 4
    if key == "rerank_shadow_log":  # only a .jsonl file inside Agent Zero's usr/ is accepted
        return "usr/reranker-shadow.jsonl"
    return f"http://127.0.0.1:9/{key}"  # any text; a URL also suits the endpoint


def breaking_and_meeting(key: str, wanted) -> tuple:
    """Two values of `key`: one that breaks a condition's `wanted`, one that meets it."""
    limit = LIMITS[key]
    if wanted is True:  # on: off is false, empty or zero
        return {"bool": (False, True), "str": ("", "x")}.get(limit.kind, (0, limit.high))
    others = [choice for choice in limit.choices if choice != wanted] if limit.kind == "choice" else [not wanted]
    return others[0], wanted


def test_every_field_renders_from_the_schema(panel):
    groups = panel.page.locator("[data-group]").evaluate_all("els => els.map(e => e.dataset.group)")
    assert groups == [group["key"] for group in SCHEMA_GROUPS] + ["status"]
    config = panel.config()
    for group, field in SCHEMA_FIELDS:
        key, limit = field["key"], LIMITS[field["key"]]
        row = panel.page.locator(f'[data-group="{group["key"]}"] .field[data-field="{key}"]')
        expect(row).to_have_count(1)
        expect(row.locator(".field-title")).to_have_text(field["label"])
        help_text = field["help_off"] if field.get("help_off") and not config[key] else field["help"]
        expect(row.locator(".field-description")).to_have_text(help_text)
        control = panel.field(key)
        expect(control).to_have_count(1)
        if "placeholder" in field:
            expect(control).to_have_attribute("placeholder", field["placeholder"])
        if field["kind"] == "number":
            assert float(control.get_attribute("min")) == limit.low, key
            assert float(control.get_attribute("max")) == limit.high, key
            expect(control).to_have_attribute("step", "1" if limit.kind == "int" else "any")
        if field["kind"] == "choice":
            options = control.locator("option")
            assert options.evaluate_all("els => els.map(e => e.value)") == list(limit.choices), key
            expect(options).to_have_text([field["option_labels"][c] for c in limit.choices])
            expect(control).to_have_value(config[key])
    panel.assert_no_stored_key()


def test_shown_and_greyed_rules_follow_the_schema(panel):
    rules = [
        (panel.page.locator(f'[data-group="{group["key"]}"]'), "shown_when", group["shown_when"])
        for group in SCHEMA_GROUPS
        if "shown_when" in group
    ]
    rules += [
        (panel.row(field["key"]), rule, field[rule])
        for _, field in SCHEMA_FIELDS
        for rule in ("shown_when", "active_when")
        if rule in field
    ]
    assert rules, "the schema has no rules to check"
    for element, rule, condition in rules:
        for key, wanted in condition.items():  # first break the rule, then meet it
            off, on = breaking_and_meeting(key, wanted)
            panel.set(key, off)
            assert not holds(condition, panel.config())
            if rule == "shown_when":
                expect(element).to_be_hidden()
            else:
                expect(element).to_have_class(re.compile(r"\ba0rr-dim\b"))
            panel.set(key, on)
        assert holds(condition, panel.config())
        if rule == "shown_when":
            expect(element).to_be_visible()
        else:
            expect(element).not_to_have_class(re.compile(r"\ba0rr-dim\b"))


def test_typing_each_field_saves_its_type(tmp_path, alpine_js, browser):
    """Type a new value into every field of the schema, press Save: what the host's Save
    sends holds numbers as numbers and switches as booleans, and the hook stores it.
    Own harness: saving changes the stored config."""
    with harness.start(tmp_path, saved_config(), env={"A0_RERANKER_API_KEY": STORED_KEY}, alpine_js=alpine_js) as h:
        context = browser.new_context(viewport={"width": 1100, "height": 1000})
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        try:
            panel = Panel(context.new_page(), h).open()
            before = saved_config()
            expected = panel.config()
            assert expected == before
            for group, field in SCHEMA_FIELDS:
                for key, wanted in {**group.get("shown_when", {}), **field.get("shown_when", {})}.items():
                    panel.set(key, wanted)  # bring the field into view first
                    expected[key] = wanted
                key = field["key"]
                if expected[key] == before[key]:  # not changed already to show another field
                    expected[key] = typed_value(key, before[key])
                    panel.set(key, expected[key])
            assert all(expected[key] != before[key] for key in FIELD), "a field kept its saved value"
            assert panel.config() == expected

            with panel.page.expect_request(
                lambda r: r.url.endswith("/api/plugins") and (r.post_data_json or {}).get("action") == "save_config"
            ) as sent:
                panel.page.get_by_test_id("modal-save").click()
            settings = sent.value.post_data_json["settings"]
            assert settings == expected
            for key, value in settings.items():
                kind = LIMITS[key].kind
                if kind == "bool":
                    assert isinstance(value, bool), key
                elif kind in ("int", "float"):
                    assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{key}: {value!r}"
                else:
                    assert isinstance(value, str), key
            expect(panel.toast("success").filter(has_text="Settings saved")).to_be_visible()
            saved = json.loads(
                (tmp_path / "root" / "a0" / "usr" / "plugins" / "a0_reranker" / "config.json").read_text()
            )
            assert saved == {**expected, "rerank_api_key": PLACEHOLDER}
            panel.assert_no_stored_key()
        finally:
            context.close()


def test_form_that_cannot_load_says_so(browser, site):
    context = browser.new_context(viewport={"width": 1100, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        panel = Panel(context.new_page(), site)
        panel.page.route(
            "**/api/plugins/a0_reranker/settings_fields",
            lambda route: route.fulfill(
                status=500, content_type="text/plain", body="Traceback (most recent call last):\nKeyError: 'x'"
            ),
        )
        panel.page.goto(f"{site.url}/?toast_scale=5")
        expect(panel.page.get_by_test_id("form-error")).to_have_text("settings form unavailable: KeyError: 'x'")
        expect(panel.toast("error")).to_contain_text("settings form unavailable")
        expect(panel.page.get_by_test_id("status-enabled")).to_contain_text("yes")  # the status still shows
        expect(panel.test_button).to_have_count(0)
        assert not panel.errors
    finally:
        context.close()
