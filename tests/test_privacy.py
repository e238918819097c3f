"""The privacy guard: a public endpoint is refused before any connection (no traffic leaves
127.0.0.1 in these tests: name lookups and connections are intercepted), redaction is what a
loopback server actually receives, and the probe report says when either applied."""

import asyncio
import ipaddress
import json
import socket
import sys

import httpx
import pytest
import yaml

from tests.servers.scoring import calibration_question_in
from tests.servers import start

PUBLIC = "https://api.example.com"
PUBLIC_ADDRESS = "93.184.216.34"


@pytest.fixture
def network(monkeypatch):
    """Name lookups answered here (a public address for every name but localhost) and
    every connection away from loopback refused and recorded, as are httpx sends."""
    seen = {"lookups": [], "connects": [], "sends": []}
    real_connect, real_send = socket.socket.connect, httpx.AsyncClient.send

    def getaddrinfo(host, port, *args, **kwargs):
        seen["lookups"].append(host)
        address = "127.0.0.1" if host in ("localhost", "127.0.0.1") else PUBLIC_ADDRESS
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]

    def connect(sock, address):
        if isinstance(address, tuple) and not ipaddress.ip_address(address[0]).is_loopback:
            seen["connects"].append(address)
            raise OSError("the test network allows loopback only")
        return real_connect(sock, address)

    async def send(client, request, *args, **kwargs):
        seen["sends"].append(str(request.url))
        return await real_send(client, request, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    _forget_lookups()
    yield seen
    _forget_lookups()


def _forget_lookups():
    """Remembered lookups: in the plugin as unit tests import it (helpers.scoring.endpoint_guard)
    and as the host imports it (usr.plugins.a0_reranker.helpers.scoring.endpoint_guard)."""
    for name, module in list(sys.modules.items()):
        if name == "helpers.scoring.endpoint_guard" or name.endswith("a0_reranker.helpers.scoring.endpoint_guard"):
            forget = getattr(module, "forget", None)
            if forget is not None:
                forget()


# --- redaction --------------------------------------------------------------------------
MASKED = [
    ("password: hunter2", "password: [redacted]"),
    ("the wifi password is hunter2.", "the wifi password is [redacted]."),
    ("DB_PASSWORD=s3cr3t, then restart", "DB_PASSWORD=[redacted], then restart"),
    ('{"password": "correct horse battery", "user": "bob"}', '{"password": [redacted], "user": "bob"}'),
    ("OPENAI_API_KEY=sk-proj-abcdef1234567890XYZ", "OPENAI_API_KEY=[redacted]"),
    ("my api key is sk-proj-abcdef1234567890XYZ", "my api key is [key]"),
    ("use sk-proj-abcdef1234567890XYZ for it", "use [key] for it"),
    ("mail alice.smith@example.co.uk today", "mail [email] today"),
    ("login with §§secret(GITHUB_TOKEN)", "login with [secret]"),
    ("Authorization: Bearer abcdefghijklmnop.qrs", "Authorization: Bearer [key]"),
    ("postgres://bob:hunter2@localhost:5432/db", "postgres://bob:[redacted]@localhost:5432/db"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [key]"),
    ("aws AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws [key] and [key]"),
    ("random xK9mQ2pL7vR4tY8wZ3nB6cF1hJ5gD0sA end", "random [key] end"),
]
KEPT = [
    "the password policy requires 12 characters",
    "the password is strong enough, says the audit",
    "the token is valid for a day",
    "the secret is to keep it simple",
    "set max_tokens: 512 and token_limit=5",
    "notes at /home/user/projects/backup2024/config/settings.yaml",
    "see https://github.com/agent0ai/agent-zero/blob/main/docs/developer/plugins.md",
    "a skateboarding_competition_results table",
    "a long_snake_case_identifier_with_version_2_here",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "Paris is the capital and largest city of France.",
]


@pytest.mark.parametrize("text, expected", MASKED)
def test_redact_masks_secrets(text, expected):
    from helpers.scoring.redaction import redact

    assert redact(text) == expected
    assert redact(expected) == expected  # stable


@pytest.mark.parametrize("text", KEPT)
def test_redact_leaves_ordinary_prose_alone(text):
    from helpers.scoring.redaction import redact

    assert redact(text) == text


# --- which endpoints are private --------------------------------------------------------
@pytest.mark.parametrize(
    "endpoint, allowed",
    [
        ("http://127.0.0.1:8080", True),
        ("http://localhost:8080", True),
        ("http://[::1]:8080", True),
        ("http://10.1.2.3", True),
        ("http://172.16.0.9", True),
        ("http://192.168.1.20:7997", True),
        ("http://169.254.1.1", True),
        ("http://[fd00::5]", True),
        ("http://100.101.102.103", True),  # Tailscale / carrier-grade NAT (RFC 6598)
        ("http://8.8.8.8", False),
        ("http://[2001:4860:4860::8888]", False),
        (PUBLIC, False),
    ],
)
def test_private_only_allows_loopback_and_private_networks(network, endpoint, allowed):
    from helpers.scoring.endpoint_guard import check
    from helpers.scoring.scorers import REMOTE
    from helpers.settings import Settings

    settings = Settings.from_mapping({"rerank_private_only": True, "rerank_endpoint": endpoint})
    assert (asyncio.run(check(settings, REMOTE)) == "") is allowed
    assert asyncio.run(check(settings.replace(private_only=False), REMOTE)) == ""
    assert network["connects"] == [] and network["sends"] == []


def test_a_name_resolving_to_a_private_address_is_allowed(network, monkeypatch):
    from helpers.scoring.endpoint_guard import check
    from helpers.scoring.scorers import REMOTE
    from helpers.settings import Settings

    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.168.1.5", 0))],
    )
    assert (
        asyncio.run(
            check(
                Settings.from_mapping({"rerank_private_only": True, "rerank_endpoint": "http://reranker.lan:8080"}),
                REMOTE,
            )
        )
        == ""
    )


def test_a_public_endpoint_is_refused_before_any_connection(network):
    from helpers import reranker

    config = {
        "rerank_endpoint": PUBLIC,
        "rerank_private_only": True,
        "rerank_api_key": "sk-test-not-real",
        "rerank_timeout": 2,
    }
    assert reranker.rerank("grafana port", ["grafana listens on 3000", "the garden"], config=config) is None
    report = reranker.probe(config)
    assert report["ok"] is False and report["verdict"] == "refused"
    assert "api.example.com is not on loopback or a private network" in report["reason"]
    assert "rerank_private_only" in report["reason"]
    assert any("only loopback and private-network endpoints" in n for n in report["notes"])
    assert network["lookups"] == ["api.example.com"]  # looked up once (answered here), remembered
    assert network["connects"] == [] and network["sends"] == []


def test_a_refused_recall_gets_the_no_server_order_and_sends_nothing(host, network):
    async def main():
        agent, memory = await _store(host, ["grafana on atlas listens on port 3000", "the garden needs water"])
        _set_plugin(host, rerank_endpoint="")
        expected = await host.recall(agent, "which port does grafana use", "")
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.STATS.forget()
        _set_plugin(host, rerank_endpoint=PUBLIC, rerank_private_only=True)
        got = await host.recall(agent, "which port does grafana use", "")
        assert [id(d) for d in got["memories"]] == [id(d) for d in expected["memories"]]
        stats = recall.STATS.snapshot()
        # memories: the reranker refused, the fused order stands; no solutions stored
        assert stats["totals"] == {"fused": 1, "reranker_unavailable": 1, "empty": 1}
        assert "privacy guard" in stats["last_error"]["reason"]
        assert network["connects"] == [] and network["sends"] == []

    host.run(main())


# --- what a loopback server receives ----------------------------------------------------
SECRETS = [
    "the nas admin password: hunter2 (changed in may)",
    "deploy key for atlas is sk-proj-abcdef1234567890XYZ",
    "grafana alerts go to ops.team@example.org",
    "the backup job logs in with §§secret(NAS_PASSWORD)",
    "the password policy on atlas requires 12 characters",
]


@pytest.mark.parametrize("redact", [True, False])
def test_the_server_sees_masked_text_and_the_agent_the_original(host, network, redact):
    async def main():
        agent, memory = await _store(host, SECRETS)
        with start("tei19") as srv:
            _set_plugin(host, rerank_endpoint=srv.url, rerank_redact=redact, rerank_private_only=True)
            got = await host.recall(agent, "what is the nas admin password: hunter2 or not", "")
        bodies = [r.json for r in srv.requests if r.method == "POST" and isinstance(r.json, dict) and "texts" in r.json]
        memory_bodies = [
            b for b in bodies if "France" not in b["query"] and calibration_question_in(b["query"]) is None
        ]  # not the probe nor the calibration
        assert memory_bodies
        sent = json.dumps(memory_bodies, ensure_ascii=False)
        raw = ("hunter2", "sk-proj-abcdef1234567890XYZ", "ops.team@example.org", "§§secret(NAS_PASSWORD)")
        if redact:
            assert not any(secret in sent for secret in raw)
            assert "password: [redacted]" in sent and "[key]" in sent and "[email]" in sent and "[secret]" in sent
            assert all(b["query"].startswith("what is the nas admin password: [redacted]") for b in memory_bodies)
        else:
            assert all(secret in sent for secret in raw)
        assert "the password policy on atlas requires 12 characters" in sent  # prose intact
        # The agent gets the host's own documents, unmasked.
        assert got["memories"] and set(d.page_content for d in got["memories"]) <= set(SECRETS)
        assert network["connects"] == []

    host.run(main())


def test_the_probe_report_says_which_guards_applied(network):
    from helpers import reranker

    with start("tei19") as srv:
        report = reranker.probe({"rerank_endpoint": srv.url, "rerank_private_only": True, "rerank_redact": True})
        plain = reranker.probe({"rerank_endpoint": srv.url})
    assert report["ok"], report["reason"]
    notes = " | ".join(report["notes"])
    assert "only loopback and private-network endpoints are allowed" in notes
    assert "e-mails, keys and passwords are masked" in notes
    assert not any("privacy guard" in n for n in plain["notes"])


# --- helpers ----------------------------------------------------------------------------
async def _store(host, texts):
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config({**defaults, "memory_recall_similarity_threshold": 0.0}, plugin="_memory")
    agent = host.agent()
    memory = await host.memory(agent)
    await host.insert(memory, texts)
    host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
    host.toggle(True)
    return agent, memory


def _set_plugin(host, **config):
    host.set_config({"rerank_cache": False, "rerank_timeout": 2, "rerank_retries": 0, **config})
    host.import_plugin("helpers.settings_cache").forget()


async def _unwrapped(host, agent, message):
    host.toggle(False)
    try:
        return await host.recall(agent, message, "")
    finally:
        host.toggle(True)


def test_no_event_loop_left_running():
    # The sync API's private loop is the only one; a test above must not have leaked another.
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
