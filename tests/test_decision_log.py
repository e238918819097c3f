"""The opt-in decision log: what a recall writes (ids, orders, scores, a masked query; never
memory text, never the key), and ``python -m helpers.cli report LOG`` run as a user runs it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.host.recall import enabled_store
from tests.servers import start

REPO_ROOT = Path(__file__).resolve().parents[1]
API_KEY = "sk-test-0123456789abcdefXYZ"
MEMORIES = [
    "grafana on atlas listens on port 3000",
    "atlas runs grafana and prometheus in docker",
    "nginx on atlas proxies port 443 to grafana",
    "the garden needs water every other day",
    "restic backs up atlas to the nas at night",
    "prometheus keeps thirty days of metrics on atlas",
]
MESSAGE = "which port does grafana use on atlas? the admin password: hunter2"


async def _recall_with_log(host, log_path, **config):
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    # every memory is read and the agent gets all it was given, so orders compare whole
    host.set_config(
        {**defaults, "memory_recall_similarity_threshold": 0.0, "memory_recall_memories_max_result": 12},
        plugin="_memory",
    )
    agent = host.agent()
    memory = await host.memory(agent)
    await host.insert(memory, MEMORIES)
    recall = host.import_plugin("helpers.recall.wrapper")
    recall.ensure_wrapped()
    host.toggle(True)
    host.set_config({"rerank_cache": False, "rerank_shadow_log": str(log_path), **config})
    host.import_plugin("helpers.settings_cache").forget()
    result = await host.recall(agent, MESSAGE, [])  # a new chat: the greeting, then the message
    await host.import_plugin("helpers.recall.shadow").drained()  # shadow mode measures afterwards
    host.import_plugin("helpers.report.decision_log").flush()
    return memory, result


@pytest.mark.parametrize("apply", [True, False])
def test_a_recall_writes_ids_orders_and_scores_but_no_text_and_no_key(host, apply):
    log_path = host.root / "usr" / "shadow.jsonl"  # the file is created on first write

    async def main():
        with start("tei19", api_key=API_KEY) as srv:
            memory, result = await _recall_with_log(
                host, log_path, rerank_endpoint=srv.url, rerank_api_key=API_KEY, rerank_apply=apply
            )
        text = log_path.read_text(encoding="utf-8")
        lines = [json.loads(line) for line in text.splitlines()]
        assert len(lines) == 1  # the memories search; the solutions search found nothing to log
        line = lines[0]
        stored = {d.metadata["id"]: d for d in memory.db.docstore._dict.values()}
        returned = [d.metadata["id"] for d in result["memories"]]
        assert line["caller"] == "recall" and line["applied"] is apply
        assert set(line["fused"]) <= set(line["pool"]) == set(stored)  # the fused hits, then the deeper ones
        assert set(line["scores"]) == set(stored) and all(0 <= s <= 1 for s in line["scores"].values())
        # The reranker's own order is its scores'; the order returned combines it with fusion.
        assert sorted(line["reranker_order"], key=lambda i: -line["scores"][i]) == line["reranker_order"]
        assert set(line["reranker_order"]) == set(stored)
        # It calls its best memory relevant and keeps unrelated memories below the answer:
        # its order leads (the host's first kept within the five slots)
        assert line["reranker_led"] is True and max(line["scores"].values()) >= 0.5
        shown = [i for i in line["reranked_order"][:5] if i != line["host_order"][0]]
        assert shown == [i for i in line["reranker_order"] if i != line["host_order"][0]][: len(shown)]
        if apply:
            assert line["reranked_order"] == returned
        else:
            assert line["host_order"] == returned  # shadow mode: the agent got the host's order
            assert line["reranked_order"] != returned
        assert set(line["host_order"]) <= set(stored)
        assert line["latency_ms"] > 0
        # The query is the user's message, masked; no memory text, no key anywhere.
        assert line["query"].startswith("which port does grafana use on atlas? the admin password: [redacted]")
        assert "hunter2" not in text and API_KEY not in text
        assert not any(m in text for m in MEMORIES)
        assert not any(word in text for word in ("garden", "restic", "nginx"))

    host.run(main())


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "helpers.cli", "report", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_report_summarises_a_log_written_by_recalls(host):
    log_path = host.root / "usr" / "shadow.jsonl"

    async def main():
        with start("tei19") as srv:
            await _recall_with_log(host, log_path, rerank_endpoint=srv.url)

    host.run(main())
    done = _cli(log_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "searches logged: 1 (recall: 1)" in out
    assert "top result changed by reranking:" in out
    assert "moved" in out and "places on average" in out
    assert "reranking latency: p50" in out


def test_report_numbers(tmp_path):
    """Two searches: one reranked c, a, b from the host's a, b, c; one left alone."""
    log_path = tmp_path / "shadow.jsonl"
    lines = [
        {"caller": "recall", "host_order": ["a", "b", "c"], "reranked_order": ["c", "a", "b"], "latency_ms": 10.0},
        {"caller": "memory_load", "host_order": ["a", "b", "c"], "reranked_order": ["a", "b", "c"], "latency_ms": 30.0},
        {"caller": "recall", "host_order": ["a", "b", "c", "d"], "reranked_order": ["d", "a", "b"], "latency_ms": 20.0},
    ]
    log_path.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"cut short\n', encoding="utf-8")
    done = _cli(log_path, "--k", "3", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["searches"] == 3 and summary["by_caller"] == {"recall": 2, "memory_load": 1}
    assert summary["top1_changed"] == round(2 / 3, 3)
    assert summary["top3_changed"] == round(1 / 3, 3)  # d came in from below the cut
    assert summary["new_in_top3_per_search"] == round(1 / 3, 2)
    # moves: c 2, a 1, b 1 | 0, 0, 0 | d 3, a 1, b 1  -> 9 / 9
    assert summary["mean_rank_move"] == 1.0
    assert summary["latency_ms"] == {"p50": 20.0, "p95": 30.0}
    assert summary["unreadable_lines"] == 1

    text = _cli(log_path, "--k", "3").stdout
    assert "top result changed by reranking: 67% of searches" in text
    assert "top 3 changed: 33% of searches" in text
    assert "moved 1.0 places on average" in text
    assert "skipped 1 unreadable lines" in text


def test_report_on_a_missing_or_empty_log_says_so(tmp_path):
    missing = _cli(tmp_path / "nope.jsonl")
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    done = _cli(empty)
    assert done.returncode == 2 and "holds no searches" in done.stderr


def test_the_logged_query_is_masked_before_it_is_cut():
    from helpers.recall import pipeline, store_search
    from helpers.settings import Settings

    secret = "sk-proj-abcdef1234567890XYZ"
    query = "x" * 290 + " " + secret  # the key straddles the 300-character cut
    search = pipeline.Search(pipeline.Call("recall", agent=None), Settings.from_mapping({}), query, 5, 0.7, "")
    search.found, search.rerank_query = store_search.Found(), query
    line = pipeline.decision_line(search, pipeline.outcome_of(search))
    assert "sk-proj" not in line["query"] and "abcdef" not in line["query"]
    assert line["limit"] == 5 and line["caller"] == "recall"


def test_the_key_is_never_written_to_the_log_even_when_the_user_types_it(host):
    # A short key the generic redaction has no pattern for: before, written as typed.
    key = "Zk81-qwerty-Plm0x7"
    agent, _ = enabled_store(host)
    log_path = host.root / "usr" / "reranker-shadow.jsonl"
    with start("cohere", api_key=key, model="rerank-v3.5") as srv:
        host.save_config(
            {
                "rerank_endpoint": srv.url,
                "rerank_model": "rerank-v3.5",
                "rerank_api_key": key,
                "rerank_shadow_log": "usr/reranker-shadow.jsonl",
                "rerank_redact": True,
            }
        )
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, f"grafana port on atlas? also my reranker key changed to {key}"))
        host.import_plugin("helpers.report.decision_log").flush()
    text = log_path.read_text()
    assert "grafana port on atlas" in text and key not in text


def test_a_line_is_built_only_for_a_configured_log_and_one_that_fails_costs_the_counters_nothing():
    from helpers.recall import outcome
    from helpers.report.stats import STATS

    built = []

    def broken_line():
        built.append(True)
        raise RuntimeError("cannot build it")

    done = outcome.Outcome("recall", "memories", outcome.FUSED, True, 1.0, pool_size=3)
    outcome.keep(done, None, "", broken_line)  # no decision log: the line is never built
    assert built == []
    outcome.keep(done, None, "usr/decisions.jsonl", broken_line)
    assert built == [True]
    assert STATS.snapshot()["totals"] == {"fused": 2}  # both searches counted
    nothing_found = outcome.Outcome("recall", "memories", outcome.EMPTY, True, 1.0)
    outcome.keep(nothing_found, None, "usr/decisions.jsonl", broken_line)  # nothing to judge: no line
    assert built == [True]
