"""The reranker client against wire-faithful servers on 127.0.0.1: every dialect detected by
itself, every fault answered with None (or the right order after a retry), never raising."""

import asyncio
import json
import logging
import socket
import threading

import pytest

from helpers import reranker
from helpers.scoring import score
from helpers.scoring import client, probing, scorers
from helpers.settings import API_KEY_ENV, API_KEY_PLACEHOLDER
from tests.servers import start
from tests.servers.qwen3 import PREFIX

QWEN = "Qwen/Qwen3-Reranker-0.6B"
QUERY = "how do I restart the grafana container"
DOCS = [
    "The user is vegetarian and dislikes mushrooms.",
    "To restart the grafana container run docker compose restart grafana on atlas.",
    "Backups of the photos share run nightly with restic.",
    "Grafana listens on port 3001 on atlas.",
]
BEST = 1  # the document that answers QUERY


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# kind, server options, extra settings, the route detection must settle on
SERVERS = [
    ("tei18", {}, {}, "tei /rerank"),
    ("tei19", {}, {}, "tei /rerank"),
    ("vllm013", {"model": QWEN}, {"rerank_model": QWEN}, "vllm-score /score + Qwen3 template"),
    ("vllm014", {"model": QWEN}, {"rerank_model": QWEN}, "rerank /v1/rerank"),
    ("vllm_crossencoder", {}, {}, "rerank /v1/rerank"),
    ("infinity", {}, {}, "rerank /rerank"),
    ("llamacpp", {}, {}, "rerank /v1/rerank"),
    ("cohere", {}, {"rerank_model": "rerank-v3.5"}, "rerank /v1/rerank"),
    ("jina", {}, {"rerank_model": "jina-reranker-v2-base-multilingual"}, "rerank /v1/rerank"),
    ("voyage", {}, {"rerank_model": "rerank-2.5"}, None),
    ("mixedbread", {}, {"rerank_model": "mxbai-rerank-large-v2"}, "mixedbread /v1/reranking"),
]


@pytest.mark.parametrize("kind, options, extra, route", SERVERS, ids=[s[0] for s in SERVERS])
def test_auto_detects_every_server_and_ranks_right(kind, options, extra, route):
    with start(kind, **options) as srv:
        config = {"rerank_api": "auto", "rerank_endpoint": srv.url, **extra}
        ranked = reranker.rerank(QUERY, DOCS, config=config)
        assert ranked is not None, kind
        assert sorted(i for i, _ in ranked) == [0, 1, 2, 3]
        assert ranked[0][0] == BEST
        assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
        if route:
            settings = reranker.load_settings(config)
            assert probing.cached(scorers.choose(settings)).route.describe() == route


def test_voyage_is_found_through_a_pasted_path():
    with start("voyage") as srv:
        ranked = reranker.rerank(
            QUERY, DOCS, config={"rerank_endpoint": srv.url + "/v1/rerank", "rerank_model": "rerank-2.5"}
        )
        assert ranked and ranked[0][0] == BEST


def test_qwen3_on_old_vllm_gets_the_template_rendered_once():
    with start("vllm013", model=QWEN) as srv:
        report = reranker.probe({"rerank_endpoint": srv.url, "rerank_model": QWEN})
        assert report["ok"] and report["templated"] is True and report["detected_api"] == "qwen3_score"
        srv.clear()
        ranked = reranker.rerank(QUERY, DOCS, config={"rerank_endpoint": srv.url, "rerank_model": QWEN})
        assert ranked[0][0] == BEST
        (request,) = srv.requests
        assert request.path == "/score"
        assert request.json["text_1"].startswith(PREFIX) and request.json["text_1"].count(PREFIX) == 1
        assert all(t.startswith("<Document>: ") for t in request.json["text_2"])


def test_qwen3_on_a_server_with_a_score_template_is_never_templated_twice():
    with start("vllm014", model=QWEN) as srv:
        report = reranker.probe({"rerank_endpoint": srv.url, "rerank_model": QWEN, "rerank_api": "qwen3_score"})
        assert report["ok"] and report["templated"] is False
        srv.clear()
        assert (
            reranker.rerank(
                QUERY, DOCS, config={"rerank_endpoint": srv.url, "rerank_model": QWEN, "rerank_api": "qwen3_score"}
            )[0][0]
            == BEST
        )
        assert srv.requests and all(PREFIX not in str(r.json) for r in srv.requests)


def test_raw_text_on_old_vllm_is_reported_as_misranking_when_forced():
    with start("vllm013", model=QWEN) as srv:
        report = reranker.probe({"rerank_endpoint": srv.url, "rerank_model": QWEN, "rerank_api": "rerank"})
        assert not report["ok"] and report["verdict"] == "misranks"
        assert "irrelevant document ranked above" in report["reason"]


@pytest.mark.parametrize("version", ["tei18", "tei19"])
def test_tei_ranks_100_documents_across_batches(version):
    docs = [f"note {i}: the weather in town number {i} was mild" for i in range(100)]
    docs[73] = "To restart the grafana container run docker compose restart grafana."
    with start(version, max_client_batch_size=32) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_max_concurrency": 2}
        ranked = reranker.rerank(QUERY, docs, config=config)
        assert ranked[0][0] == 73
        assert sorted(i for i, _ in ranked) == list(range(100))
        sizes = [
            len(r.json["texts"])
            for r in srv.requests
            if r.path == "/rerank" and len((r.json or {}).get("texts", [])) > 3
        ]
        assert max(sizes) <= 32 and sum(sizes) == 100


def test_tei_batch_limit_is_learned_from_its_error_when_info_is_silent():
    docs = [f"memory {i} about something else entirely" for i in range(40)]
    docs[33] = "To restart the grafana container run docker compose restart grafana."
    with start("tei19", max_client_batch_size=8) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank"}
        settings = reranker.load_settings(config)
        asyncio.run(probing.probe(settings, scorers.choose(settings)))
        # Pretend /info was unreachable: the first call sends everything and must split on 422.
        choice = scorers.choose(settings)
        probing._cache[choice.key] = probing.cached(choice).__class__(
            probing.cached(choice).route, "probability", 0.9, 0.1, batch_limit=None
        )
        srv.clear()
        ranked = reranker.rerank(QUERY, docs, config=config)
        assert ranked[0][0] == 33 and sorted(i for i, _ in ranked) == list(range(40))
        statuses = [r for r in srv.requests if r.path == "/rerank" and "texts" in (r.json or {})]
        assert len(statuses[0].json["texts"]) == 40  # refused with "batch size 40 > maximum allowed batch size 8"
        assert all(len(r.json["texts"]) <= 8 for r in statuses[1:])


def _working(kind="tei19", **options):
    return start(kind, **options)


FAULTS = [
    {"statuses": [500]},
    {"statuses": [400]},
    {"statuses": [404]},
    {"body": "html"},
    {"body": "partial"},
    {"body": "malformed"},
    {"body": "dup_index"},
    {"body": "missing_index"},
    {"body": "out_of_range"},
    {"body": "nan"},
    {"body": "string_score"},
    {"body": "error200"},
    {"body": "empty"},
    {"body": "wrong_count"},
    {"reset": True},
    {"delay": 3.0},
]


@pytest.mark.parametrize("fault", FAULTS, ids=[str(f) for f in FAULTS])
def test_every_fault_returns_none_without_raising(fault):
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_timeout": 1.0, "rerank_retries": 0}
        assert reranker.rerank(QUERY, DOCS, config=config)[0][0] == BEST  # detected and working
        srv.set_faults(**fault)
        assert reranker.rerank(QUERY + " again", DOCS, config=config) is None


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_retryable_statuses_are_retried_to_the_right_order(status):
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 2}
        reranker.rerank(QUERY, DOCS, config=config)
        srv.set_faults(statuses=[status, status])
        srv.clear()
        assert reranker.rerank(QUERY + "?", DOCS, config=config)[0][0] == BEST
        assert len([r for r in srv.requests if r.method == "POST"]) == 3


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_is_not_sent_and_costs_the_endpoint_nothing(query):
    """Sent, a server refuses it (400), and each refusal counted toward the breaker recall
    shares with every other caller: three calls from another plugin kept recall's reranker
    out for the cool-down."""
    with _working("cohere") as srv:
        config = {"rerank_endpoint": srv.url, "rerank_model": "rerank-v3.5", "rerank_breaker_failures": 1}
        assert reranker.rerank(QUERY, DOCS, config=config)[0][0] == BEST
        srv.clear()
        for _ in range(3):
            assert reranker.rerank(query, DOCS, config=config) is None
        assert srv.requests == []
        assert reranker.rerank(QUERY + "?", DOCS, config=config)[0][0] == BEST  # the breaker is still closed


@pytest.mark.parametrize("documents", ["a string of letters", {"a": "b", "c": "d"}, {"one", "two"}, b"bytes"], ids=type)
def test_documents_that_are_no_list_are_refused_not_ranked_by_character_or_key(documents):
    with _working() as srv:
        assert reranker.rerank(QUERY, documents, config={"rerank_endpoint": srv.url}) is None
        assert asyncio.run(reranker.arerank(QUERY, documents, config={"rerank_endpoint": srv.url})) is None
        assert srv.requests == []


def test_a_callers_documents_that_time_out_while_read_give_none_not_an_error():
    def from_a_socket():
        yield "a memory"
        raise TimeoutError("the caller's own read timed out")

    assert asyncio.run(reranker.arerank(QUERY, from_a_socket())) is None
    assert reranker.rerank(QUERY, from_a_socket()) is None


def test_a_scorer_that_overruns_its_deadline_is_not_waited_for(monkeypatch):
    """BM25 over a huge list runs in a thread that cannot be interrupted: the call returns
    at its timeout (the caller keeps its order), not when the thread ends."""
    release = threading.Event()

    async def stuck(self, settings, verdict, query, documents, deadline):
        await asyncio.to_thread(release.wait, 30)
        return [0.0] * len(documents)

    async def main():
        try:
            return await reranker.arerank(QUERY, DOCS, config={"rerank_api": "lexical", "rerank_timeout": 0.5})
        finally:
            release.set()  # before asyncio.run waits for its worker threads to end

    monkeypatch.setattr(type(scorers.LEXICAL), "score", stuck)
    assert asyncio.run(main()) is None


def test_a_connection_reset_is_retried():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 1}
        reranker.rerank(QUERY, DOCS, config=config)
        srv.set_faults(reset=1)  # one reset, then the server answers
        srv.clear()
        assert reranker.rerank(QUERY + "!", DOCS, config=config)[0][0] == BEST
        assert srv.stats["reset"] == 1


def test_other_4xx_are_not_retried():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 3}
        reranker.rerank(QUERY, DOCS, config=config)
        srv.set_faults(statuses=[400])
        srv.clear()
        assert reranker.rerank(QUERY + "?", DOCS, config=config) is None
        assert len([r for r in srv.requests if r.method == "POST"]) == 1


def test_retry_after_is_honoured_and_a_longer_one_gives_up_at_once():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 2, "rerank_timeout": 2.0}
        reranker.rerank(QUERY, DOCS, config=config)
        client.set_backoff_scale(1.0)
        srv.set_faults(statuses=[429], retry_after=0.2)
        assert reranker.rerank(QUERY + "?", DOCS, config=config)[0][0] == BEST
        srv.set_faults(statuses=[429, 429, 429], retry_after=30)
        srv.clear()
        assert reranker.rerank(QUERY + "!", DOCS, config=config) is None
        assert len([r for r in srv.requests if r.method == "POST"]) == 1


def test_the_deadline_covers_retries():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 10, "rerank_timeout": 1.0}
        reranker.rerank(QUERY, DOCS, config=config)
        srv.set_faults(delay=0.4, statuses=[503] * 10)
        loop = asyncio.new_event_loop()
        started = loop.time()
        assert loop.run_until_complete(reranker.arerank(QUERY + "?", DOCS, config=config)) is None
        assert loop.time() - started < 1.0 + 0.5  # the budget, plus scheduling slack (no timing claim beyond it)
        loop.close()


def test_breaker_opens_then_tries_once_after_the_cooldown():
    with _working() as srv:
        config = {
            "rerank_endpoint": srv.url,
            "rerank_retries": 0,
            "rerank_breaker_failures": 2,
            "rerank_breaker_cooldown": 0.3,
        }
        reranker.rerank(QUERY, DOCS, config=config)
        srv.set_faults(statuses=[500] * 100)
        assert reranker.rerank("a", DOCS, config=config) is None
        assert reranker.rerank("b", DOCS, config=config) is None
        srv.clear()
        assert reranker.rerank("c", DOCS, config=config) is None  # open: nothing sent
        assert srv.requests == []
        srv.recover()
        import time

        time.sleep(0.35)
        assert reranker.rerank(QUERY + "?", DOCS, config=config)[0][0] == BEST  # half-open trial closes it


def test_empty_list_returns_empty_without_a_request():
    with _working() as srv:
        assert reranker.rerank(QUERY, [], config={"rerank_endpoint": srv.url}) == []
        assert srv.requests == []


def test_unconfigured_and_bad_settings_return_none():
    assert reranker.rerank(QUERY, DOCS, config={}) is None
    assert reranker.rerank(QUERY, DOCS, config={"rerank_timeout": "soon"}) is None
    assert (
        reranker.rerank(
            QUERY, DOCS, config={"rerank_endpoint": "http://127.0.0.1:%d" % _free_port(), "rerank_timeout": 1}
        )
        is None
    )


def test_refused_connection_probe_says_so():
    report = reranker.probe({"rerank_endpoint": "http://127.0.0.1:%d" % _free_port()})
    assert not report["ok"] and report["verdict"] == "unreachable"
    assert len(report["attempts"]) == 1  # no point trying every route on a closed port


def test_llamacpp_without_reranking_and_a_generative_vllm_are_explained():
    with start("llamacpp_norerank") as srv:
        report = reranker.probe({"rerank_endpoint": srv.url})
        assert report["verdict"] == "unsupported" and "--reranking" in report["reason"]
    with start("vllm_generative") as srv:
        report = reranker.probe({"rerank_endpoint": srv.url})
        assert not report["ok"] and "does not support Rerank" in report["reason"]


def test_sync_rerank_works_inside_a_running_event_loop():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url}

        async def caller():
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            task = asyncio.create_task(ticker())
            ranked = reranker.rerank(QUERY, DOCS, config=config)  # blocking, inside the loop: no crash, no deadlock
            again = await reranker.arerank(QUERY, DOCS, config=config)
            await asyncio.sleep(0.01)  # the loop is still alive and runs its other tasks
            task.cancel()
            return ranked, again, ticks

        ranked, again, ticks = asyncio.run(caller())
        assert ranked[0][0] == BEST and again == ranked and ticks > 0


def test_arerank_propagates_cancellation():
    with _working() as srv:
        srv.set_faults(delay=2.0)

        async def main():
            task = asyncio.create_task(reranker.arerank(QUERY, DOCS, config={"rerank_endpoint": srv.url}))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())


def test_bearer_only_with_a_key_and_the_stored_key_is_used_for_the_placeholder(monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, "stored-secret-key-123")
    with start("cohere", api_key="stored-secret-key-123") as srv:
        assert (
            reranker.rerank(
                QUERY,
                DOCS,
                config={
                    "rerank_endpoint": srv.url,
                    "rerank_api_key": API_KEY_PLACEHOLDER,
                    "rerank_model": "rerank-v3.5",
                },
            )[0][0]
            == BEST
        )
        assert all(
            r.headers.get("authorization") == "Bearer stored-secret-key-123" for r in srv.requests if r.method == "POST"
        )
    with start("tei19") as srv:
        reranker.rerank(QUERY, DOCS, config={"rerank_endpoint": srv.url, "rerank_api_key": ""})
        assert srv.requests and all("authorization" not in r.headers for r in srv.requests)


def test_a_wrong_key_is_reported_as_an_auth_failure():
    with start("cohere", api_key="right-key") as srv:
        report = reranker.probe(
            {"rerank_endpoint": srv.url, "rerank_api_key": "wrong-key", "rerank_model": "rerank-v3.5"}
        )
        assert report["verdict"] == "auth" and "rerank_api_key" in report["reason"]


def test_a_key_echoed_in_the_status_lines_reason_phrase_never_reaches_httpxs_log(caplog):
    """httpx logs each answer's status line at INFO with the server's own reason phrase; a
    host that logs at INFO would keep a key a server wrote there."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class EchoesTheKey(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(401, self.headers.get("Authorization", ""))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoesTheKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = "sk-echoed-in-the-reason-0123456789"
    caplog.set_level(logging.INFO)
    try:
        config = {"rerank_endpoint": f"http://127.0.0.1:{server.server_address[1]}", "rerank_api_key": secret}
        assert reranker.probe(config)["verdict"] == "auth"
    finally:
        server.shutdown()
        server.server_close()
    status_lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert status_lines and all(line.endswith('"HTTP/1.1 401 Unauthorized"') for line in status_lines), status_lines
    assert secret not in caplog.text


def test_the_key_never_appears_in_logs_reports_or_errors(caplog, monkeypatch):
    secret = "sk-live-very-secret-0123456789"
    caplog.set_level(logging.DEBUG)
    with start("cohere", api_key="another-key") as srv:
        config = {
            "rerank_endpoint": srv.url,
            "rerank_api_key": secret,
            "rerank_model": "rerank-v3.5",
            "rerank_retries": 0,
        }
        report = reranker.probe(config)
        assert reranker.rerank(QUERY, DOCS, config=config) is None
        srv.set_faults(statuses=[500] * 5)
        reranker.rerank(QUERY, DOCS, config=config)
        exc_texts = []
        try:
            asyncio.run(score.score_documents(scorers.choose(reranker.load_settings(config)), QUERY, DOCS))
        except Exception as exc:  # the internal API raises typed errors; their text must be clean
            exc_texts.append(repr(exc) + str(exc))
        blob = (
            str(report)
            + caplog.text
            + " ".join(exc_texts)
            + str(reranker.status())
            + repr(reranker.load_settings(config))
        )
        assert secret not in blob
        assert exc_texts


class _Redirector:
    """A loopback server that answers every POST with 307 to ``location`` + path."""

    def __init__(self, location: str):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Redirect(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(307)
                self.send_header("Location", location + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()


def test_the_key_does_not_follow_a_redirect_to_another_host():
    with start("tei19") as target:
        elsewhere = target.url.replace("127.0.0.1", "localhost")  # another host for httpx
        with _Redirector(elsewhere) as origin:
            ranked = reranker.rerank(
                QUERY, DOCS, config={"rerank_endpoint": origin.url, "rerank_api_key": "k-123", "rerank_api": "rerank"}
            )
        assert ranked and ranked[0][0] == BEST  # the redirect was followed...
        posts = [r for r in target.requests if r.method == "POST"]
        assert posts and all("authorization" not in r.headers for r in posts)  # ...without the key


def test_with_the_privacy_guard_on_a_redirect_is_not_followed():
    with start("tei19") as target:
        with _Redirector(target.url) as origin:
            config = {"rerank_endpoint": origin.url, "rerank_api": "rerank", "rerank_private_only": True}
            assert reranker.rerank(QUERY, DOCS, config=config) is None
            report = reranker.probe(config)
        assert not report["ok"] and "307" in str(report["attempts"])
        assert target.requests == []  # nothing reached the redirect's target


def test_documents_may_be_any_iterable_and_bad_types_give_none():
    with _working() as srv:
        config = {"rerank_endpoint": srv.url}
        assert reranker.rerank(QUERY, (d for d in DOCS), config=config)[0][0] == BEST
        assert reranker.rerank(QUERY, [1, 2], config=config) is None
        assert reranker.rerank(None, DOCS, config=config) is None
        assert reranker.rerank(QUERY, DOCS, config="not a mapping") is None


# --- a pair longer than the model reads at once ------------------------------------------------
LONG_ANSWER = "To restart the grafana container run docker compose restart grafana. " + "It keeps its volume. " * 400


@pytest.mark.parametrize(
    "kind, options",
    [("llamacpp", {}), ("vllm_crossencoder", {"max_model_len": 512})],
    ids=["llama.cpp, its physical batch (500)", "vLLM, its context length (400)"],
)
def test_a_long_memory_is_cut_to_what_the_model_reads_and_the_server_remembers_it(kind, options):
    # Before: the probe passed, then every search holding one memory past ~2,000 characters
    # failed whole (llama.cpp's 500 "input (N tokens) is too large to process", vLLM's 400
    # "maximum context length is 512 tokens") and the reranker was never used.
    docs = [DOCS[0], LONG_ANSWER, DOCS[2]]
    with start(kind, **options) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_retries": 0, "rerank_cache": False}
        first = reranker.rerank(QUERY, docs, config=config)
        assert first is not None and first[0][0] == 1 and sorted(i for i, _ in first) == [0, 1, 2]
        refused = [r for r in srv.requests if r.method == "POST" and len((r.json or {}).get("documents") or ()) == 3]
        srv.clear()
        again = reranker.rerank(QUERY, docs, config=config)
        scored = [r for r in srv.requests if r.method == "POST" and (r.json or {}).get("documents")]
    assert len(refused) >= 2  # the refused request, then the cut one
    assert again == first and len(scored) == 1  # learned: the next call is cut at once
    assert len(scored[0].json["documents"][1]) < len(LONG_ANSWER)


def test_a_pair_too_long_is_read_from_each_servers_words():
    from helpers.scoring import server_errors

    llama = json.dumps(
        {
            "error": {
                "code": 500,
                "message": "input (657 tokens) is too large to process. increase the physical batch size "
                "(current batch size: 512)",
                "type": "server_error",
            }
        }
    )
    vllm_now = json.dumps(
        {
            "error": {
                "message": "You passed 657 input tokens and requested 0 output tokens. However, the model's "
                "context length is only 512 tokens, resulting in a maximum input length of 512 tokens.",
                "type": "BadRequestError",
                "code": 400,
            }
        }
    )
    vllm_before = json.dumps(
        {
            "object": "error",
            "message": "This model's maximum context length is 512 tokens. However, you requested 657 tokens "
            "in the input for score.",
            "code": 400,
        }
    )
    for body in (llama, vllm_now, vllm_before):
        assert server_errors.read(body).pair_tokens == (657, 512)
    assert (
        server_errors.read(
            '{"error": "input (5 tokens) is too large to process. (current batch size: 512)"}'
        ).pair_tokens
        is None
    )


def test_a_query_too_long_for_the_model_by_itself_is_cut_too_its_message_kept():
    # The rerank query is the user's message, then the newest history (2,000 characters by
    # default): alone past a small physical batch. The message comes first and stays.
    query = QUERY + ". " + "Earlier we talked about the dashboards on atlas and their ports. " * 30
    with start("llamacpp", n_ubatch=256) as srv:
        config = {"rerank_endpoint": srv.url, "rerank_api": "rerank", "rerank_retries": 0, "rerank_cache": False}
        ranked = reranker.rerank(query, [DOCS[0], LONG_ANSWER, DOCS[2]], config=config)
        sent = [r.json for r in srv.requests if r.method == "POST" and (r.json or {}).get("documents")]
    assert ranked is not None and ranked[0][0] == 1
    assert sent[-1]["query"].startswith(QUERY) and len(sent[-1]["query"]) < len(query)
