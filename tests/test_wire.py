"""Wire dialects: bodies as each server expects them; parsers that map every result back
through ``index`` and refuse anything that is not one finite score per document."""

import math

import pytest

from helpers.errors import MalformedResponse, ServerError
from helpers.scoring.wire import MIXEDBREAD, RERANK, SCORE, TEI, VOYAGE, candidate_routes, split_endpoint
from helpers.scoring.wire._parse import decode_json


def test_bodies_use_each_servers_field_names():
    assert RERANK.body("q", ["a", "b"], "m") == {"query": "q", "documents": ["a", "b"], "top_n": 2, "model": "m"}
    assert "model" not in RERANK.body("q", ["a"], "")
    assert TEI.body("q", ["a"], "m") == {"query": "q", "texts": ["a"], "truncate": True, "raw_scores": False}
    assert SCORE.body("q", ["a"], "m") == {"text_1": "q", "text_2": ["a"], "model": "m"}
    assert VOYAGE.body("q", ["a"], "")["top_k"] == 1
    assert MIXEDBREAD.body("q", ["a"], "")["input"] == ["a"]


@pytest.mark.parametrize(
    "dialect, payload",
    [
        (RERANK, {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}),
        (RERANK, {"data": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}),
        (
            VOYAGE,
            {"object": "list", "data": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]},
        ),
        (MIXEDBREAD, {"data": [{"index": 1, "score": 0.9, "object": "rank_result"}, {"index": 0, "score": 0.1}]}),
        (TEI, [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]),
        (
            SCORE,
            {
                "object": "list",
                "data": [{"index": 0, "object": "score", "score": 0.1}, {"index": 1, "object": "score", "score": 0.9}],
            },
        ),
    ],
)
def test_parsers_place_scores_by_index(dialect, payload):
    assert dialect.parse(payload, 2) == [0.1, 0.9]


GOOD = [{"index": 0, "relevance_score": 0.5}, {"index": 1, "relevance_score": 0.4}]


@pytest.mark.parametrize(
    "payload, fragment",
    [
        ({"results": GOOD[:1]}, "1 results for 2 documents"),
        ({"results": GOOD + [{"index": 1, "relevance_score": 0.1}]}, "3 results"),
        ({"results": [GOOD[0], {"index": 0, "relevance_score": 0.1}]}, "appears twice"),
        ({"results": [GOOD[0], {"index": 2, "relevance_score": 0.1}]}, "not in 0..1"),
        ({"results": [GOOD[0], {"index": -1, "relevance_score": 0.1}]}, "not in 0..1"),
        ({"results": [GOOD[0], {"index": True, "relevance_score": 0.1}]}, "not in 0..1"),
        ({"results": [GOOD[0], {"index": "1", "relevance_score": 0.1}]}, "not in 0..1"),
        ({"results": [GOOD[0], {"index": 1, "relevance_score": "0.1"}]}, "not a finite number"),
        ({"results": [GOOD[0], {"index": 1, "relevance_score": math.inf}]}, "not a finite number"),
        ({"results": [GOOD[0], {"index": 1, "relevance_score": None}]}, "not a finite number"),
        ({"results": [GOOD[0], {"index": 1}]}, "not a finite number"),
        # Finite, but no reranker's: the standout rule's squares would overflow on it.
        ({"results": [GOOD[0], {"index": 1, "relevance_score": -1e308}]}, "beyond any reranker's range"),
        ({"results": [GOOD[0], {"index": 10**4000, "relevance_score": 0.1}]}, r"index 10000000… \(4001 digits\)"),
        ({"results": [GOOD[0], "x"]}, "not an object"),
        ({"results": "nope"}, "expected a list"),
        ({"id": "x"}, "expected a list"),
        ("text", "expected a list"),
    ],
)
def test_parsers_reject_anything_but_one_finite_score_per_document(payload, fragment):
    with pytest.raises(MalformedResponse, match=fragment):
        RERANK.parse(payload, 2)


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"message": "The model does not support Rerank (Score) API", "type": "BadRequestError", "code": 400}},
        {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400},
        {"error": "Unauthorized"},
    ],
)
def test_an_error_body_is_a_failure_even_on_http_200(payload):
    for dialect in (RERANK, TEI, SCORE):
        with pytest.raises(ServerError):
            dialect.parse(payload, 2)


@pytest.mark.parametrize(
    "body, content_type, fragment",
    [
        (b"", "application/json", "empty"),
        (b"<html><body>Login</body></html>", "text/html", "HTML"),
        (b"<!DOCTYPE html>", "application/json", "HTML"),
        (b'{"results": [', "application/json", "not valid JSON"),
        (b'[{"index": 0, "score": NaN}]', "application/json", "not valid JSON"),
        (b"Internal error", "text/plain", "not valid JSON"),
    ],
)
def test_non_json_bodies_are_malformed(body, content_type, fragment):
    with pytest.raises(MalformedResponse, match=fragment):
        decode_json(body, content_type)


def test_json_labelled_html_is_read_as_json():
    assert decode_json(b'[{"index": 0, "score": 0.5}]', "text/html; charset=utf-8") == [{"index": 0, "score": 0.5}]
    with pytest.raises(MalformedResponse, match="HTML"):
        decode_json(b"Service Unavailable", "text/html")


def test_a_byte_order_mark_before_json_is_no_content():
    assert decode_json(b'\xef\xbb\xbf[{"index": 0, "score": 0.5}]', "application/json") == [{"index": 0, "score": 0.5}]


def test_endpoint_with_a_pasted_path_is_split():
    assert split_endpoint("http://h:8000/v1/rerank/") == ("http://h:8000", "/v1/rerank")
    assert split_endpoint("http://h:8000") == ("http://h:8000", "")
    routes = candidate_routes("http://h:8000/score", "auto")
    assert [r.path for r in routes] == ["/score", "/score"] and [r.templated for r in routes] == [False, True]


def test_candidate_order_tries_raw_text_before_the_template():
    routes = candidate_routes("http://h", "auto")
    raw = [i for i, r in enumerate(routes) if r.dialect is SCORE and not r.templated]
    templated = [i for i, r in enumerate(routes) if r.templated]
    assert raw and templated and raw[0] < templated[0]
    assert all(r.api == "rerank" for r in candidate_routes("http://h", "rerank"))
    assert all(r.dialect is SCORE for r in candidate_routes("http://h", "qwen3_score"))


def test_hosted_apis_are_known_by_host():
    assert [r.describe() for r in candidate_routes("https://api.cohere.com", "auto")] == [
        "rerank /v2/rerank",
        "rerank /v1/rerank",
    ]
    assert [r.dialect for r in candidate_routes("https://api.voyageai.com", "auto")] == [VOYAGE]
    assert [r.dialect for r in candidate_routes("https://api.mixedbread.com", "auto")] == [MIXEDBREAD]
