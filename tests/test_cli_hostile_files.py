"""The command line on hostile files: a decision log with lines that are JSON but not the log's
shape, and files that never end (/dev/zero). One clear line or a summary that counts what
it skipped; reads bounded by documented caps, never until memory runs out."""

import json
import resource

import pytest

from tests.host.cli import ROOT, assert_usage_error, cli

GOOD = {"caller": "recall", "host_order": ["a", "b"], "reranked_order": ["b", "a"], "latency_ms": 12.0}
MALFORMED = [
    {"caller": "recall", "host_order": [["a"], "b"], "reranked_order": ["b"]},  # an id that is a list
    {"caller": "recall", "host_order": ["a"], "reranked_order": [{"id": "a"}]},  # an id that is an object
    {"caller": "recall", "host_order": [1, 2], "reranked_order": ["a"]},  # an id that is a number
    {"caller": "recall", "host_order": ["a"], "reranked_order": ["a"], "latency_ms": [12]},  # a list latency
    {"caller": "recall", "host_order": ["a"], "reranked_order": ["a"], "latency_ms": "NaN"},  # a string latency
    {"caller": ["recall"], "host_order": ["a"], "reranked_order": ["a"]},  # a caller that is a list
    {"caller": "recall", "host_order": "ab", "reranked_order": ["a"]},  # an order that is a string
    {"caller": "recall", "host_order": ["a"], "reranked_order": ["a"], "latency_ms": 10**400},  # no float holds it
]
MEMORY_CAP = 1 << 30  # far more than the CLI needs; far less than reading /dev/zero to its end


def _little_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.mark.parametrize(
    "bad",
    MALFORMED,
    ids=[
        "list id",
        "object id",
        "number id",
        "list latency",
        "string latency",
        "list caller",
        "string order",
        "huge latency",
    ],
)
def test_a_line_in_the_wrong_shape_is_skipped_and_counted(tmp_path, bad):
    log = tmp_path / "shadow.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in (GOOD, bad, GOOD)) + "\n")
    out = cli("report", str(log), "--json", isolated=True)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr  # before: a traceback
    summary = json.loads(out.stdout)
    assert summary["searches"] == 2 and summary["unreadable_lines"] == 1
    assert summary["latency_ms"] == {"p50": 12.0, "p95": 12.0}


def test_a_log_with_only_malformed_lines_is_one_line(tmp_path):
    log = tmp_path / "shadow.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in MALFORMED) + "\n")
    assert_usage_error(
        cli("report", str(log), isolated=True),
        "report",
        f"argument log: {log}: the log holds no searches ({len(MALFORMED)} unreadable lines)",
    )


def test_report_on_a_file_that_never_ends_stops_at_its_cap():
    out = cli("report", "/dev/zero", isolated=True, preexec_fn=_little_memory)
    # before: read until memory ran out (MemoryError, a traceback)
    assert_usage_error(out, "report", "argument log: /dev/zero: the log holds no searches (")
    assert "only the first 256 MiB were read" in out.stderr


def test_rerank_on_a_file_that_never_ends_is_one_line_naming_the_cap():
    out = cli("rerank", "q", "--file", "/dev/zero", isolated=True, preexec_fn=_little_memory)
    assert_usage_error(out, "rerank", "argument --file: /dev/zero holds more than 16 MiB")


def test_rerank_on_stdin_that_never_ends_is_one_line_naming_the_cap():
    with open("/dev/zero", "rb") as zero:
        import subprocess
        import sys

        out = subprocess.run(
            [sys.executable, "-E", "-S", "-m", "helpers.cli", "rerank", "q"],
            cwd=ROOT,
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_little_memory,
        )
    assert_usage_error(out, "rerank", "stdin holds more than 16 MiB")
