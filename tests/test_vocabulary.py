"""One vocabulary (helpers/vocabulary/, its vocabulary.json included): a sentence the user reads is
written once, and every view that says it takes it from there."""

import pytest

from helpers import vocabulary
from helpers.errors import ProbeFailed
from helpers.scoring import scorers
from helpers.status_report import JudgeSummary, StatusSummary
from helpers.settings import Settings

SERVER = Settings.from_mapping({"rerank_endpoint": "http://127.0.0.1:9"})
JUDGE = Settings.from_mapping({"rerank_api": "utility"})


@pytest.mark.parametrize(
    "verdict", ["unreachable", "auth", "model", "misranks", "unsupported", "refused", "bad_setting"]
)
def test_a_failed_probes_chat_words_are_its_verdicts_own_entry(verdict):
    """The chat line and Test connection read one entry per verdict: the headline and hint
    for the panel, the chat's words beside them."""
    entry = vocabulary.verdict_words()[verdict]
    assert entry["headline"] and entry["chat"]
    said = vocabulary.reranker_unavailable(ProbeFailed(verdict, "the server's own words"), SERVER, scorers.REMOTE)
    assert said == entry["chat"]


def test_the_host_post_filter_note_is_one_sentence_in_every_view():
    """The chat line, the status tool and Test connection say the same sentence."""

    class Done:  # what recall/outcome.Outcome gives the chat line
        reranked, scored, no_opinion, failure, applied, post_filter = True, True, "", None, True, True
        scorer, route, trust = scorers.UTILITY, None, None

    assert vocabulary.chat_head(Done()).endswith("; " + vocabulary.POST_FILTER)
    status = StatusSummary(
        plugin="a0_reranker",
        wrap_live=True,
        enabled_for_agent=True,
        setting_enabled=True,
        has_reranker=True,
        mode_text="m",
        judge=JudgeSummary("small", None, True),
        stats={"totals": {}, "latency_ms": {"p50": 0, "p95": 0, "samples": 0}, "fallback_reasons": {}, "recent": []},
        breaker={},
    )
    assert f"note: {vocabulary.POST_FILTER}" in vocabulary.status_text(status).splitlines()


def test_words_differ_by_what_a_scorer_declares_not_its_name():
    """A scorer that declares itself Agent Zero's utility model is spoken of as one, whatever
    it is called; one that does not, as a server."""

    class Declared:
        name, api, mode = "someone-new", "utility", vocabulary.UTILITY
        asks_utility_model = True

    slow = TimeoutError()
    assert vocabulary.reranker_unavailable(slow, JUDGE, Declared()).startswith(vocabulary.UTILITY_MODEL)
    assert vocabulary.reranker_unavailable(slow, JUDGE, scorers.REMOTE).startswith("no answer within")
    assert vocabulary.no_opinion(Declared()) != vocabulary.no_opinion(scorers.REMOTE)
