"""The Infinity client checks (tests/real/checks.py) against the emulation, and what only the
emulation can show: the requests the client sent. The same checks run against the real
server in tests/real/test_infinity_real.py."""

import pytest

from tests.real import checks
from tests.servers import start
from tests.servers.infinity import truncate_pair
from tests.servers.scoring import probability

MODEL = str(checks.ROOT / "tests" / "real" / "tiny-reranker")  # served as "real/tiny-reranker"
TWIN = "/srv/twin/tiny-reranker"
NAMES = ["real/tiny-reranker", "twin/tiny-reranker"]
KEY = "infinity-test-key"


def emulated(query, documents):
    """What the emulation's lexical model answers: each pair cut to 512 tokens, stripped."""
    return [probability(*truncate_pair(query.strip(), d.strip(), 512 - 3)) for d in documents]


@pytest.fixture(scope="module")
def default():
    with start("infinity", model=MODEL) as srv:
        yield srv


def target(srv, **config):
    return checks.Target(srv.url, emulated, config)


def test_detection_and_scores(default):
    checks.detects_the_route_and_the_scale(target(default))
    checks.ranks_with_the_models_own_scores(target(default))


def test_2100_documents_split_at_the_default_2048():
    with start("infinity", model=MODEL) as srv:
        checks.splits_to_the_servers_limit(target(srv), 2100, 2048)
        sizes = [len(r.json["documents"]) for r in srv.requests if r.path == "/rerank" and len(r.json["documents"]) > 3]
        assert sizes[0] == 2100 and sorted(sizes[1:]) == [52, 2048]


def test_40_documents_split_at_a_configured_16():
    with start("infinity", model=MODEL, max_client_batch_size=16) as srv:
        checks.splits_to_the_servers_limit(target(srv), 40, 16)
        sizes = [len(r.json["documents"]) for r in srv.requests if r.path == "/rerank" and len(r.json["documents"]) > 3]
        assert sizes[0] == 40 and sorted(sizes[1:]) == [8, 16, 16]
        srv.clear()
        # Learned once: the next call splits from the start.
        assert checks.reranker.rerank(checks.QUESTION, ["a"] * 20, config=target(srv).settings()) is not None
        assert sorted(len(r.json["documents"]) for r in srv.requests if r.path == "/rerank") == [4, 16]


def test_long_memories(default):
    checks.cuts_long_memories_to_what_the_server_accepts(target(default))


def test_two_models_with_a_key_under_a_prefix():
    with start("infinity", models=(MODEL, TWIN), url_prefix="/v1", api_key=KEY) as srv:
        shared = checks.Target(srv.url, emulated, {"rerank_api_key": KEY}, path="/v1/rerank")
        checks.names_the_served_models_when_none_is_set(shared, NAMES)
        with_model = checks.Target(
            srv.url, emulated, {"rerank_api_key": KEY, "rerank_model": NAMES[1]}, path="/v1/rerank"
        )
        checks.needs_its_key(with_model)
        checks.detects_the_route_and_the_scale(with_model)
