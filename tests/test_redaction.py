"""Redaction is linear-time, cut to the document budget first, and off the event loop.

The masks must be the ones the old patterns made (tests/privacy_reference.py) on ordinary
text, and adversarial text must finish: each example is at most 20 KB and the old patterns
took over a minute on 20 KB of "v1.2v1.2..." alone, so the pytest-timeout below (far above
what linear patterns need for every example together) is the bound, not a timing assert."""

import asyncio
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import reranker
from helpers.scoring import redaction
from tests import privacy_reference
from tests.servers import start

# --- ordinary text: the same masks as before --------------------------------------------------
WORDS = [
    "the",
    "grafana",
    "container",
    "restart",
    "policy",
    "token",
    "password",
    "secret",
    "is",
    "was",
    "valid",
    "api_key",
    "DB_PASSWORD",
    "max_tokens",
    "v1.2",
    "atlas",
    "port",
    "3001",
    "my",
    "Bearer",
    "user",
]
SECRETS = [
    "password: hunter2",
    "DB_PASSWORD=s3cr3t!",
    "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234",
    "client_secret: 'a b c'",
    "my password is hunter2",
    "the token is valid",
    "token_limit=5",
    "max_tokens: 512",
    "Bearer abcdefghijklmnop.qrs",
    "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUV",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "xoxb-1234567890-abc",
    "hf_ABCDEFGHIJKLMNOPQRSTUVWX",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK",
    "§§secret(OPENAI_KEY)",
    "https://bob:pw123@db.lan/x",
    "ops@example.org",
    "first.last+tag@mail.example.co.uk",
    "a@b.c",
    "x@y.zz%q@r.st",
    "0123456789abcdef0123456789abcdef",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "my_long_snake_case_name_with_version_v1_2_3",
]
SEPARATORS = [" ", " ", "\n", ", ", "; ", ". ", ": ", "=", "\t", " (", ") "]
ordinary = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(SECRETS)), max_size=40).flatmap(
    lambda parts: st.lists(st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)).map(
        lambda seps: "".join(p + s for p, s in zip(parts, seps))
    )
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ordinary)
def test_ordinary_text_is_masked_exactly_as_the_old_patterns_masked_it(text):
    assert redaction.redact(text) == privacy_reference.redact(text)


@pytest.mark.parametrize("secret", SECRETS)
def test_every_listed_shape_is_masked_as_before(secret):
    for text in (secret, f"note: {secret} ok", f"({secret})"):
        assert redaction.redact(text) == privacy_reference.redact(text)


# --- adversarial text: finishes ----------------------------------------------------------------
UNITS = [
    "v1.2",
    "a@",
    "-_.",
    "a",
    "a.",
    "sk-",
    "sk_a-",
    "a+",
    "x=",
    "token.",
    "password ",
    "a:",
    "a://",
    "§§secret(",
    "A1/",
    "@a.",
    "a.b@",
    "bearer ",
    '"password="',
    "eyJaaaaaaaa.",
    "my token is ",
    "1a",
    "_-",
    "é",
]
SIZE = 20_000
adversarial = st.tuples(
    st.lists(
        st.one_of(st.sampled_from(UNITS), st.text(alphabet="av1.2@-_:/=+ \"'§é", min_size=1, max_size=4)),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from(["", " ", "é", "@", "://", "=", '"']),
).map(lambda t: ("".join(t[0]) * (SIZE // len("".join(t[0])) + 1))[:SIZE] + t[1])


@pytest.mark.timeout(120)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(adversarial)
def test_twenty_kilobytes_of_adversarial_repetitions_are_redacted_in_bounded_work(text):
    out = redaction.redact(text)
    assert isinstance(out, str) and out  # and it returned: the old patterns never did in time


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", ["v1.2", "a@", "-_.", "sk-", "token.", "§§secret(", "a://", "a"])
def test_each_known_quadratic_family_at_twenty_kilobytes_finishes(unit):
    text = (unit * (SIZE // len(unit) + 1))[:SIZE]
    for tail in ("", " ", "é"):
        assert redaction.redact(text + tail)


def test_masks_are_idempotent_on_what_they_made():
    text = "password: hunter2 mail ops@example.org key sk-proj-abcdefghijklmnop1234 §§secret(X)"
    once = redaction.redact(text)
    assert redaction.redact(once) == once


# --- through arerank: cut first, and off the loop ----------------------------------------------
def test_documents_are_cut_to_the_budget_before_redaction_and_redacted_off_the_loop(monkeypatch):
    seen = []
    real = redaction.redact

    def spy(text):
        seen.append((len(text), threading.current_thread()))
        return real(text)

    monkeypatch.setattr(redaction, "redact", spy)
    big = "v1.2" * 5_000 + " the grafana container restart"  # 20 KB: only the first 1,000 characters are sent
    with start("tei19") as srv:
        config = {
            "rerank_endpoint": srv.url,
            "rerank_redact": True,
            "rerank_max_doc_chars": 1000,
            "rerank_cache": False,
        }

        async def call():
            return threading.current_thread(), await reranker.arerank(
                "grafana restart", [big, "mail ops@example.org"], config=config
            )

        loop_thread, ranked = asyncio.run(call())
        sent = [r.json for r in srv.requests if r.path == "/rerank" and r.json and "texts" in r.json]
    assert ranked is not None
    documents = [n for n, _ in seen if n > len("grafana restart")]
    assert documents and max(documents) <= 1000 + 512  # the budget, and a margin so no secret is cut in half
    assert all(thread is not loop_thread for _, thread in seen)
    assert any("[email]" in t for body in sent for t in body["texts"])


def test_a_secret_straddling_the_budget_is_still_masked_whole():
    doc = "x" * 990 + " ops@example.org and more"
    query, (cut,) = asyncio.run(redaction.redact_for_sending("q", [doc], 1000))
    assert "ops@" not in cut and "[email]" in cut
