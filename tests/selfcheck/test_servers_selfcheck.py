"""Self-checks for the fake reranker servers in tests/servers/.

Plain httpx against real loopback HTTP: every kind's wire format, status codes and
error bodies as the protocols doc describes them, the Qwen3 template behaviour,
and every fault knob.
"""

from __future__ import annotations

import math
import threading
import time

import httpx
import pytest

from tests.servers import BODY_FAULTS, SERVER_KINDS, probability, qwen3, relevance, start
from tests.servers.fixtures import server_fixture

QUERY = "What is the capital of France?"
PARIS = "Paris is the capital and largest city of France."
LYON = "Lyon is a large city in the south-east of France, known for its cuisine."
PLANTS = "Photosynthesis converts sunlight into chemical energy in green plants."
# Irrelevant first, so a client mapping by position instead of `index` would fail.
DOCS = [PLANTS, PARIS, LYON]


@pytest.fixture
def http():
    with httpx.Client(timeout=5.0) as client:
        yield client


# -- how to send the France probe to each kind, and read scores back by index ------


def _by_index(items, key):
    return {item["index"]: item[key] for item in items}


PROBES = {
    "tei18": ("/rerank", {"query": QUERY, "texts": DOCS}, lambda j: _by_index(j, "score")),
    "tei19": ("/rerank", {"query": QUERY, "texts": DOCS}, lambda j: _by_index(j, "score")),
    "vllm014": ("/rerank", {"query": QUERY, "documents": DOCS}, lambda j: _by_index(j["results"], "relevance_score")),
    "vllm_crossencoder": (
        "/v1/rerank",
        {"query": QUERY, "documents": DOCS},
        lambda j: _by_index(j["results"], "relevance_score"),
    ),
    "infinity": ("/rerank", {"query": QUERY, "documents": DOCS}, lambda j: _by_index(j["results"], "relevance_score")),
    "llamacpp": (
        "/v1/rerank",
        {"query": QUERY, "documents": DOCS},
        lambda j: _by_index(j["results"], "relevance_score"),
    ),
    "cohere": (
        "/v2/rerank",
        {"model": "rerank-v3.5", "query": QUERY, "documents": DOCS},
        lambda j: _by_index(j["results"], "relevance_score"),
    ),
    "jina": (
        "/v1/rerank",
        {"model": "jina-reranker-v2-base-multilingual", "query": QUERY, "documents": DOCS},
        lambda j: _by_index(j["results"], "relevance_score"),
    ),
    "voyage": (
        "/v1/rerank",
        {"model": "rerank-2.5", "query": QUERY, "documents": DOCS},
        lambda j: _by_index(j["data"], "relevance_score"),
    ),
    "mixedbread": ("/v1/reranking", {"query": QUERY, "input": DOCS}, lambda j: _by_index(j["data"], "score")),
}
# vllm013 (raw Qwen3 without a template), vllm_generative and llamacpp_norerank
# cannot rank the probe; they have their own tests below.
UNRANKABLE = {"vllm013", "vllm_generative", "llamacpp_norerank"}


def test_every_kind_is_covered():
    assert set(SERVER_KINDS) == set(PROBES) | UNRANKABLE


# -- scoring model and Qwen3 prompt -------------------------------------------------


def test_scoring_ranks_the_france_probe():
    assert probability(QUERY, PARIS) >= 0.8
    assert probability(QUERY, PLANTS) <= 0.1
    assert relevance(QUERY, PARIS) > relevance(QUERY, LYON) > relevance(QUERY, PLANTS)
    assert relevance(QUERY, PARIS) == relevance(QUERY, PARIS)  # deterministic


def test_qwen3_strings_are_the_official_ones():
    assert qwen3.PREFIX == (
        "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and "
        'the Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n'
    )
    assert qwen3.SUFFIX == "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    prompt = qwen3.render_query(QUERY) + qwen3.render_document(PARIS)
    assert qwen3.parse_prompt(prompt) == (qwen3.DEFAULT_INSTRUCTION, QUERY, PARIS)
    assert qwen3.parse_prompt(QUERY + PARIS) is None
    assert qwen3.parse_prompt(qwen3.render_prompt(qwen3.render_query(QUERY), PARIS)) is None
    assert qwen3.parse_prompt(prompt[:-2]) is None  # suffix cut by truncation


# -- the probe, kind by kind --------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(PROBES))
def test_probe_ranks_relevant_first(kind, http):
    path, body, read = PROBES[kind]
    with start(kind) as srv:
        r = http.post(srv.url + path, json=body)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json")
        scores = read(r.json())
        assert sorted(scores) == [0, 1, 2]
        assert scores[1] > scores[2] > scores[0]
        order = list(scores.values())
        assert order == sorted(order, reverse=True)  # answered sorted, descending
        assert srv.requests[-1].json == body
        assert srv.errors == []


# -- TEI ------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "status", "auto_truncate"), [("tei18", 413, False), ("tei19", 422, True)])
def test_tei_batch_limit_and_info(kind, status, auto_truncate, http):
    with start(kind, max_client_batch_size=2) as srv:
        r = http.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS})
        assert r.status_code == status
        assert r.json() == {"error": "batch size 3 > maximum allowed batch size 2", "error_type": "Validation"}
        info = http.get(srv.url + "/info").json()
        assert "reranker" in info["model_type"]
        assert info["max_client_batch_size"] == 2
        assert info["auto_truncate"] is auto_truncate
        assert info["version"].startswith("1.8" if kind == "tei18" else "1.9")


def test_tei_options_and_aliases(http):
    with start("tei19") as srv:
        body = {"query": QUERY, "texts": DOCS, "raw_scores": True, "return_text": True}
        raw = http.post(srv.url + "/rerank", json=body)
        top = raw.json()[0]
        assert top == {"index": 1, "score": pytest.approx(relevance(QUERY, PARIS)), "text": PARIS}
        assert raw.headers["x-compute-type"] == "cpu"
        for path in ("/", "/invocations"):
            assert http.post(srv.url + path, json={"query": QUERY, "texts": DOCS}).json()[0]["index"] == 1
        health = http.get(srv.url + "/health")
        assert (health.status_code, health.content) == (200, b"")


def test_tei_body_errors(http):
    with start("tei18") as srv:
        url = srv.url + "/rerank"
        r = http.post(url, json={"query": QUERY, "texts": []})
        assert (r.status_code, r.json()["error_type"]) == (400, "Empty")
        r = http.post(url, json={"model": "x", "query": QUERY, "documents": DOCS})  # a Cohere-style body
        assert r.status_code == 422
        assert r.headers["content-type"].startswith("text/plain")
        assert "missing field `texts`" in r.text
        r = http.post(url, content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.headers["content-type"].startswith("text/plain")
        r = http.post(url, content=b'{"query": "q", "texts": ["a"]}')
        assert r.status_code == 415
        for path in ("/v1/rerank", "/nope"):
            r = http.post(srv.url + path, json={"query": QUERY, "texts": DOCS})
            assert (r.status_code, r.content) == (404, b"")
        assert http.get(url).status_code == 405


def test_tei_token_limit_depends_on_auto_truncate(http):
    long_text = "word " * 600
    body = {"query": QUERY, "texts": [long_text]}
    with start("tei18") as srv:
        r = http.post(srv.url + "/rerank", json=body)
        assert r.status_code == 413 and "must have less than 512 tokens" in r.json()["error"]
        assert http.post(srv.url + "/rerank", json={**body, "truncate": True}).status_code == 200
    with start("tei19") as srv:
        assert http.post(srv.url + "/rerank", json=body).status_code == 200


def test_tei_api_key(http):
    with start("tei19", api_key="sekret") as srv:
        r = http.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS})
        assert (r.status_code, r.content) == (401, b"")
        assert http.get(srv.url + "/info").status_code == 401
        assert http.get(srv.url + "/health").status_code == 200
        auth = {"Authorization": "Bearer sekret"}
        ok = http.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS}, headers=auth)
        assert ok.status_code == 200


def _parallel_posts(url, body, n):
    results = [None] * n

    def post(i):
        results[i] = httpx.post(url, json=body, timeout=5.0)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_tei19_overload_fails_fast_without_retry_after():
    with start("tei19", max_concurrent_texts=4, latency=0.3) as srv:
        replies = _parallel_posts(srv.url + "/rerank", {"query": QUERY, "texts": DOCS}, 2)
        statuses = sorted(r.status_code for r in replies)
        assert statuses == [200, 429]
        overloaded = next(r for r in replies if r.status_code == 429)
        assert overloaded.json() == {"error": "Model is overloaded", "error_type": "Overloaded"}
        assert "retry-after" not in overloaded.headers


def test_tei18_overload_waits_for_permits():
    with start("tei18", max_concurrent_texts=4, latency=0.2) as srv:
        began = time.monotonic()
        replies = _parallel_posts(srv.url + "/rerank", {"query": QUERY, "texts": DOCS}, 2)
        assert [r.status_code for r in replies] == [200, 200]
        assert time.monotonic() - began >= 0.4


# -- vLLM ------------------------------------------------------------------------------


def _templated():
    return {"query": qwen3.render_query(QUERY), "documents": [qwen3.render_document(d) for d in DOCS]}


def _rerank_scores(http, url, body):
    r = http.post(url, json=body)
    assert r.status_code == 200, r.text
    return _by_index(r.json()["results"], "relevance_score")


def test_vllm013_needs_the_client_template(http):
    with start("vllm013") as srv:
        raw = _rerank_scores(http, srv.url + "/rerank", {"query": QUERY, "documents": DOCS})
        assert raw[0] > raw[1]  # the irrelevant document wins: the real bug
        assert all(0.2 < s < 0.95 for s in raw.values())
        good = _rerank_scores(http, srv.url + "/v1/rerank", _templated())
        assert good[1] == pytest.approx(probability(QUERY, PARIS))
        assert good[1] > good[2] > good[0]
        # Truncation from the right cuts the suffix off, and scoring breaks again.
        cut = _rerank_scores(http, srv.url + "/rerank", {**_templated(), "truncate_prompt_tokens": 60})
        assert cut[0] > cut[1]


def test_vllm014_templates_itself_and_double_templating_is_degenerate(http):
    with start("vllm014") as srv:
        raw = _rerank_scores(http, srv.url + "/rerank", {"query": QUERY, "documents": DOCS})
        assert raw[1] == pytest.approx(probability(QUERY, PARIS))
        twice = _rerank_scores(http, srv.url + "/rerank", _templated())
        assert set(twice.values()) == {0.5}


def test_vllm_rerank_shape_and_top_n(http):
    with start("vllm_crossencoder") as srv:
        body = http.post(srv.url + "/v2/rerank", json={"query": QUERY, "documents": DOCS, "top_n": 2}).json()
        assert set(body) == {"id", "model", "usage", "results"}
        assert body["model"] == "BAAI/bge-reranker-v2-m3"
        assert [r["index"] for r in body["results"]] == [1, 2]
        assert body["results"][0]["document"]["text"] == PARIS
        assert set(body["usage"]) == {"prompt_tokens", "total_tokens"}
        body = {"query": QUERY, "documents": DOCS, "use_activation": False}
        logits = http.post(srv.url + "/rerank", json=body).json()
        assert logits["results"][-1]["relevance_score"] == pytest.approx(relevance(QUERY, PLANTS))


def test_vllm_score_pairing(http):
    with start("vllm_crossencoder") as srv:
        one_to_n = http.post(srv.url + "/score", json={"text_1": QUERY, "text_2": DOCS}).json()
        assert one_to_n["object"] == "list"
        assert [d["index"] for d in one_to_n["data"]] == [0, 1, 2]  # input order, unsorted
        assert all(d["object"] == "score" for d in one_to_n["data"])
        assert one_to_n["data"][1]["score"] > one_to_n["data"][0]["score"]
        n_to_n = http.post(srv.url + "/v1/score", json={"text_1": [QUERY, QUERY], "text_2": [PARIS, PLANTS]}).json()
        assert len(n_to_n["data"]) == 2
        bad = http.post(srv.url + "/score", json={"text_1": [QUERY, QUERY], "text_2": DOCS})
        assert bad.status_code == 400
        assert bad.json()["error"]["message"] == "Input lengths must be either 1:1, 1:N or N:N"


def test_vllm_errors(http):
    with start("vllm_crossencoder") as srv:
        r = http.post(srv.url + "/rerank", json={"query": QUERY})
        assert r.status_code == 400
        error = r.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["code"] == 400
        assert "documents" in error["message"]
        r = http.post(srv.url + "/rerank", json={"model": "nope", "query": QUERY, "documents": DOCS})
        assert r.status_code == 404
        assert r.json()["error"]["type"] == "NotFoundError"
        assert r.json()["error"]["message"] == "The model `nope` does not exist."
        r = http.get(srv.url + "/info")
        assert (r.status_code, r.json()) == (404, {"detail": "Not Found"})
        assert http.get(srv.url + "/health").content == b""


def test_vllm_key_guards_only_v1(http):
    with start("vllm014", api_key="k") as srv:
        body = {"query": QUERY, "documents": DOCS}
        r = http.post(srv.url + "/v1/rerank", json=body)
        assert (r.status_code, r.json()) == (401, {"error": "Unauthorized"})
        assert http.post(srv.url + "/rerank", json=body).status_code == 200
        assert http.get(srv.url + "/v1/models").status_code == 401
        models = http.get(srv.url + "/v1/models", headers={"Authorization": "Bearer k"}).json()
        assert models["data"][0]["owned_by"] == "vllm"


def test_vllm_generative_answers_errors_with_200(http):
    with start("vllm_generative") as srv:
        for path, body in [
            ("/rerank", {"query": QUERY, "documents": DOCS}),
            ("/v1/rerank", {"query": QUERY, "documents": DOCS}),
            ("/score", {"text_1": QUERY, "text_2": DOCS}),
        ]:
            r = http.post(srv.url + path, json=body)
            assert r.status_code == 200
            assert r.json() == {
                "error": {
                    "message": "The model does not support Rerank (Score) API",
                    "type": "BadRequestError",
                    "code": 400,
                }
            }


# -- Infinity ----------------------------------------------------------------------------


def test_infinity_shapes_and_routes(http):
    with start("infinity", url_prefix="/v1") as srv:
        body = http.post(
            srv.url + "/v1/rerank", json={"query": QUERY, "documents": DOCS, "return_documents": True, "top_n": 1}
        ).json()
        assert body["object"] == "rerank" and body["id"].startswith("infinity-")
        paris = probability(QUERY, PARIS)
        assert body["results"] == [{"relevance_score": pytest.approx(paris), "index": 1, "document": PARIS}]
        assert http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS}).status_code == 404
        assert "unix" in http.get(srv.url + "/health").json()
        assert http.get(srv.url + "/v1/models").json()["data"][0]["capabilities"] == ["rerank"]


def test_infinity_validation_and_auth(http):
    with start("infinity", max_client_batch_size=2, api_key="k") as srv:
        url, auth = srv.url + "/rerank", {"Authorization": "Bearer k"}
        r = http.post(url, json={"query": QUERY, "documents": DOCS})
        assert (r.status_code, r.json()) == (401, {"detail": "Unauthorized"})
        assert r.headers["www-authenticate"] == "Bearer"
        cases = [
            ({"query": QUERY, "documents": []}, "too_short"),
            ({"query": QUERY, "documents": DOCS}, "too_long"),
            ({"query": QUERY}, "missing"),
        ]
        for body, error_type in cases:
            r = http.post(url, json=body, headers=auth)
            assert r.status_code == 422
            assert r.json()["detail"][0]["type"] == error_type
        assert http.get(srv.url + "/health").status_code == 200


def test_infinity_serves_several_models_under_names_from_their_paths(http):
    with start("infinity", models=("/srv/models/rerank-a", "rerank-b")) as srv:
        url = srv.url + "/rerank"
        assert [m["id"] for m in http.get(srv.url + "/models").json()["data"]] == ["models/rerank-a", "rerank-b"]
        for body in ({"query": QUERY, "documents": DOCS}, {"query": QUERY, "documents": DOCS, "model": "rerank-a"}):
            r = http.post(url, json=body)
            assert r.status_code == 400
            named = body.get("model", "default/not-specified")
            assert r.json() == {
                "error": {
                    "message": (
                        f"Invalid model: Engine for model name `{named}` not found. "
                        "Available model names are ['models/rerank-a', 'rerank-b']"
                    ),
                    "type": None,
                    "param": None,
                    "code": 400,
                }
            }
        assert (
            http.post(url, json={"query": QUERY, "documents": DOCS, "model": "rerank-b"}).json()["model"] == "rerank-b"
        )
        assert http.post(url, json={"query": QUERY, "documents": []}).status_code == 422  # the body before the model
    with start("infinity", model="/srv/models/only-one") as srv:  # one model: any name reaches it
        assert (
            http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS, "model": "x"}).json()["model"]
            == "models/only-one"
        )


def test_infinity_cuts_a_pair_to_the_token_limit_and_counts_characters(http):
    with start("infinity", max_length=32) as srv:  # 29 tokens for query and document
        buried = "filler " * 20 + PARIS  # the answer past the limit: 7 + 30 tokens
        body = http.post(srv.url + "/rerank", json={"query": f"  {QUERY} ", "documents": [PARIS, buried]}).json()
        scores = {r["index"]: r["relevance_score"] for r in body["results"]}
        assert scores[0] == pytest.approx(probability(QUERY, PARIS))
        assert scores[1] == pytest.approx(probability(QUERY, "filler " * 20 + "Paris is")) and scores[1] < 0.01
        assert body["usage"]["prompt_tokens"] == 2 * len(QUERY) + len(PARIS) + len(buried)
        too_long = http.post(srv.url + "/rerank", json={"query": QUERY, "documents": ["a" * 122_881]}).json()["detail"][
            0
        ]
        assert (too_long["type"], too_long["loc"]) == ("string_too_long", ["body", "documents", 0])


# -- llama.cpp ---------------------------------------------------------------------------


def test_llamacpp_formats(http):
    with start("llamacpp") as srv:
        tei = http.post(srv.url + "/reranking", json={"query": QUERY, "texts": DOCS, "return_text": True}).json()
        assert isinstance(tei, list)
        assert tei[0] == {"index": 1, "score": pytest.approx(relevance(QUERY, PARIS)), "text": PARIS}
        assert tei[-1]["score"] < 0  # raw logits, not probabilities
        jina = http.post(srv.url + "/v1/reranking", json={"query": QUERY, "documents": DOCS, "top_n": 2}).json()
        assert set(jina) == {"model", "object", "usage", "results"}
        assert jina["results"][0] == {"index": 1, "relevance_score": pytest.approx(relevance(QUERY, PARIS))}
        assert len(jina["results"]) == 2
        r = http.post(srv.url + "/rerank", json={"documents": DOCS})
        assert r.status_code == 400
        error = {"code": 400, "message": '"query" must be provided', "type": "invalid_request_error"}
        assert r.json() == {"error": error}
        assert http.get(srv.url + "/health").json() == {"status": "ok"}
        r = http.get(srv.url + "/info")
        assert r.status_code == 404 and r.json()["error"]["message"] == "File Not Found"


def test_llamacpp_auth(http):
    with start("llamacpp", api_key="k") as srv:
        r = http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS})
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
        assert http.get(srv.url + "/v1/models").json()["data"][0]["owned_by"] == "llamacpp"
        ok = http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS}, headers={"x-api-key": "k"})
        assert ok.status_code == 200


def test_llamacpp_without_reranking_is_501(http):
    with start("llamacpp_norerank") as srv:
        for path in ("/rerank", "/reranking", "/v1/rerank", "/v1/reranking"):
            r = http.post(srv.url + path, json={"query": QUERY, "documents": DOCS})
            assert r.status_code == 501
            assert r.json()["error"]["type"] == "not_supported_error"
            assert "--reranking" in r.json()["error"]["message"]


# -- hosted APIs -------------------------------------------------------------------------


def test_cohere_v1_and_v2(http):
    with start("cohere", api_key="k") as srv:
        auth = {"Authorization": "Bearer k"}
        r = http.post(srv.url + "/v2/rerank", json={"model": "rerank-v3.5", "query": QUERY, "documents": DOCS})
        assert (r.status_code, r.json()) == (401, {"message": "invalid api token"})
        r = http.post(srv.url + "/v2/rerank", json={"query": QUERY, "documents": DOCS}, headers=auth)
        assert r.status_code == 400 and "model" in r.json()["message"]
        body = {"model": "m", "query": QUERY, "documents": DOCS, "return_documents": True}
        v2 = http.post(srv.url + "/v2/rerank", json=body, headers=auth).json()
        assert set(v2) == {"id", "results", "meta"} and "document" not in v2["results"][0]
        body = {"query": QUERY, "documents": DOCS, "return_documents": True, "top_n": 1}
        v1 = http.post(srv.url + "/v1/rerank", json=body, headers=auth).json()
        paris = pytest.approx(probability(QUERY, PARIS))
        assert v1["results"] == [{"index": 1, "relevance_score": paris, "document": {"text": PARIS}}]


def test_voyage_and_mixedbread_options(http):
    with start("voyage") as srv:
        body = {"model": "rerank-2.5", "query": QUERY, "documents": DOCS, "top_k": 1, "return_documents": True}
        data = http.post(srv.url + "/v1/rerank", json=body).json()
        assert data["object"] == "list" and data["data"][0]["document"] == PARIS and len(data["data"]) == 1
    with start("mixedbread", api_key="k") as srv:
        assert http.post(srv.url + "/v1/reranking", json={"query": QUERY, "input": DOCS}).status_code == 401
        data = http.post(
            srv.url + "/v1/reranking",
            json={"query": QUERY, "input": DOCS, "top_k": 2, "return_input": True},
            headers={"Authorization": "Bearer k"},
        ).json()
        assert data["top_k"] == 2 and data["return_input"] is True
        paris = pytest.approx(probability(QUERY, PARIS))
        assert data["data"][0] == {"index": 1, "score": paris, "object": "rank_result", "input": PARIS}


def test_jina_without_documents_echo(http):
    with start("jina") as srv:
        body = {"model": "m", "query": QUERY, "documents": DOCS, "return_documents": False}
        results = http.post(srv.url + "/v1/rerank", json=body).json()["results"]
        assert results[0] == {"index": 1, "relevance_score": pytest.approx(probability(QUERY, PARIS))}


# -- oracle, recording, lifecycle --------------------------------------------------------


def test_oracle_scorer_overrides_the_model(http):
    with start("tei19", scorer=lambda q, d: 4.0 if d.startswith("Lyon") else -4.0) as srv:
        ranks = http.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS}).json()
        assert ranks[0]["index"] == 2


def test_recording_clear_and_stop(http):
    srv = start("infinity")
    http.post(srv.url + "/rerank?x=1", json={"query": QUERY, "documents": DOCS}, headers={"X-Trace": "t"})
    (rec,) = srv.requests
    assert (rec.method, rec.path, rec.headers["x-trace"]) == ("POST", "/rerank", "t")
    assert rec.json == {"query": QUERY, "documents": DOCS} and rec.body.startswith(b"{")
    srv.clear()
    assert srv.requests == [] and srv.stats["requests"] == 0
    srv.stop()
    with pytest.raises(httpx.ConnectError):
        http.get(srv.url + "/health")


voyage_server = server_fixture("voyage", api_key="k")


def test_fixture_factory(voyage_server, http):
    r = http.post(voyage_server.url + "/v1/rerank", json={"model": "m", "query": QUERY, "documents": DOCS})
    assert (r.status_code, r.json()) == (401, {"detail": "Provided API key is invalid."})


def test_keep_alive_reuses_one_connection():
    with start("tei19") as srv, httpx.Client() as client:
        ports = set()
        for _ in range(3):
            r = client.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS})
            assert r.status_code == 200 and r.headers.get("connection") != "close"
            ports.add(r.extensions["network_stream"].get_extra_info("client_addr")[1])
        assert len(ports) == 1


# -- faults ------------------------------------------------------------------------------


def _check_body_fault(kind: str, r: httpx.Response) -> None:
    assert r.status_code == 200
    if kind == "html":
        assert r.headers["content-type"].startswith("text/html") and r.text.startswith("<!DOCTYPE html>")
        return
    if kind in ("partial", "malformed"):
        with pytest.raises(ValueError):
            r.json()
        if kind == "partial":
            assert r.text.startswith('{"object": "rerank"')
        return
    if kind == "empty":
        assert r.content == b""
        return
    body = r.json()
    if kind == "error200":
        assert body["error"]["type"] == "BadRequestError"
        return
    results = body["results"]
    indices = [item["index"] for item in results]
    expected = {
        "dup_index": lambda: len(indices) == 3 and len(set(indices)) == 2,
        "missing_index": lambda: len(indices) == 2,
        "out_of_range": lambda: max(indices) == 3,
        "nan": lambda: math.isnan(results[0]["relevance_score"]) and "NaN" in r.text,
        "string_score": lambda: results[0]["relevance_score"] == "0.9",
        "wrong_count": lambda: len(indices) == 4,
    }[kind]
    assert expected(), body


def test_body_faults(http):
    with start("infinity") as srv:
        for kind in BODY_FAULTS:
            srv.set_faults(body=kind)
            r = http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS})
            _check_body_fault(kind, r)
        assert srv.stats["body_nan"] == 1
        srv.recover()
        healthy = http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS}).json()
        assert healthy["results"][0]["index"] == 1


def test_reset_raises_a_transport_error(http):
    with start("vllm014") as srv:
        srv.set_faults(reset=1)
        with pytest.raises(httpx.TransportError):
            http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS})
        assert http.post(srv.url + "/rerank", json={"query": QUERY, "documents": DOCS}).status_code == 200
        assert srv.stats["reset"] == 1


@pytest.mark.parametrize(
    ("kind", "path", "body", "check"),
    [
        ("tei19", "/rerank", {"query": QUERY, "texts": DOCS}, lambda j: j["error_type"] == "Unhealthy"),
        ("vllm014", "/rerank", {"query": QUERY, "documents": DOCS}, lambda j: j["error"]["code"] == 503),
        (
            "llamacpp",
            "/rerank",
            {"query": QUERY, "documents": DOCS},
            lambda j: j["error"]["type"] == "unavailable_error",
        ),
        ("cohere", "/v1/rerank", {"query": QUERY, "documents": DOCS}, lambda j: "message" in j),
    ],
)
def test_status_sequence_then_recovery(kind, path, body, check, http):
    with start(kind) as srv:
        srv.set_faults(statuses=[503, 429], retry_after=2)
        first = http.post(srv.url + path, json=body)
        assert first.status_code == 503 and check(first.json())
        assert first.headers["retry-after"] == "2"
        second = http.post(srv.url + path, json=body)
        assert second.status_code == 429 and second.headers["retry-after"] == "2"
        assert http.post(srv.url + path, json=body).status_code == 200
        stats = srv.stats
        assert (stats["requests"], stats["status_503"], stats["status_429"], stats["faults"]) == (3, 1, 1, 2)


def test_delay_and_fault_paths():
    with start("tei19") as srv, httpx.Client(timeout=0.2) as client:
        srv.set_faults(delay=0.5, fault_paths=["/rerank"])
        assert client.get(srv.url + "/health").status_code == 200  # not a faulted path
        with pytest.raises(httpx.ReadTimeout):
            client.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS})
        assert srv.stats["delay"] == 1


def _random_run(seed):
    with start("tei19") as srv, httpx.Client(timeout=0.5) as client:
        srv.set_faults(fail_rate=0.5, seed=seed, fail_delay=0.01)
        outcomes = []
        for _ in range(20):
            try:
                r = client.post(srv.url + "/rerank", json={"query": QUERY, "texts": DOCS})
                outcomes.append(r.status_code if r.text.startswith("[") or r.status_code != 200 else "garbage")
            except httpx.TransportError:
                outcomes.append("reset")
        return outcomes, srv.stats


def test_random_faults_are_seeded():
    first, stats = _random_run(7)
    again, _ = _random_run(7)
    assert first == again
    assert 0 < stats["random"] < 20
    assert {200} < set(first)
