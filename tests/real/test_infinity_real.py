"""The client against the real Infinity server (infinity-emb 0.0.78 from .venv-infinity, on the
CPU) serving the committed tiny cross-encoder: the checks the emulation passes
(tests/test_infinity_checks.py), and what only a real process can show: telemetry off, a
server killed mid-call and started again, and its own queue-full 429.

Three servers start once per session, together: a default one, one limited to 16
documents per request, and one serving two models under /v1 with an API key. Expected
scores come from the same model run by sentence-transformers in the test environment.
If .venv-infinity is missing these tests fail; A0RR_REAL_SERVERS=skip skips them instead.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import asyncio  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402
import pytest  # noqa: E402

from helpers import reranker  # noqa: E402
from helpers.scoring import score, scorers  # noqa: E402
from helpers.errors import ServerError  # noqa: E402
from tests.real import checks  # noqa: E402
from tests.real.infinity_server import InfinityProcess, missing_environment  # noqa: E402

pytestmark = pytest.mark.real_server

MODEL = checks.ROOT / "tests" / "real" / "tiny-reranker"
NAMES = ["real/tiny-reranker", "twin/tiny-reranker"]  # served names: each path's last two parts
KEY = "real-infinity-key"
# Seconds of work for the server: more documents than its pipeline takes in at once
# (8 batches of 32), so the rest wait in the queue that /models counts.
LOAD = [f"memory {i}: " + "words about nothing in particular " * 12 for i in range(1200)]


def _require_environment() -> None:
    why = missing_environment()
    if why is None:
        return
    if os.environ.get("A0RR_REAL_SERVERS") == "skip":
        pytest.skip(f"{why} (A0RR_REAL_SERVERS=skip)")
    pytest.fail(
        f"the real-server lane cannot run: {why}; bash tests/run.sh builds it "
        "(set A0RR_REAL_SERVERS=skip to leave the lane out)",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def infinity(tmp_path_factory):
    _require_environment()
    work = tmp_path_factory.mktemp("infinity")
    twin = work / "twin" / "tiny-reranker"
    shutil.copytree(MODEL, twin)
    servers = {
        "default": InfinityProcess("default", [MODEL], work),
        "limited": InfinityProcess("limited", [MODEL], work, env={"INFINITY_MAX_CLIENT_BATCH_SIZE": "16"}),
        # A short queue, so a long request makes the next one a 429.
        "shared": InfinityProcess(
            "shared", [MODEL, twin], work, env={"INFINITY_QUEUE_SIZE": "8"}, url_prefix="/v1", api_key=KEY
        ),
    }
    try:
        for server in servers.values():
            server.start()
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def model_scores():
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(MODEL), device="cpu")  # probabilities: sigmoid of the one logit

    def expected(query, documents):
        # Infinity strips both texts before the tokenizer sees them.
        pairs = [(query.strip(), d.strip()) for d in documents]
        return [float(s) for s in model.predict(pairs, batch_size=64, show_progress_bar=False)]

    return expected


def target(server, expected, **config):
    path = "/v1/rerank" if server.name == "shared" else "/rerank"
    return checks.Target(server.url, expected, config, path=path)


def shared_target(infinity, model_scores, model=""):
    config = {"rerank_api_key": KEY, **({"rerank_model": model} if model else {})}
    return target(infinity["shared"], model_scores, **config)


def test_usage_telemetry_is_off(infinity):
    for server in infinity.values():
        logged = " ".join(server.log_text().split())  # rich wraps long lines
        assert "DO_NOT_TRACK=1 registered. Anonymized usage statistics are disabled." in logged


def test_detection_and_exact_scores(infinity, model_scores):
    checks.detects_the_route_and_the_scale(target(infinity["default"], model_scores))
    checks.ranks_with_the_models_own_scores(target(infinity["default"], model_scores))


def test_2100_documents_on_a_default_infinity(infinity, model_scores):
    checks.splits_to_the_servers_limit(target(infinity["default"], model_scores), 2100, 2048)


def test_40_documents_on_one_limited_to_16(infinity, model_scores):
    checks.splits_to_the_servers_limit(target(infinity["limited"], model_scores), 40, 16)


def test_long_memories(infinity, model_scores):
    checks.cuts_long_memories_to_what_the_server_accepts(target(infinity["default"], model_scores))


def test_two_models_with_none_set(infinity, model_scores):
    checks.names_the_served_models_when_none_is_set(shared_target(infinity, model_scores), NAMES)


def test_key_and_path_prefix(infinity, model_scores):
    named = shared_target(infinity, model_scores, NAMES[1])
    checks.needs_its_key(named)
    checks.detects_the_route_and_the_scale(named)


def _queued(server, model_name: str = "", headers=None) -> int:
    prefix = "/v1" if server.name == "shared" else ""
    data = httpx.get(server.url + prefix + "/models", headers=headers, timeout=5).json()["data"]
    return next(m for m in data if not model_name or m["id"] == model_name)["stats"]["queue_absolute"]


def _wait_until_queued(server, at_least: int, **kwargs) -> None:
    for _ in range(2400):
        if _queued(server, **kwargs) >= at_least:
            return
        time.sleep(0.025)
    raise AssertionError(f"the {server.name} server never queued {at_least} documents")


def test_killed_mid_call_then_started_again(infinity, model_scores):
    server = infinity["default"]
    t = target(server, model_scores)
    assert checks.probe(t.settings())["ok"]
    answers = {}
    call = threading.Thread(
        target=lambda: answers.setdefault("ranked", reranker.rerank(checks.QUESTION, LOAD, config=t.settings()))
    )
    call.start()
    _wait_until_queued(server, 1)  # the call is in the server's queue: kill it there
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)
    call.join(timeout=90)
    assert not call.is_alive() and answers["ranked"] is None  # the caller keeps its own order
    assert reranker.probe(t.settings())["verdict"] == "unreachable"
    server.start().wait_ready()
    checks.ranks_with_the_models_own_scores(t)  # recovers without any reset


def test_its_queue_full_429_falls_back_then_recovers(infinity, model_scores):
    server, headers = infinity["shared"], {"Authorization": f"Bearer {KEY}"}
    t = shared_target(infinity, model_scores, NAMES[0])
    settings = reranker.load_settings(t.settings())
    assert checks.probe(t.settings())["ok"]  # the route is known before the queue fills
    load = threading.Thread(
        target=lambda: httpx.post(
            server.url + "/v1/rerank",
            headers=headers,
            timeout=300,
            json={"model": NAMES[0], "query": checks.QUESTION, "documents": LOAD},
        )
    )
    load.start()
    try:
        _wait_until_queued(server, 100, model_name=NAMES[0], headers=headers)  # a second or more of work left
        before = server.log_text().count('" 429 Too Many Requests')
        with pytest.raises(ServerError) as refused:
            asyncio.run(score.score_documents(scorers.choose(settings), checks.QUESTION, checks.MEMORIES))
        assert refused.value.status == 429 and "currently overloaded" in refused.value.message
        # One try and every retry the settings allow, each answered 429 (Infinity sends no Retry-After).
        assert server.log_text().count('" 429 Too Many Requests') - before == settings.retries + 1
        assert reranker.rerank(checks.QUESTION, checks.MEMORIES, config=t.settings()) is None
    finally:
        load.join(timeout=300)
    checks.ranks_with_the_models_own_scores(t)
