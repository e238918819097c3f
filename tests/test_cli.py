"""The command line: the README's main job with nothing but the standard library, the
probe against a live server, and bad input: one line naming the argument (or the missing
package), exit status 2, never a traceback, with and without the runtime packages."""

import ctypes
import json
import os
import subprocess
import sys

import pytest

from tests.host.cli import ROOT, assert_usage_error, cli
from tests.servers import start

RUNTIME_IMPORTS = ("httpx", "jinja2", "yaml", "tenacity")
NEEDS_HTTPX = (
    "error: this needs the Python package httpx, which is not installed: pip install httpx jinja2 pyyaml tenacity"
)


def test_readme_main_job_runs_with_only_the_standard_library():
    out = cli("rerank", "which port does the grafana dashboard use?", "--file", "examples/memories.txt", isolated=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "reranker: lexical (built-in BM25, no server)"
    first = next(line for line in lines if line.startswith("1 "))
    assert "Grafana on atlas listens on port 3001" in first


def test_rerank_reads_stdin_and_prints_json():
    out = cli(
        "rerank",
        "vegetarian recipes",
        "--json",
        isolated=True,
        stdin="# comment\nThe user is vegetarian.\nBackups run nightly.\n",
    )
    data = json.loads(out.stdout)
    assert [r["index"] for r in data["results"]] == [0, 1]


def test_rerank_without_documents_is_a_clear_error():
    out = cli("rerank", "q", isolated=True, stdin="")
    assert out.returncode == 2 and "no documents" in out.stderr


def test_probe_and_rerank_against_a_server():
    with start("tei19") as srv:
        out = cli("probe", srv.url)
        assert out.returncode == 0 and out.stdout.startswith("OK: tei /rerank")
        out = cli(
            "rerank",
            "restart grafana",
            "Grafana restarts with docker compose.",
            "The user likes tea.",
            "--endpoint",
            srv.url,
            "--json",
        )
        assert json.loads(out.stdout)["results"][0]["index"] == 0


def test_probe_of_a_dead_endpoint_exits_nonzero_with_the_reason():
    out = cli("probe", "http://127.0.0.1:9", "--timeout", "1")
    assert out.returncode == 1 and out.stdout.startswith("NOT USABLE: cannot reach")


# --- bad input ---------------------------------------------------------------------------------


def test_the_isolated_interpreter_really_lacks_the_runtime_packages():
    for name in RUNTIME_IMPORTS:
        out = subprocess.run(
            [sys.executable, "-E", "-S", "-c", f"import {name}"], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 1 and f"No module named '{name}'" in out.stderr
        assert subprocess.run([sys.executable, "-c", f"import {name}"], timeout=60).returncode == 0


TOP = "expected a whole number of at least 1"
TIMEOUT = "expected a number from 0.5 to 120"
DOCS = "examples/memories.txt"

# (arguments, message with the runtime packages, message without them: None = the same)
BAD_INPUT = [
    (
        ["rerank", "q", "--file", "missing.txt"],
        "argument --file: cannot read missing.txt: no such file or directory",
        None,
    ),
    (["rerank", "q", "--file", "examples"], "argument --file: cannot read examples: is a directory", None),
    (["rerank", "q", "--file", f"{DOCS}/x"], f"argument --file: cannot read {DOCS}/x: not a directory", None),
    (["rerank", "q", "--top", "-1", "--file", DOCS], f"argument --top: {TOP}, got '-1'", None),
    (["rerank", "q", "--top", "0", "--file", DOCS], f"argument --top: {TOP}, got '0'", None),
    (["rerank", "q", "--top", "two", "--file", DOCS], f"argument --top: {TOP}, got 'two'", None),
    (["rerank", "", "--file", DOCS], "argument query: is empty", None),
    (["rerank", "  \t ", "--file", DOCS], "argument query: is empty", None),
    (["rerank", "q", "a", "--timeout", "-1"], f"argument --timeout: got '-1', {TIMEOUT}", None),
    (["rerank", "q", "a", "--timeout", "0"], f"argument --timeout: got '0', {TIMEOUT}", None),
    (["rerank", "q", "a", "--timeout", "soon"], f"argument --timeout: got 'soon', {TIMEOUT}", None),
    (["rerank", "q", "a", "--timeout", "inf"], f"argument --timeout: got 'inf', {TIMEOUT}", None),
    (["rerank", "q", "a", "--timeout", "500"], f"argument --timeout: got '500', {TIMEOUT}", None),
    (["rerank", "q", "a", " "], "argument documents: document 2 is empty", None),
    (
        ["rerank", "q", "a", "--file", DOCS],
        "argument --file: give the documents as arguments or with --file, not both",
        None,
    ),
    (
        ["rerank", "q", "a", "--api", "rerank"],
        "argument --endpoint: --api rerank talks to a server; give its URL with --endpoint",
        None,
    ),
    (["rerank", "q", "a", "--api", "bm25"], "argument --api: invalid choice: 'bm25'", None),
    (
        ["rerank", "q", "a", "--endpoint", "http://127.0.0.1:9", "--api-key-env", "A0_RERANKER_TEST_UNSET"],
        "argument --api-key-env: the environment variable A0_RERANKER_TEST_UNSET is not set",
        None,
    ),
    (
        ["rerank", "q", "a", "--endpoint", "ftp://example.com"],
        "argument --endpoint: got 'ftp://example.com', expected an http:// or https:// URL with a host",
        NEEDS_HTTPX,
    ),
    (["rerank"], "the following arguments are required: query", None),
    (["probe", "notaurl"], "argument url: got 'notaurl', expected an http:// or https:// URL with a host", NEEDS_HTTPX),
    (["probe", "http://"], "argument url: got 'http://', expected an http:// or https:// URL with a host", NEEDS_HTTPX),
    (["probe", "http://127.0.0.1:99999"], "argument url: got 'http://127.0.0.1:99999'", NEEDS_HTTPX),
    (["probe", "http://127.0.0.1:9", "--timeout", "0.1"], f"argument --timeout: got '0.1', {TIMEOUT}", None),
    (["probe"], "the following arguments are required: url", None),
    (["report", "missing.jsonl"], "argument log: cannot read missing.jsonl: no such file or directory", None),
    (["report", "examples"], "argument log: cannot read examples: is a directory", None),
    (["report", DOCS, "--k", "0"], f"argument --k: {TOP}, got '0'", None),
    (["report", DOCS, "--k", "-3"], f"argument --k: {TOP}, got '-3'", None),
    (["report", DOCS, "--k", "five"], f"argument --k: {TOP}, got 'five'", None),
    (["report", DOCS], f"argument log: {DOCS}: the log holds no searches (", None),
    ([], "the following arguments are required: command", None),
    (["rank", "q"], "argument command: invalid choice: 'rank'", None),
]


@pytest.mark.parametrize("isolated", [False, True], ids=["runtime", "stdlib-only"])
@pytest.mark.parametrize(
    "args, message, isolated_message", BAD_INPUT, ids=[" ".join(c[0]) or "(none)" for c in BAD_INPUT]
)
def test_bad_input_is_one_line_naming_the_argument(args, message, isolated_message, isolated):
    expected = (isolated_message or message) if isolated else message
    env = {k: v for k, v in os.environ.items() if k != "A0_RERANKER_TEST_UNSET"}
    out = cli(*args, isolated=isolated, env=env)
    command = args[0] if args and args[0] in ("rerank", "probe", "status", "report") else ""
    assert_usage_error(out, command, expected)


def test_a_file_that_is_not_utf8_and_one_with_no_documents(tmp_path):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"caf\xe9 au lait\n")
    assert_usage_error(
        cli("rerank", "q", "--file", str(latin), isolated=True),
        "rerank",
        f"argument --file: {latin} is not UTF-8 text (byte 4)",
    )
    comments = tmp_path / "comments.txt"
    comments.write_text("# only a comment\n\n   \n")
    assert_usage_error(
        cli("rerank", "q", "--file", str(comments), isolated=True),
        "rerank",
        f"no documents in {comments} (one per line; blank lines and # comments are skipped)",
    )


def _without_root_file_access():
    """For a test run as root: drop the capabilities that read any file (in the child)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_files_the_user_cannot_read(tmp_path):
    docs, log = tmp_path / "docs.txt", tmp_path / "shadow.jsonl"
    docs.write_text("a document\n")
    log.write_text('{"caller": "recall"}\n')
    for path in (docs, log):
        path.chmod(0)
    preexec = _without_root_file_access if os.geteuid() == 0 else None
    probe = subprocess.run(
        [sys.executable, "-c", f"open({str(docs)!r})"], capture_output=True, preexec_fn=preexec, timeout=60
    )
    if probe.returncode == 0:
        pytest.skip("cannot make a file unreadable here (root with CAP_DAC_OVERRIDE and no CAP_SETPCAP)")
    assert_usage_error(
        cli("rerank", "q", "--file", str(docs), isolated=True, preexec_fn=preexec),
        "rerank",
        f"argument --file: cannot read {docs}: permission denied",
    )
    assert_usage_error(
        cli("report", str(log), isolated=True, preexec_fn=preexec),
        "report",
        f"argument log: cannot read {log}: permission denied",
    )


def test_top_shows_the_best_n():
    out = cli("rerank", "which port does the grafana dashboard use?", "--file", DOCS, "--top", "2", isolated=True)
    rows = [line for line in out.stdout.splitlines() if line[:1].isdigit()]
    assert out.returncode == 0 and len(rows) == 2 and "Grafana on atlas listens on port 3001" in rows[0]


def test_status_without_the_runtime_packages_names_the_missing_one():
    assert_usage_error(cli("status", isolated=True), "status", NEEDS_HTTPX)


def test_status_with_the_runtime_packages():
    out = cli("status")
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert set(status) == {"mode", "mode_text", "applied", "stats", "breaker", "checked_at"}
    assert status["mode_text"] == "built-in fusion, no reranker server"  # the shipped default


def test_report_needs_only_the_standard_library(tmp_path):
    log = tmp_path / "shadow.jsonl"
    line = {"caller": "recall", "host_order": ["a", "b"], "reranked_order": ["b", "a"], "latency_ms": 12.0}
    log.write_text(json.dumps(line) + "\n")
    out = cli("report", str(log), "--k", "1", isolated=True)
    assert out.returncode == 0, out.stderr
    assert "top result changed by reranking: 100% of searches" in out.stdout


def test_a_reader_that_leaves_early_is_no_error(tmp_path):
    """``python -m helpers.cli rerank ... | head -3``: the pipe closes long before the output
    (far more than a pipe buffer holds) ends."""
    docs = tmp_path / "many.txt"
    docs.write_text("\n".join(f"memory {i} about grafana, ports and dashboards on atlas" for i in range(5000)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "helpers.cli", "rerank", "grafana port", "--file", str(docs)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and "Traceback" not in err and "BrokenPipe" not in err
