"""Scorers behind one interface: each registered scorer implements it, and what wraps a
call — the privacy guard, the score cache, the circuit breaker, the verdict cache — follows
what a scorer declares, not its name. Shown with a scorer this test registers itself."""

import asyncio
import inspect

import pytest

from helpers import reranker, settings_cache
from helpers.scoring import score
from helpers.scoring import probing, scorers
from helpers.errors import BreakerOpen, Refused, RerankError, TransportError
from helpers.scoring.scorers.base import Scorer
from helpers.settings import APIS, Settings
from helpers.scoring.verdicts import PROBE_DOCS, PROBE_QUERY, Verdict

DECLARATIONS = (
    "sends_text",
    "may_go_down",
    "caches_scores",
    "needs_warm_up",
    "probes_once",
    "asks_utility_model",
    "judges_recall_at_once",
)
METHODS = (
    "verdict_key",
    "probe",
    "score",
    "warm",
    "breaker_key",
    "owns_breaker",
    "guarded_endpoint",
    "query_chars",
)


@pytest.mark.parametrize(
    "scorer", [scorers.REMOTE, scorers.LOCAL, scorers.LEXICAL, scorers.UTILITY], ids=lambda s: s.name
)
def test_every_scorer_implements_the_interface(scorer):
    for name in DECLARATIONS:
        assert isinstance(getattr(scorer, name), bool), name
    for name in METHODS:
        mine, spec = inspect.signature(getattr(type(scorer), name)), inspect.signature(getattr(Scorer, name))
        assert list(mine.parameters) == list(spec.parameters), name
        assert inspect.iscoroutinefunction(getattr(scorer, name)) == inspect.iscoroutinefunction(
            getattr(Scorer, name)
        ), name


def test_the_settings_pick_the_scorer():
    pick = lambda **c: scorers.for_settings(Settings.from_mapping(c))  # noqa: E731
    assert pick() is None  # no endpoint: the built-in fusion alone
    assert pick(rerank_api="rerank") is None
    assert pick(rerank_endpoint="http://127.0.0.1:9") is scorers.REMOTE
    assert pick(rerank_endpoint="http://127.0.0.1:9", rerank_api="qwen3_score") is scorers.REMOTE
    assert pick(rerank_api="lexical") is scorers.LEXICAL and pick(rerank_api="local") is scorers.LOCAL


def test_the_api_table_is_the_scorers_own():
    """The one table of APIs and their kinds is the scorers' (each names its ``api``); the
    setting's choices are exactly its keys and the server's own values, so no view keeps a
    table of its own."""
    assert set(scorers.BY_API) == {s.api for s in (scorers.LEXICAL, scorers.LOCAL, scorers.UTILITY)}
    assert scorers.REMOTE.api is None
    assert set(APIS) == set(scorers.BY_API) | {"auto", "rerank", "qwen3_score"}
    assert len({s.mode for s in (scorers.REMOTE, *scorers.BY_API.values())}) == 4  # a mode each


def test_a_cross_encoder_on_the_cpu_reads_a_query_it_can_score_in_time():
    """rerank_max_query_chars (2,000) is every scorer's query budget but an in-process
    cross-encoder's on the CPU: 400, the query its relevance and its time were measured with
    (local.CPU_QUERY_CHARS). A lower setting still wins; on a GPU the setting stands."""
    from helpers.scoring.scorers import local

    pick = lambda **c: Settings.from_mapping({"rerank_api": "local", **c})  # noqa: E731
    assert pick().max_query_chars == 2000 and pick().local_device == "cpu"
    assert scorers.LOCAL.query_chars(pick()) == local.CPU_QUERY_CHARS == 400
    assert scorers.LOCAL.query_chars(pick(rerank_max_query_chars=120)) == 120
    assert scorers.LOCAL.query_chars(pick(rerank_local_device="cuda")) == 2000
    assert scorers.LOCAL.query_chars(pick(rerank_local_device="mps", rerank_max_query_chars=900)) == 900
    for other in (scorers.REMOTE, scorers.LEXICAL, scorers.UTILITY):
        assert other.query_chars(pick()) == 2000, other.name


def test_a_cross_encoder_on_auto_reads_the_cpu_query_until_its_model_says_where_it_runs(monkeypatch):
    import concurrent.futures
    import types

    from helpers.scoring.scorers import local

    auto = Settings.from_mapping({"rerank_api": "local", "rerank_local_device": "auto"})
    monkeypatch.setattr(local, "_loads", {})
    assert scorers.LOCAL.query_chars(auto) == 400  # nothing loaded yet: read as the CPU
    for device, budget in (("cuda", 2000), ("cpu", 400)):
        loaded = concurrent.futures.Future()
        loaded.set_result(local.Loaded(types.SimpleNamespace(device=types.SimpleNamespace(type=device)), "logit"))
        local._loads[local._key(auto)] = local._Load(loaded, 0.0)
        assert scorers.LOCAL.query_chars(auto) == budget, device
    failed = concurrent.futures.Future()
    failed.set_exception(RuntimeError("no model"))
    local._loads[local._key(auto)] = local._Load(failed, 0.0)
    assert scorers.LOCAL.query_chars(auto) == 400


class Counting:
    """A scorer of this test's own: word overlap, counting its calls, failing on demand."""

    name = "counting"
    api = "lexical"  # a name the settings accept (registered under it below)
    mode = "fusion+counting"

    def __init__(self, **declared):
        self.sends_text = self.may_go_down = self.caches_scores = self.needs_warm_up = self.probes_once = False
        self.asks_utility_model = self.judges_recall_at_once = False
        self.__dict__.update(declared)
        self.calls, self.fail = 0, False

    def verdict_key(self, settings):
        return ("counting",)

    def breaker_key(self, settings):
        return "counting"

    def owns_breaker(self, settings, key):
        return key == "counting"

    def guarded_endpoint(self, settings):
        return "8.8.8.8", "the counting scorer's endpoint"  # public: the guard, when it applies, refuses it

    async def probe(self, settings, deadline, report, *, fresh=False):
        rel, near, irr = await self.score(settings, None, PROBE_QUERY, PROBE_DOCS, deadline)
        report.ok, report.verdict, report.reason = True, "ok", "counting"
        report.result = Verdict(None, "logit", rel, irr)

    async def score(self, settings, verdict, query, documents, deadline):
        self.calls += 1
        if self.fail:
            raise TransportError("down")
        words = set(query.lower().split())
        return [4.0 * len(words & set(d.lower().split())) - 3.0 for d in documents]

    def warm(self, settings):
        pass

    def query_chars(self, settings):
        return settings.max_query_chars


@pytest.fixture
def registered(monkeypatch):
    def register(scorer):
        monkeypatch.setitem(scorers.BY_API, "lexical", scorer)  # a name the settings accept
        return scorer

    return register  # every cache starts empty: the autouse reset in conftest.py


def settings(**more):
    return Settings.from_mapping(
        {"rerank_api": "lexical", "rerank_breaker_failures": 2, "rerank_breaker_cooldown": 60, **more}
    )


def run(s, query="grafana port", docs=("grafana listens on port 3000", "the garden")):
    return asyncio.run(score.score_documents(scorers.choose(s), query, list(docs)))


def test_a_scorer_that_sends_text_away_meets_the_privacy_guard(registered, monkeypatch):
    s = settings(rerank_private_only=True, rerank_endpoint="http://8.8.8.8:8080")
    quiet = registered(Counting())
    assert run(s).scores  # sends nothing away: the guard is not its business
    loud = registered(Counting(sends_text=True))
    with pytest.raises(Refused, match="privacy guard"):
        run(s)
    assert loud.calls == 0 and quiet.calls == 2  # quiet: the probe and one call


def test_a_scorer_that_caches_is_asked_once_and_one_that_does_not_every_time(registered):
    s = settings()
    plain = registered(Counting())
    run(s), run(s)
    assert plain.calls == 3  # probe + 2
    probing.forget()
    cached = registered(Counting(caches_scores=True))
    run(s), run(s)
    assert cached.calls == 2  # probe + 1: the second call came from the cache


def test_a_scorer_that_may_go_down_gets_a_breaker_and_loses_its_verdict_on_failure(registered):
    s = settings()
    steady = registered(Counting())
    run(s)
    steady.fail = True
    for _ in range(4):
        with pytest.raises(TransportError):  # from its verdict, kept: no probe again
            run(s)
    assert probing.cached(scorers.choose(s)) is not None  # a failure says nothing about it: keep the verdict
    probing.forget()
    flaky = registered(Counting(may_go_down=True))
    run(s)
    flaky.fail = True
    for _ in range(2):
        with pytest.raises(RerankError):  # the first from the call, the second from the probe again
            run(s)
    assert probing.cached(scorers.choose(s)) is None  # dropped: the next call probes again
    calls = flaky.calls
    with pytest.raises(BreakerOpen):
        run(s)
    assert flaky.calls == calls  # the open breaker skipped it


def test_warm_up_at_start_only_for_a_scorer_that_needs_it(registered, monkeypatch):
    warmed = []
    monkeypatch.setattr(probing, "warm_in_background", lambda choice: warmed.append(choice.settings.api))
    monkeypatch.setattr(settings_cache, "configured_mapping", lambda agent=None: {"rerank_api": "lexical"})
    registered(Counting())
    reranker.warm_up()
    assert warmed == []
    registered(Counting(needs_warm_up=True))
    reranker.warm_up()
    assert warmed == ["lexical"]
