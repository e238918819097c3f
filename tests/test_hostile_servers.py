"""The client against hostile servers on 127.0.0.1 (tests/servers/hostile.py): answers too
large to hold, gzip bombs, broken gzip, redirect loops, unreadable numbers and headers, a
slow-drip TEI /info, a name that rebinds to a public address, a cancelled breaker trial.
Each one ends as a typed reranker error with a clear reason (or a probe that goes on to the
next route), within the call's deadline, and never connects anywhere but loopback."""

import asyncio
import ipaddress
import logging
import json
import socket
import time

import pytest

from helpers import reranker, vocabulary
from helpers.deadline import Deadline
from helpers.scoring import client, endpoint_guard, score, scorers, wire
from helpers.errors import BreakerOpen, MalformedResponse, Refused, RerankError, ResponseTooLarge
from helpers.settings import Settings
from helpers.scoring.wire import RERANK, TEI, Route
from tests.servers import hostile, start

QUERY = "how do I restart the grafana container"
DOCS = ["The user is vegetarian.", "To restart the grafana container run docker compose restart grafana."]
TEI_ROUTE = Route(TEI, "/rerank")
TEI_ANSWER = b'[{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]'


def _settings(url: str, **extra) -> Settings:
    return Settings.from_mapping({"rerank_api": "auto", "rerank_endpoint": url, "rerank_retries": 0, **extra})


def _score(settings: Settings) -> list[float]:
    return asyncio.run(client.score(settings, TEI_ROUTE, QUERY, DOCS, Deadline.after(settings.timeout)))


def _probe(url: str, **extra) -> dict:
    return asyncio.run(reranker.aprobe({"rerank_api": "auto", "rerank_endpoint": url, "rerank_retries": 0, **extra}))


def _on(path: str, answer) -> dict:
    return {path: answer}


# --- answers too large to hold ----------------------------------------------------------------
def test_an_answer_larger_than_the_cap_is_refused_before_it_is_read_whole():
    padding = 64 << 20
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json"}, hostile.padded_json(TEI_ANSWER, padding)
    )
    with hostile.serve("tei19", _on("/rerank", script)) as srv:
        with pytest.raises(ResponseTooLarge) as caught:
            _score(_settings(srv.url))
        assert "too large" in str(caught.value)
        assert srv.finished("/rerank") == 0 and srv.sent["/rerank"] < padding


def _echoing_every_document(request) -> hostile.Answer:
    """vLLM's /rerank answer: each document echoed, escaped to ASCII (6 bytes for a 2-byte
    character), with a usage envelope."""
    documents = json.loads(request.body)["documents"]
    results = [
        {"index": i, "document": {"text": text, "multi_modal": None}, "relevance_score": 1.0 - i / len(documents)}
        for i, text in enumerate(documents)
    ]
    answer = {"id": "rerank-1", "model": "m", "usage": {"total_tokens": 9}, "results": results}
    return hostile.Answer(200, {"Content-Type": "application/json"}, [json.dumps(answer, ensure_ascii=True).encode()])


def test_an_answer_echoing_every_document_fits_its_ceiling_however_long_the_documents():
    documents = [f"mémoire numéro {i}: " + "é" * 7_980 for i in range(20)]  # 20 x 8,000 characters
    with hostile.serve("tei19", _on("/v1/rerank", _echoing_every_document)) as srv:
        scores = asyncio.run(
            client.score(_settings(srv.url), Route(RERANK, "/v1/rerank"), QUERY, documents, Deadline.after(10))
        )
    assert scores == pytest.approx([1.0 - i / 20 for i in range(20)])


def test_an_answer_is_held_to_what_was_asked_not_a_fixed_size():
    # A hostile server answering two short documents with 1 MiB: before, read and parsed
    # (up to 8 MiB, ~180 ms with every chat's event loop held); now cut off.
    assert client.answer_ceiling(2, 200) < 128 << 10
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json"}, hostile.padded_json(TEI_ANSWER, 1 << 20)
    )
    with hostile.serve("tei19", _on("/rerank", script)) as srv:
        with pytest.raises(ResponseTooLarge) as caught:
            _score(_settings(srv.url))
    assert "more than 66 KiB" in str(caught.value)


def test_a_gzip_bomb_is_counted_after_decompression_and_cut_off():
    bomb = hostile.gzip_bomb(TEI_ANSWER, 200 << 20)  # ~200 KB on the wire, 200 MiB inflated
    assert len(bomb) < 1 << 20
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, [bomb]
    )
    with hostile.serve("tei19", _on("/rerank", script)) as srv:
        with pytest.raises(ResponseTooLarge):
            _score(_settings(srv.url))


def test_a_small_gzipped_answer_still_reads():
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, [hostile.gzipped(TEI_ANSWER)]
    )
    with hostile.serve("tei19", _on("/rerank", script)) as srv:
        assert _score(_settings(srv.url)) == [0.1, 0.9]


def test_an_oversized_answer_on_one_route_is_named_and_the_probe_goes_on():
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json"}, hostile.padded_json(b"[]", 32 << 20)
    )
    with hostile.serve("tei19", _on("/v1/rerank", script)) as srv:
        report = _probe(srv.url)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert "too large" in report["attempts"][0]["reason"]


# --- errors that used to escape the typed mapping ---------------------------------------------
def test_broken_gzip_on_one_route_is_a_malformed_answer_and_the_probe_goes_on():
    script = lambda request: hostile.Answer(
        200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, [b"\x1f\x8b\x08\x00garbage-not-deflate"]
    )
    with hostile.serve("tei19", _on("/v1/rerank", script)) as srv:
        report = _probe(srv.url)
        with pytest.raises(MalformedResponse):
            asyncio.run(client.score(_settings(srv.url), Route(RERANK, "/v1/rerank"), QUERY, DOCS, Deadline.after(5)))
    assert report["ok"] and report["route"] == "tei /rerank"
    assert "compressed" in report["attempts"][0]["reason"]


def test_a_redirect_loop_on_one_route_is_a_server_error_and_the_probe_goes_on():
    with hostile.serve("tei19", _on("/v1/rerank", hostile.redirect_loop)) as srv:
        report = _probe(srv.url)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert "redirect" in report["attempts"][0]["reason"]


def test_a_route_closed_without_an_answer_is_no_unreachable_host_and_the_probe_goes_on():
    # A proxy that serves only TEI's /rerank and drops every other path (nginx "return 444").
    with hostile.serve("tei19", {"/v1/rerank": hostile.unanswered, "/v2/rerank": hostile.unanswered}) as srv:
        report = _probe(srv.url)
    assert report["ok"] and report["route"] == "tei /rerank", report
    assert "disconnected" in report["attempts"][0]["reason"].lower()


@pytest.mark.parametrize("location", ["http://xn--/", "http://127.0.0.1:{closed}/elsewhere"])
def test_a_redirect_nowhere_is_a_transport_error_of_that_route_and_the_probe_goes_on(location):
    # A name IDNA refuses (httpx raises UnicodeError, no HTTPError), a port nobody listens on
    # (a refused connection, but not the endpoint's own host).
    moved = lambda request: hostile.Answer(
        307, {"Location": location.format(closed=hostile.free_port()), "Content-Length": "0"}
    )
    with hostile.serve("tei19", {"/v1/rerank": moved}) as srv:
        report = _probe(srv.url)
        with pytest.raises(RerankError):
            asyncio.run(client.score(_settings(srv.url), Route(RERANK, "/v1/rerank"), QUERY, DOCS, Deadline.after(5)))
    assert report["ok"] and report["route"] == "tei /rerank", report


def test_a_batch_limit_with_five_thousand_digits_is_no_limit_and_the_probe_goes_on():
    body = json.dumps(
        {"detail": [{"type": "x", "loc": ["body"], "msg": f"List should have at most {'9' * 5000} items"}]}
    ).encode()
    script = lambda request: hostile.Answer(422, {"Content-Type": "application/json"}, [body])
    with hostile.serve("tei19", _on("/v1/rerank", script)) as srv:
        report = _probe(srv.url)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert report["attempts"][0]["status"] == 422


def test_an_error_answer_is_read_only_as_far_as_its_message_and_the_limit_in_it_still_counts(monkeypatch):
    """An error body is read on the event loop every chat shares: 8 MiB of echoed input is
    cut at the client's ERROR_BODY_BYTES, and the batch limit its message states first is
    still learned from the cut."""
    message = {
        "type": "too_long",
        "loc": ["body", "texts"],
        "msg": "List should have at most 1 item after validation, not 2",
    }
    head = json.dumps({"detail": [{**message, "input": ["x" * 100]}]}).encode()[:-3]  # the list's end never comes
    chunks = [head] + [b', "' + b"y" * (1 << 20) + b'"'] * 8
    script = lambda request: hostile.Answer(422, {"Content-Type": "application/json"}, chunks)
    read = []
    real = client.server_errors.read
    monkeypatch.setattr(client.server_errors, "read", lambda text: read.append(len(text)) or real(text))
    with hostile.serve("tei19", _on("/rerank", script)) as srv:
        with pytest.raises(client.BatchTooLarge) as info:
            _score(_settings(srv.url))
    assert read and set(read) == {client.ERROR_BODY_BYTES}  # what was read of each 8 MiB (ASCII: bytes = characters)
    assert info.value.limit == 1 and len(str(info.value)) < 600


def test_a_retry_after_that_is_no_date_is_ignored_and_the_probe_goes_on():
    script = lambda request: hostile.Answer(503, {"Content-Type": "text/plain", "Retry-After": "soon"}, [b"busy"])
    with hostile.serve("tei19", _on("/v1/rerank", script)) as srv:
        report = _probe(srv.url, rerank_retries=1)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert report["attempts"][0]["status"] == 503


def _json(status: int, body: bytes):
    return lambda request: hostile.Answer(status, {"Content-Type": "application/json"}, [body])


def test_an_overloaded_server_is_busy_not_without_a_route_and_passes_once_it_has_room():
    """TEI past its permits answers 429 "Model is overloaded": the route is there, the
    server is full. Test connection says so (not "no route"), and keeps nothing: the next
    probe, once the server has room, detects it."""
    overloaded = _json(429, b'{"error":"Model is overloaded","error_type":"Overloaded"}')
    with hostile.serve("tei19", _on("/rerank", overloaded)) as srv:
        report = _probe(srv.url, rerank_retries=1)
        assert not report["ok"] and report["verdict"] == "busy"
        assert report["reason"] == "the server was busy or still loading: tei /rerank: HTTP 429: Model is overloaded"
        del srv.scripts["/rerank"]
        report = _probe(srv.url)
    assert report["ok"] and report["route"] == "tei /rerank"


def test_a_llama_cpp_still_loading_its_model_is_busy_and_the_chat_line_says_so():
    """llama.cpp answers 503 "Loading model" on every path until its model is in memory."""
    loading = _json(503, b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}')
    paths = {route.path for route in wire.candidate_routes("http://127.0.0.1", "auto")}
    with hostile.serve("llamacpp", {path: loading for path in paths}) as srv:
        report = _probe(srv.url)
        assert report["verdict"] == "busy" and report["reason"].endswith("HTTP 503: Loading model")
        assert reranker.rerank(QUERY, DOCS, config={"rerank_endpoint": srv.url}) is None  # the caller's order
        settings = _settings(srv.url)
        with pytest.raises(RerankError) as failed:
            asyncio.run(score.score_documents(scorers.choose(settings), QUERY, DOCS))
    said = vocabulary.reranker_unavailable(failed.value, settings, scorers.REMOTE)
    assert said == "the server was busy or still loading (HTTP 503)"


def test_a_servers_control_characters_never_reach_a_reason_or_a_log_line(caplog):
    """A newline forges a second log line, an escape clears the CLI's terminal, a
    right-to-left override turns a reason around: a server's words are one visible line."""
    said = "bad request\nINFO a0_reranker: all is well \x1b[2J\x1b[31mred\x1b[0m \u202eexe.gnp\u2028end"
    caplog.set_level(logging.INFO, logger="a0_reranker")
    paths = {route.path for route in wire.candidate_routes("http://127.0.0.1", "auto")}
    answer = _json(400, json.dumps({"error": said}).encode())
    with hostile.serve("tei19", {path: answer for path in paths}) as srv:
        report = _probe(srv.url)
        assert reranker.rerank(QUERY, DOCS, config={"rerank_endpoint": srv.url}) is None
    shown = [report["reason"], *(a["reason"] for a in report["attempts"]), *(r.getMessage() for r in caplog.records)]
    assert "bad request INFO a0_reranker: all is well" in report["reason"]
    for text in shown:
        assert text.isprintable(), repr(text)


def test_an_auth_refusal_says_whether_a_key_was_sent_and_what_the_server_said():
    refused = _json(403, b'{"error": "Forbidden: origin 10.0.0.5 not allowed by policy"}')
    with hostile.serve("tei19", _on("/v1/rerank", refused)) as srv:
        none_set = _probe(srv.url)
        sent = _probe(srv.url, rerank_api_key="a-key-of-some-kind")
    assert none_set["verdict"] == sent["verdict"] == "auth"
    assert none_set["reason"] == (
        "the server wants an API key and none is set: rerank /v1/rerank: "
        "HTTP 403: Forbidden: origin 10.0.0.5 not allowed by policy; type it into 'rerank_api_key'"
    )
    assert sent["reason"].startswith("the server refused the API key: rerank /v1/rerank: HTTP 403: Forbidden: origin")
    assert "a-key-of-some-kind" not in str(sent)


def test_a_probe_that_runs_out_of_time_names_the_route_it_waited_on():
    hangs = lambda request: hostile.Answer(200, {"Content-Type": "application/json"}, [b"["], every=5)
    with hostile.serve("tei19", _on("/v1/rerank", hangs)) as srv:
        report = _probe(srv.url, rerank_timeout=0.5)
    assert report["verdict"] == "timeout"
    assert report["reason"].startswith(f"{srv.url} did not answer in time on rerank /v1/rerank: ")


def test_the_synchronous_probe_waits_for_the_say_a_passed_probe_goes_on_to_measure():
    """The probe passes at once; the calibration after it takes longer than the timeout.
    The synchronous probe (the CLI's, another plugin's) reports the probe, not "not in time"."""

    def slow_calibration(request):
        body = json.loads(request.body)
        texts = body.get("texts") or body["documents"]
        if len(texts) > 3:  # a calibration question (the probe sends three)
            time.sleep(0.15)
        scores = [0.9 if "Paris" in t else 0.2 if "Lyon" in t else 0.01 for t in texts]
        return _json(200, json.dumps([{"index": i, "score": x} for i, x in enumerate(scores)]).encode())(request)

    with hostile.serve("tei19", _on("/rerank", slow_calibration)) as srv:
        report = reranker.probe({"rerank_endpoint": srv.url + "/rerank", "rerank_timeout": 0.5})
    assert report["ok"] and report["verdict"] == "ok", report["reason"]
    assert report["trust"]["say"] != "unmeasured", report["trust"]


def test_an_endpoint_with_full_width_letters_is_a_bad_setting_named_in_the_probe():
    port = hostile.free_port()
    report = reranker.probe(
        {"rerank_api": "auto", "rerank_endpoint": f"http://ｌｏｃａｌｈｏｓｔ:{port}", "rerank_retries": 0}
    )
    assert not report["ok"] and report["verdict"] == "bad_setting"
    assert "rerank_endpoint" in report["reason"]
    assert len(report["attempts"]) <= 1  # every route would fail the same way


def test_a_key_an_http_header_cannot_carry_is_a_bad_setting_and_never_echoed():
    with start("tei19") as srv:
        key = "clé-secrète-1234"
        report = reranker.probe({"rerank_api": "auto", "rerank_endpoint": srv.url, "rerank_api_key": key})
        assert reranker.rerank(QUERY, DOCS, config={"rerank_endpoint": srv.url, "rerank_api_key": key}) is None
        assert srv.requests == []
    assert not report["ok"] and report["verdict"] == "bad_setting"
    assert "rerank_api_key" in report["reason"] and key not in json.dumps(report)


# --- the circuit breaker after a cancelled trial ----------------------------------------------
def test_a_cancelled_trial_call_lets_the_next_caller_try():
    config = {"rerank_endpoint": "", "rerank_breaker_failures": 1, "rerank_breaker_cooldown": 0, "rerank_retries": 0}
    with start("tei19") as srv:
        config["rerank_endpoint"] = srv.url
        settings = reranker.load_settings(config)

        async def scenario():
            srv.set_faults(statuses=[500] * 20)
            with pytest.raises(RerankError):  # the probe fails: the breaker opens
                await score.score_documents(scorers.choose(settings), QUERY, DOCS)
            srv.set_faults(delay=5.0)
            trial = asyncio.ensure_future(score.score_documents(scorers.choose(settings), QUERY, DOCS))
            while not srv.requests or srv.requests[-1].path == "/v1/rerank" and len(srv.requests) < 2:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            trial.cancel()  # the trial is cancelled: routine (a chat stopped, a recall timed out)
            with pytest.raises(asyncio.CancelledError):
                await trial
            srv.recover()
            return await score.score_documents(scorers.choose(settings), QUERY, DOCS)

        try:
            scored = asyncio.run(scenario())
        except BreakerOpen:
            pytest.fail("the breaker stayed open after a cancelled trial")
    assert scored.scores[1] > scored.scores[0]


# --- TEI /info inside the call's deadline and rules -------------------------------------------
def test_a_slow_drip_tei_info_is_cut_at_the_probes_deadline():
    body = b'{"max_client_batch_size": 8, "model_id": "' + b"x" * 100 + b'"}'
    with hostile.serve("tei19", _on("/info", hostile.drip(body, every=0.3))) as srv:
        report = _probe(srv.url, rerank_timeout=2)
        assert srv.finished("/info") == 0  # the probe did not sit through the drip
    assert report["ok"] and report["route"] == "tei /rerank"
    assert report["batch_limit"] == 32  # TEI's default: /info could not be read in time


def test_a_batch_size_of_true_is_no_count():
    with hostile.serve("tei19", _on("/info", _json(200, b'{"max_client_batch_size": true}'))) as srv:
        report = _probe(srv.url)
    assert report["ok"] and report["batch_limit"] == 32  # not True, which splits into one-document requests


def test_tei_info_does_not_follow_a_redirect_while_private_only_is_on():
    with hostile.serve("tei19", {}) as elsewhere:
        moved = lambda request: hostile.Answer(302, {"Location": elsewhere.url + "/info", "Content-Length": "0"})
        with hostile.serve("tei19", _on("/info", moved)) as srv:
            report = _probe(srv.url, rerank_private_only=True)
        assert elsewhere.requests == []
    assert report["ok"] and report["route"] == "tei /rerank"


# --- DNS rebinding past the privacy guard -----------------------------------------------------
@pytest.fixture
def rebinding(monkeypatch):
    """``rebind.test`` answers 127.0.0.1 the first time it is looked up and a public address
    (not a documentation range: Python counts 203.0.113.0/24 as private)
    after; every connection to anything but loopback is refused (and recorded)."""
    real_getaddrinfo, real_connect, real_connect_ex = (
        socket.getaddrinfo,
        socket.socket.connect,
        socket.socket.connect_ex,
    )
    state = {"lookups": 0, "public": "8.8.8.8", "rebind": True, "off_loopback": []}

    def getaddrinfo(host, port, *args, **kwargs):
        if host in ("rebind.test", b"rebind.test"):  # asyncio passes the name as bytes
            state["lookups"] += 1
            address = "127.0.0.1" if state["lookups"] == 1 or not state["rebind"] else state["public"]
            return real_getaddrinfo(address, port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    def guard(address):
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and not ipaddress.ip_address(host.split("%")[0]).is_loopback:
            state["off_loopback"].append(host)
            raise ConnectionRefusedError(f"test: no connection to {host}")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    endpoint_guard.forget()
    yield state
    endpoint_guard.forget()


def test_a_name_that_rebinds_to_a_public_address_is_reached_only_at_the_checked_one(rebinding):
    with start("tei19") as srv:
        config = {"rerank_endpoint": f"http://rebind.test:{srv.port}", "rerank_private_only": True, "rerank_retries": 0}
        ranked = reranker.rerank(QUERY, DOCS, config=config)
        assert ranked is not None and ranked[0][0] == 1  # every request went to the checked 127.0.0.1
        assert {r.headers.get("host") for r in srv.requests} == {f"rebind.test:{srv.port}"}  # Host stays the name
    assert rebinding["off_loopback"] == []


def test_a_name_that_has_turned_public_since_the_check_is_refused_not_connected(rebinding):
    with start("tei19") as srv:
        settings = Settings.from_mapping(
            {"rerank_endpoint": f"http://rebind.test:{srv.port}", "rerank_private_only": True, "rerank_retries": 0}
        )
        assert asyncio.run(endpoint_guard.check(settings, scorers.REMOTE)) == ""  # 127.0.0.1: allowed
        endpoint_guard.forget()  # the remembered verdict expires; the name now answers a public address
        with pytest.raises(Refused):
            _score(settings)
        assert srv.requests == []
    assert rebinding["off_loopback"] == []
