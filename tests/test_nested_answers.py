"""Bodies nested deeper than any answer (tests/servers/hostile.py on 127.0.0.1): an error body
of 60,000 ``[`` (json raises RecursionError), a model list nested 25,000 deep (Python's parser
raises MemoryError), a 200 answer whose error is nested too deeply to print. Each is a typed
reranker error naming the HTTP status, the probe goes on to the next route, and aprobe,
documented never to raise, does not."""

import asyncio
import json

import pytest

from helpers import reranker
from helpers.deadline import Deadline
from helpers.errors import MalformedResponse, ServerError
from helpers.scoring import client, server_errors
from helpers.scoring.wire import RERANK, Route
from helpers.settings import Settings
from tests.servers import hostile

QUERY = "how do I restart the grafana container"
DOCS = ["The user is vegetarian.", "To restart the grafana container run docker compose restart grafana."]
DEEP_BRACKETS = b"[" * 60000
DEEP_MODEL_LIST = json.dumps(
    {"error": {"message": "Invalid model. Available model names are [" + "-" * 25000 + "1]"}}
).encode()
# Deep enough that decoding it, or printing its error, runs out of stack.
DEEP_ERROR_ON_200 = b'{"error": ' + b"[" * 980 + b"]" * 980 + b"}"


def _answer(status: int, body: bytes):
    return lambda request: hostile.Answer(status, {"Content-Type": "application/json"}, [body])


def _probe(url: str) -> dict:
    return asyncio.run(reranker.aprobe({"rerank_api": "auto", "rerank_endpoint": url, "rerank_retries": 0}))


def _score(url: str, path: str = "/v1/rerank") -> list[float]:
    settings = Settings.from_mapping({"rerank_api": "auto", "rerank_endpoint": url, "rerank_retries": 0})
    return asyncio.run(client.score(settings, Route(RERANK, path), QUERY, DOCS, Deadline.after(5)))


@pytest.mark.parametrize(
    "body",
    [DEEP_BRACKETS.decode(), DEEP_MODEL_LIST.decode(), "Available model names are [" + "~" * 25000 + "1]"],
    ids=["60000 brackets", "model list in JSON", "model list in text"],
)
def test_an_error_body_nested_too_deeply_is_read_as_not_structured(body):
    answer = server_errors.read(body)  # before: RecursionError / MemoryError
    assert answer.models == () and answer.batch_limit is None
    assert len(answer.message) <= server_errors.MESSAGE_CHARS


@pytest.mark.parametrize(
    "status, body", [(422, DEEP_BRACKETS), (400, DEEP_MODEL_LIST)], ids=["422 brackets", "400 model list"]
)
def test_a_deeply_nested_error_answer_is_a_server_error_naming_its_status_and_the_probe_goes_on(status, body):
    with hostile.serve("tei19", {"/v1/rerank": _answer(status, body)}) as srv:
        with pytest.raises(ServerError) as caught:
            _score(srv.url)
        report = _probe(srv.url)  # before: aprobe raised
    assert caught.value.status == status and f"HTTP {status}" in str(caught.value)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert report["attempts"][0]["status"] == status and f"HTTP {status}" in report["attempts"][0]["reason"]


def test_sixty_thousand_brackets_say_the_answer_is_not_structured():
    with hostile.serve("tei19", {"/v1/rerank": _answer(422, DEEP_BRACKETS)}) as srv:
        with pytest.raises(ServerError) as caught:
            _score(srv.url)
    assert str(caught.value) == f"HTTP 422: {server_errors.NOT_STRUCTURED}"


def test_a_200_answer_nested_too_deeply_is_a_malformed_answer_and_the_probe_goes_on():
    with hostile.serve("tei19", {"/v1/rerank": _answer(200, DEEP_ERROR_ON_200)}) as srv:
        with pytest.raises(MalformedResponse) as caught:
            _score(srv.url)  # before: RecursionError while printing the error
        report = _probe(srv.url)
    assert "nested too deeply" in str(caught.value)
    assert report["ok"] and report["route"] == "tei /rerank"
    assert "nested too deeply" in report["attempts"][0]["reason"]
