"""A server that echoes the Authorization header back never gets the key onto a screen or into
a log: whatever shape it echoes in (a score, an error body, a 4xx message, the request's
headers reflected, a model list, a redirect's Location) and whatever form (as sent,
JSON-escaped, URL-encoded, base64, upper-cased, split in a repr), no piece of the key
reaches Test connection's report, the status API, the CLI (probe, rerank, status), the
reranker_status tool, the log records or the recall line in the chat."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.host.leaks import KEY, PIECE, leaked_pieces, status_tool_text
from tests.host.recall import HISTORY, QUESTION, enabled_store
from tests.servers import start
from tests.servers.echo import ECHO_SHAPES

ROOT = Path(__file__).resolve().parent.parent


def test_the_oracle_finds_every_form_the_echo_server_writes():
    from tests.servers.echo import forms

    for form in forms(f"Bearer {KEY}").split(" | "):
        assert leaked_pieces(f"error: {form} (truncated"), form
    assert leaked_pieces(KEY[: PIECE + 2]) and not leaked_pieces("HTTP 400: (the key was withheld) ***")


# --- the surfaces -----------------------------------------------------------------------------


def run_cli(*args: str) -> str:
    env = {**os.environ, "ECHO_TEST_KEY": KEY}
    done = subprocess.run(
        [sys.executable, "-m", "helpers.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize("shape", ECHO_SHAPES)
def test_no_form_of_the_key_reaches_any_output(host, shape, caplog, capsys):
    agent, _ = enabled_store(host)
    outputs: dict[str, str] = {}
    with start("cohere", api_key=KEY, model="rerank-v3.5") as srv:
        srv.set_faults(echo=shape)
        connection = {
            "rerank_endpoint": srv.url,
            "rerank_model": "rerank-v3.5",
            "rerank_retries": 0,
            "rerank_timeout": 5,
            "rerank_cache": False,
        }
        with caplog.at_level(logging.DEBUG):
            host.save_config({**connection, "rerank_api_key": KEY})
            host.import_plugin("helpers.settings_cache").forget()
            tested = host.run(
                host.call_api(
                    "plugins/a0_reranker/test_connection", {"config": {**connection, "rerank_api_key": "************"}}
                )
            )
            outputs["test connection"] = json.dumps(tested.get_json())
            result = host.run(host.recall(agent, QUESTION, HISTORY))
            host.run(host.import_plugin("helpers.recall.shadow").drained())
            item = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading)
            outputs["recall line"] = json.dumps(dict(item.kvps)) + item.heading
            outputs["status api"] = json.dumps(host.run(host.call_api("plugins/a0_reranker/status", {})).get_json())
            outputs["status tool"] = host.run(status_tool_text(agent))
            capsys.readouterr()
            host.import_plugin("helpers.cli").main(["status"])
            outputs["cli status"] = "".join(capsys.readouterr())
        outputs["log records"] = "\n".join(
            r.getMessage() + (r.exc_text or "") for r in caplog.records if r.name.startswith("a0_reranker")
        )
        outputs["cli probe"] = run_cli(
            "probe", srv.url, "--api-key-env", "ECHO_TEST_KEY", "--model", "rerank-v3.5", "--json"
        )
        outputs["cli rerank"] = run_cli(
            "rerank",
            "capital of France",
            "Paris is the capital.",
            "Lyon is a city.",
            "--endpoint",
            srv.url,
            "--api-key-env",
            "ECHO_TEST_KEY",
            "--model",
            "rerank-v3.5",
        )
        sent = {r.headers.get("authorization") for r in srv.requests}
    assert f"Bearer {KEY}" in sent  # the key went out, and the server echoed it
    assert result["error"] is None
    assert not tested.get_json()["ok"] and "not working" in outputs["status tool"].lower()  # the echo was read
    leaks = {name: leaked_pieces(text) for name, text in outputs.items()}
    assert leaks == {name: [] for name in outputs}, {n: outputs[n][:400] for n, found in leaks.items() if found}
