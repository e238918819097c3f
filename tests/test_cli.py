"""The command line: the README's main job with nothing but the standard library, and the
probe against a live server."""

import json
import subprocess
import sys
from pathlib import Path

from tests.servers import start

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, isolated=False, stdin=None):
    flags = ["-S"] if isolated else []  # -S: no site-packages, as on a fresh machine
    return subprocess.run([sys.executable, *flags, "-m", "helpers.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, input=stdin, timeout=60)


def test_readme_main_job_runs_with_only_the_standard_library():
    out = cli("rerank", "which port does the grafana dashboard use?", "--file", "examples/memories.txt", isolated=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "reranker: lexical (built-in BM25, no server)"
    first = next(line for line in lines if line.startswith("1 "))
    assert "Grafana on atlas listens on port 3001" in first


def test_rerank_reads_stdin_and_prints_json():
    out = cli("rerank", "vegetarian recipes", "--json", isolated=True, stdin="# comment\nThe user is vegetarian.\nBackups run nightly.\n")
    data = json.loads(out.stdout)
    assert [r["index"] for r in data["results"]] == [0, 1]


def test_rerank_without_documents_is_a_clear_error():
    out = cli("rerank", "q", isolated=True, stdin="")
    assert out.returncode == 2 and "no documents" in out.stderr


def test_probe_and_rerank_against_a_server():
    with start("tei19") as srv:
        out = cli("probe", srv.url)
        assert out.returncode == 0 and out.stdout.startswith("OK: tei /rerank")
        out = cli("rerank", "restart grafana", "Grafana restarts with docker compose.", "The user likes tea.", "--endpoint", srv.url, "--json")
        assert json.loads(out.stdout)["results"][0]["index"] == 0


def test_probe_of_a_dead_endpoint_exits_nonzero_with_the_reason():
    out = cli("probe", "http://127.0.0.1:9", "--timeout", "1")
    assert out.returncode == 1 and out.stdout.startswith("NOT USABLE: cannot reach")
