"""One vocabulary (helpers/vocabulary/, its vocabulary.json included): a sentence the user reads is
written once, and every view that says it takes it from there."""

import dataclasses

import pytest

from helpers import errors, vocabulary
from helpers.errors import ProbeFailed
from helpers.report.stats import Summary
from helpers.scoring import scorers
from helpers.status_report import JudgeSummary, StatusSummary
from helpers.settings import Settings

SERVER = Settings.from_mapping({"rerank_endpoint": "http://127.0.0.1:9"})
JUDGE = Settings.from_mapping({"rerank_api": "utility"})


@pytest.mark.parametrize(
    "verdict", ["unreachable", "auth", "model", "misranks", "unsupported", "busy", "refused", "bad_setting"]
)
def test_a_failed_probes_chat_words_are_its_verdicts_own_entry(verdict):
    """The chat line and Test connection read one entry per verdict: the headline and hint
    for the panel, the chat's words beside them."""
    entry = vocabulary.verdict_words()[verdict]
    assert entry["headline"] and entry["chat"]
    said = vocabulary.reranker_unavailable(ProbeFailed(verdict, "the server's own words"), SERVER, scorers.REMOTE)
    assert said == entry["chat"].format(who="the server")


def _working(**fields) -> StatusSummary:
    """The summary of a plugin that is on, wrapped and has a reranker, with ``fields``."""
    on = dict(wrap_live=True, enabled_for_agent=True, setting_enabled=True, has_reranker=True, mode_text="m")
    return StatusSummary(plugin="a0_reranker", **on, **fields)


def test_the_host_post_filter_note_is_one_sentence_in_every_view():
    """The chat line, the status tool and Test connection say the same sentence."""

    class Done:  # what recall/outcome.Outcome gives the chat line
        reranked, scored, no_opinion, failure, applied, post_filter = True, True, "", None, True, True
        scorer, route, trust = scorers.UTILITY, None, None

    assert vocabulary.chat_head(Done()).endswith("; " + vocabulary.POST_FILTER)
    status = _working(judge=JudgeSummary("small", None, True), stats=Summary(), breaker={})
    assert f"note: {vocabulary.POST_FILTER}" in vocabulary.status_text(status).splitlines()


FAILURES = [
    TimeoutError(),
    errors.DeadlineExceeded("late"),
    errors.QueryCut("late on a long query", 1981, 400),
    errors.BreakerOpen("open"),
    errors.TransportError("refused"),
    errors.ServerError(500, "boom"),
    errors.ServerError(401, "no"),
    errors.MalformedResponse("garbage"),
    errors.Refused("not private"),
    errors.NotConfigured("nothing set"),
    RuntimeError("anything else"),
    *(ProbeFailed(verdict, "reason") for verdict in ["timeout", "not_configured", "misranks", "unreachable", "error"]),
    ProbeFailed("error", "reason", status=502),
    ProbeFailed("error", "reason", malformed=True),
]


@pytest.mark.parametrize("exc", FAILURES, ids=lambda exc: f"{type(exc).__name__}-{getattr(exc, 'verdict', '')}")
def test_each_kind_of_failure_is_worded_once_and_said_of_the_scorer_that_failed(exc):
    """The chat's words for a failure are one sentence per kind, whichever scorer failed:
    a server's and the utility judge's differ only in whom they name (and a local
    cross-encoder's failure does not blame a server)."""
    said = {
        scorer: vocabulary.reranker_unavailable(exc, JUDGE, scorer)
        for scorer in (scorers.REMOTE, scorers.UTILITY, scorers.LOCAL)
    }
    assert vocabulary.subject(scorers.REMOTE) in said[scorers.REMOTE]
    assert said[scorers.UTILITY] == said[scorers.REMOTE].replace(
        vocabulary.subject(scorers.REMOTE), vocabulary.UTILITY_MODEL
    )
    assert said[scorers.LOCAL] == said[scorers.REMOTE].replace(
        vocabulary.subject(scorers.REMOTE), vocabulary.subject(scorers.LOCAL)
    )
    assert vocabulary.subject(scorers.REMOTE) not in said[scorers.LOCAL]


def test_the_status_says_how_long_the_rerankers_query_is_and_why_it_was_cut():
    plain = vocabulary.status_text(_working(stats=Summary(), breaker={}, query_chars=2000)).splitlines()
    assert "reranker's query: the message and the newest conversation, at most 2,000 characters" in plain
    cut = vocabulary.status_text(_working(stats=Summary(), breaker={}, query_chars=400, query_ran_out_on=1981))
    assert "at most 400 characters (cut: it ran out of time reading 1,981;" in cut
    fusion = dataclasses.replace(_working(stats=Summary(), breaker={}, query_chars=2000), has_reranker=False)
    assert "reranker's query" not in vocabulary.status_text(fusion)  # the built-in fusion asks none


def test_words_differ_by_what_a_scorer_declares_not_its_name():
    """A scorer that declares itself Agent Zero's utility model is spoken of as one, whatever
    it is called; one that does not, as a server."""

    class Declared:
        name, api, mode = "someone-new", "utility", vocabulary.UTILITY
        asks_utility_model = True

    slow = TimeoutError()
    assert vocabulary.reranker_unavailable(slow, JUDGE, Declared()).startswith(vocabulary.UTILITY_MODEL)
    assert vocabulary.reranker_unavailable(slow, JUDGE, scorers.REMOTE).startswith("the server gave no answer within")
    assert vocabulary.no_opinion(Declared()) != vocabulary.no_opinion(scorers.REMOTE)


def test_the_status_text_reads_the_counters_typed_and_the_json_keeps_its_shape():
    """status_text reads report/stats.Summary and the breaker's states as values; the status
    API's JSON of the same summary is the counters' own snapshot, key for key."""
    from helpers.report.stats import CallRecord, ErrorNote, Latency, ShadowSummary, Stats
    from helpers.scoring.breaker import Shown

    stats = Stats()
    stats.record(CallRecord("fused", reason="the word list led", latency_ms=12.0))
    stats.record(CallRecord("fallback", reason="Boom: it broke", latency_ms=3.0))
    counters = stats.summary(last=5)
    assert counters.latest_answered.reason == "the word list led"
    assert counters.last_error == ErrorNote(counters.last_error.at, "Boom: it broke")
    assert counters.latency == Latency(12.0, 12.0, 1)
    shadow = ShadowSummary(
        searches=4, top_changed=1, mean_overlap_at_k=0.75, promoted_from_below_cut=2, mean_rank_correlation=0.5
    )
    counters = dataclasses.replace(counters, shadow=shadow)
    status = _working(
        stats=counters,
        breaker={
            "http://127.0.0.1:9|rerank": Shown(failures=3, open_for_s=12.5, times_opened=1),
            "b|x": Shown(1, 0.0, 0),
        },
    )
    lines = vocabulary.status_text(status).splitlines()
    assert (
        "so far: 0 reranked, 1 fused, 0 shadow, 0 with the reranker unavailable, 1 fallbacks to Agent Zero's own order"
        in lines
    )
    assert "last error: Boom: it broke" in lines and "note: the word list led" in lines
    assert (
        "latency p50 12.0 ms, p95 12.0 ms over 1 calls; fallbacks by reason: {'Boom': 1}; "
        "reranker unavailable by reason: none" in lines
    )
    assert (
        "shadow: top result would change in 1/4 searches; mean overlap@k 0.75; 2 memories from below the host's cut"
        in lines
    )
    assert [line for line in lines if "circuit breaker" in line] == [
        "circuit breaker open for 12.5 s more: http://127.0.0.1:9"
    ]
    shown = status.as_dict()
    assert shown["stats"] == {**stats.snapshot(last=5), "shadow": dataclasses.asdict(shadow)}
    assert set(shown["stats"]) == {
        "totals",
        "fallback_reasons",
        "unavailable_reasons",
        "latency_ms",
        "last_error",
        "recent",
        "shadow",
    }
    assert shown["stats"]["latency_ms"] == {"p50": 12.0, "p95": 12.0, "samples": 1}
    assert shown["breaker"]["http://127.0.0.1:9|rerank"] == {"failures": 3, "open_for_s": 12.5, "times_opened": 1}


def test_a_reranker_with_no_say_is_told_where_recalls_still_ask_it():
    from helpers.scoring.calibration import Trust

    lexical = scorers.for_settings(Settings.from_mapping({"rerank_api": "lexical"}))
    measured = Trust("none", 0.40, 0.55, questions=70)
    better_than_the_embedder = Trust("none", 0.65, 0.55, questions=70, unrelated_above=0.2)
    assert not measured.surely_better and better_than_the_embedder.surely_better
    assert not better_than_the_embedder.lendable
    for no_lending in (measured, better_than_the_embedder):
        assert vocabulary.no_say_words(lexical, None, no_lending).endswith("so recalls ask it no longer")
    assert "answered, but has no say until its calibration finishes" in vocabulary.no_say_words(lexical, None, None)
    noisy = vocabulary.say_words(better_than_the_embedder, "BM25")
    assert vocabulary.SOME_SAY_LENT_IN not in noisy
    assert noisy.endswith(
        "but it scored 20% of the calibration's memories about something else entirely at or above the answer, "
        "as noise does, so no search lends it a say"
    )
    lendable = Trust("none", 0.65, 0.55, questions=70, unrelated_above=0.05)
    assert lendable.lendable and lendable.full_where_words_lead
    assert vocabulary.no_say_words(lexical, None, lendable).endswith(
        f"so recalls ask it only in {vocabulary.SOME_SAY_LENT_IN}"
    )
    assert vocabulary.FULL_SAY_WHERE_WORDS_LEAD in vocabulary.say_words(lendable, "BM25")
    # its line between relevant and not is read only when it calls few unrelated memories relevant
    assert "it calls them relevant itself" not in vocabulary.say_words(lendable, "BM25")
    assert "its own order leads" not in vocabulary.say_words(lendable, "BM25")
    reads = dataclasses.replace(lendable, unrelated_relevant=0.0)
    assert "found them near the top too or it calls them relevant itself" in vocabulary.say_words(reads, "BM25")
    leads = "in a new chat, where it calls its best memory relevant, its own order leads"
    assert leads in vocabulary.say_words(reads, "BM25")
    some = Trust("some", 0.72, 0.55, questions=70)  # not sent the unrelated memories (the utility model)
    assert vocabulary.say_words(some, "judge").endswith("its own searches found them near the top too")
    assert "its own order leads" not in vocabulary.say_words(some, "judge")
