"""A password in the endpoint URL (``http://user:pass@proxy:8080``, the way to reach a
basic-auth proxy) is never shown: not in the status tool's text (which the chat model
reads), the status API, Test connection, the log, a Save's error message, nor in a server's
text quoted back (an echo of the Basic header it was sent)."""

from __future__ import annotations

import json
import logging

import pytest

from tests.host.leaks import leaked_pieces, status_tool_text
from tests.host.recall import QUESTION, enabled_store, free_port
from tests.servers import start
from tests.servers.echo import REDIRECTED

PASSWORD = "S3cret-Proxy-Pass-0123"
USER = "proxyuser"


def with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{USER}:{PASSWORD}@{rest}"


def surfaces(host, agent, endpoint: str, caplog) -> dict[str, str]:
    connection = {
        "rerank_endpoint": endpoint,
        "rerank_retries": 0,
        "rerank_timeout": 3,
        "rerank_cache": False,
        "rerank_breaker_failures": 1,
    }
    outputs = {}
    with caplog.at_level(logging.DEBUG):
        host.save_config(connection)
        tested = host.run(host.call_api("plugins/a0_reranker/test_connection", {"config": connection}))
        outputs["test connection"] = json.dumps(tested.get_json())
        host.run(host.recall(agent, QUESTION))
        outputs["status api"] = json.dumps(host.run(host.call_api("plugins/a0_reranker/status", {})).get_json())
        outputs["status tool"] = host.run(status_tool_text(agent))
    outputs["log records"] = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("a0_reranker"))
    # the HTTP client's own (httpx logs every request's URL at INFO), but for the URL a hostile
    # server redirected to with the echoed header in it: that one is the server's own text
    outputs["every log record"] = "\n".join(r.getMessage() for r in caplog.records if REDIRECTED not in r.getMessage())
    return outputs


def assert_no_password(outputs: dict[str, str]) -> None:
    leaks = {name: leaked_pieces(text, PASSWORD) for name, text in outputs.items()}
    assert leaks == {name: [] for name in outputs}, {n: outputs[n][:600] for n, found in leaks.items() if found}


def test_a_dead_endpoint_with_a_password_is_shown_masked_everywhere(host, caplog):
    agent, _ = enabled_store(host)
    outputs = surfaces(host, agent, with_password(f"http://127.0.0.1:{free_port()}"), caplog)
    assert_no_password(outputs)
    assert "***@127.0.0.1" in outputs["status tool"] and "***@127.0.0.1" in outputs["test connection"]
    assert "circuit breaker open" in outputs["log records"]  # the log line that names the endpoint was written


@pytest.mark.parametrize("shape", ["status_4xx", "header", "redirect"])
def test_a_server_echoing_the_basic_header_never_gets_the_password_shown(host, caplog, shape):
    agent, _ = enabled_store(host)
    with start("cohere", model="rerank-v3.5") as srv:
        srv.set_faults(echo=shape)
        outputs = surfaces(host, agent, with_password(srv.url), caplog)
        sent = {r.headers.get("authorization") for r in srv.requests}
    assert any(a and a.startswith("Basic ") for a in sent)  # the URL's credentials went out, and came back
    assert_no_password(outputs)


def test_a_refused_endpoint_with_a_password_is_quoted_masked_at_save(host):
    with pytest.raises(ValueError, match="rerank_endpoint") as refused:
        host.save_config({"rerank_endpoint": with_password("http://ｌocalhost:8080")})
    assert PASSWORD not in str(refused.value) and "***@" in str(refused.value)


def test_one_function_masks_the_user_info(host):
    settings = host.import_plugin("helpers.settings")
    assert settings.shown_endpoint("http://u:p@proxy:8080/rerank") == "http://***@proxy:8080/rerank"
    assert settings.shown_endpoint("https://token@host/v1") == "https://***@host/v1"
    assert settings.shown_endpoint("http://a:b@c@host:1/x?y=@z") == "http://***@host:1/x?***"  # the last @ ends it
    # A password holding / ? or # ends what looks like the authority early: still masked.
    assert settings.shown_endpoint("http://u:S3cret/Pass#0123@127.0.0.1:8080") == "http://***@127.0.0.1:8080"
    assert settings.shown_endpoint("http://u:S3cretPass?0123@host") == "http://***@host"
    # A query or fragment may hold a key: never repeated.
    assert settings.shown_endpoint("http://host:1/?api_key=sk-1234567890") == "http://host:1/?***"
    assert settings.shown_endpoint("http://host/v1/rerank#key") == "http://host/v1/rerank#***"
    # Nor can an @ after what reads as a host and port be told from a password holding a /
    # ("admin:2024/pw@proxy": httpx would send it to a host named admin): masked, and refused.
    assert settings.shown_endpoint("http://admin:2024/Zq9S3cretpw@127.0.0.1:1") == "http://***@127.0.0.1:1"
    assert settings.shown_endpoint("http://host:8080/a@b") == "http://***@b"
    assert settings.shown_endpoint("") == ""


def test_the_secret_scrubbed_is_the_password_or_a_token_in_the_user_name(host):
    settings = host.import_plugin("helpers.settings")
    assert settings.endpoint_secret("http://u:p%40ss@proxy:8080") == "p@ss"
    assert settings.endpoint_secret("https://ghp_0123456789abcdef@host") == "ghp_0123456789abcdef"
    assert settings.endpoint_secret("http://admin@host") == ""  # a short name is not a secret to withhold text for
    assert settings.endpoint_secret("http://host:8080") == ""


@pytest.mark.parametrize(
    "endpoint",
    [
        f"http://{USER}:S3cret/Proxy#Pass-0123@127.0.0.1:8080",
        "http://127.0.0.1:8080/?api_key=" + PASSWORD,
        "http://admin:2024/S3cret-Proxy@127.0.0.1:8080",  # before: saved, and sent to a host named admin
        "http://admin:/S3cret-Proxy@127.0.0.1:8080",
    ],
    ids=["password holding / and #", "key in the query", "a password whose start reads as a port", "and empty"],
)
def test_an_endpoint_hiding_a_secret_after_its_host_is_refused_at_save_and_not_quoted(host, endpoint):
    # Before: saved (every request then went to "/?api_key=.../v1/rerank"), or quoted whole.
    with pytest.raises(ValueError, match="rerank_endpoint") as refused:
        host.save_config({"rerank_endpoint": endpoint})
    assert PASSWORD not in str(refused.value) and "S3cret" not in str(refused.value)
    if "?api_key" in endpoint:
        assert "?query or #fragment" in str(refused.value)


def test_the_cli_names_the_endpoint_it_used_without_its_password(capsys):
    from helpers import cli

    with start("cohere", model="rerank-v3.5") as srv:
        for extra in ([], ["--json"]):
            args = ["rerank", "backup tool", "restic backs up", "the garden", "--model", "rerank-v3.5"]
            code = cli.main([*args, "--endpoint", with_password(srv.url), *extra])
            out = capsys.readouterr().out
            assert code == 0 and PASSWORD not in out and "***@127.0.0.1" in out
