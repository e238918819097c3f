"""The client checks that run against an Infinity server, whichever one: the emulation
(tests/test_infinity_checks.py) and the real `infinity_emb` (tests/real/test_infinity_real.py).
A ``Target`` says where the server is and what its model scores, so one check means the
same thing on both; where the two servers differ, the check does not.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pytest

from helpers import connection_test, reranker, settings_cache, status_report, vocabulary
from helpers.scoring import async_api, calibration, client, scorers, verdicts
from helpers.scoring.wire import split_endpoint
from tests.real.train_tiny_reranker import QUESTIONS, memories

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5  # float32 forward passes batched differently; reports round to 1e-6
QUESTION = "how do I restart the grafana container"
MEMORIES = memories()
ANSWER = next(i for i, m in enumerate(MEMORIES) if m.startswith(QUESTIONS[QUESTION]))
FILLER = "note {i}: the weather in town number {i} was mild"

Scorer = Callable[[str, Sequence[str]], list[float]]


@dataclass
class Target:
    url: str  # the base URL, as a user types it into the endpoint field
    expected: Scorer  # the model's own probabilities for (query, documents)
    config: dict = field(default_factory=dict)  # the settings this server needs (key, model)
    path: str = "/rerank"  # the route detection must settle on

    def settings(self, **more) -> dict:
        # No score cache (every call reaches the server), a timeout for a loaded 2-core
        # machine, and a breaker that never opens in the middle of a check.
        return {
            "rerank_endpoint": self.url,
            "rerank_cache": False,
            "rerank_timeout": 60,
            "rerank_breaker_failures": 100,
            **self.config,
            **more,
        }


def probe(settings: dict) -> dict:
    """``reranker.probe``, then the calibration a passed one starts, waited for. Test
    connection waits 30 s for it; on a loaded machine it goes on past that, and its requests
    would queue beside the next check's (a server with a short queue answers those 429)."""
    report = reranker.probe(settings)
    for measurement in calibration.measuring():
        measurement.result(timeout=calibration.MEASURE_SECONDS + 30)
    return report


def assert_scores(ranked, expected: Sequence[float]) -> None:
    assert ranked is not None, "the call fell back"
    assert sorted(i for i, _ in ranked) == list(range(len(expected)))
    assert dict(ranked) == pytest.approx(dict(enumerate(expected)), abs=TOLERANCE)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def detects_the_route_and_the_scale(t: Target) -> dict:
    report = probe(t.settings())
    assert report["ok"] and report["verdict"] == "ok", report["reason"]
    assert (report["route"], report["scale"]) == (f"rerank {t.path}", "probability")
    scores = [report["relevant_score"], report["near_miss_score"], report["irrelevant_score"]]
    assert scores == pytest.approx(t.expected(verdicts.PROBE_QUERY, verdicts.PROBE_DOCS), abs=TOLERANCE)
    return report


def ranks_with_the_models_own_scores(t: Target) -> None:
    ranked = reranker.rerank(QUESTION, MEMORIES, config=t.settings())
    assert_scores(ranked, t.expected(QUESTION, MEMORIES))
    assert ranked[0][0] == ANSWER


def splits_to_the_servers_limit(t: Target, n: int, limit: int) -> None:
    """More documents than one request may carry: the server's refusal names the limit,
    the client learns it and splits; every score is still the model's own."""
    documents = [FILLER.format(i=i) for i in range(n)]
    documents[n - 7] = MEMORIES[ANSWER]
    base, _ = split_endpoint(t.url)
    assert client.learned_batch_limit(base + t.path) is None
    ranked = reranker.rerank(QUESTION, documents, config=t.settings())
    assert_scores(ranked, t.expected(QUESTION, documents))
    assert ranked[0][0] == n - 7
    assert client.learned_batch_limit(base + t.path) == limit


def cuts_long_memories_to_what_the_server_accepts(t: Target) -> None:
    """A memory longer than any server takes, sent with the largest budget the settings
    allow: accepted, and scored like the text the client sent, which the server cuts to
    its model's token limit (so an answer past that limit is not seen)."""
    budget = 122_880
    buried = "unrelated words " * 400 + MEMORIES[ANSWER]  # the answer 800 tokens in
    documents = [MEMORIES[ANSWER], buried, " " * 10 + "x" * (budget + 5_000)]
    ranked = reranker.rerank(QUESTION, documents, config=t.settings(rerank_max_doc_chars=budget))
    assert_scores(ranked, t.expected(QUESTION, [d[:budget] for d in documents]))
    assert ranked[0][0] == 0 and dict(ranked)[1] < dict(ranked)[0] - 0.5


def names_the_served_models_when_none_is_set(t: Target, names: Sequence[str]) -> None:
    """The headline of the probe, Test connection, the status tool and the CLI names them."""
    settings = t.settings(rerank_model="")
    report = probe(settings)
    assert not report["ok"] and report["verdict"] == "model", report["reason"]
    assert report["served_models"] == list(names)
    assert report["reason"].startswith(
        "the server serves several models and needs one named: set 'rerank_model' to one of "
    )
    assert all(name in report["reason"] for name in names)
    tested = asyncio.run(connection_test.run(settings))
    assert tested["report"]["reason"] == report["reason"]
    status = dataclasses.replace(
        status_report.collect(), enabled_for_agent=True, setting_enabled=True, has_reranker=True, wrap_live=True
    )
    # what the status tool's probe=true shows: the same probe, typed (status_report.collect_probed)
    loaded = settings_cache.load_settings(settings)
    probed = asyncio.run(async_api.probe_report(loaded, scorers.choose(loaded)))
    assert probed.as_dict()["reason"] == report["reason"]
    first = vocabulary.status_text(status, probe=probed).splitlines()[0]
    assert first == f"RERANKER NOT WORKING (recall uses built-in fusion meanwhile): {report['reason']}"
    env = {**os.environ, "A0RR_TEST_KEY": t.config.get("rerank_api_key", "")}
    out = subprocess.run(
        [sys.executable, "-m", "helpers.cli", "probe", t.url, "--api-key-env", "A0RR_TEST_KEY"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 1 and out.stdout.startswith(f"NOT USABLE: {report['reason']}")
    refusal = next(line for line in out.stdout.splitlines() if line.startswith(f"rerank {t.path} "))
    assert "Available model names are" in refusal and all(name in refusal for name in names)
    wrong = probe(t.settings(rerank_model="no-such-model"))
    assert wrong["verdict"] == "model" and "has no model 'no-such-model'" in wrong["reason"]
    for name in names:
        named = t.settings(rerank_model=name)
        assert probe(named)["ok"]
        assert_scores(reranker.rerank(QUESTION, MEMORIES, config=named), t.expected(QUESTION, MEMORIES))


def needs_its_key(t: Target) -> None:
    key = t.config["rerank_api_key"]
    assert probe(t.settings())["ok"]
    for wrong in ("", "not-" + key):
        report = probe(t.settings(rerank_api_key=wrong))
        assert report["verdict"] == "auth" and key not in str(report)
        assert reranker.rerank(QUESTION, MEMORIES, config=t.settings(rerank_api_key=wrong)) is None
