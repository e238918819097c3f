"""Why a utility-model call failed, told from the failure's kinds and status
(helpers/scoring/call_failure.py): chains built as LiteLLM, the OpenAI client and the
transports build them, and exceptions that are hostile to read. The real chains, through a
real LiteLLM call, are in tests/test_utility_judge_litellm.py."""

import socket
import ssl

from helpers.scoring import call_failure


def chained(*layers: BaseException) -> BaseException:
    """``layers`` outermost first, each raised from the next (``raise ... from``)."""
    for outer, inner in zip(layers, layers[1:]):
        outer.__cause__ = inner
    return layers[0]


def named(name: str, status: object = None, base: type = Exception) -> BaseException:
    """An exception of a package the plugin does not import, known by its class name."""
    kind = type(name, (base,), {})
    exc = kind("Incorrect API key provided: sk-secret-123")
    if status is not None:
        exc.status_code = status
    return exc


def test_a_name_lookup_that_failed_under_litellm_says_so():
    exc = chained(named("APIError", 500), named("ClientConnectorDNSError"), socket.gaierror(-2, "Name unknown"))
    assert "name could not be looked up" in call_failure.reason(exc)


def test_a_refused_connection_under_litellms_own_500_is_not_a_provider_error():
    exc = chained(named("InternalServerError", 500), named("APIConnectionError"), ConnectionRefusedError(111, "x"))
    assert "refused the connection" in call_failure.reason(exc)
    # LiteLLM's connection error carries 500 itself, with no socket error under it
    assert "could not be reached" in call_failure.reason(named("APIConnectionError", 500))


def test_tls_key_model_rate_and_context_failures_are_told_apart():
    assert "secure connection" in call_failure.reason(chained(named("APIError"), ssl.SSLError(1, "bad cert")))
    assert "refused its API key (HTTP 401)" in call_failure.reason(named("AuthenticationError", 401))
    assert "refused its API key (HTTP 403)" in call_failure.reason(named("SomethingElse", 403))
    assert "refused its API key: " in call_failure.reason(named("AuthenticationError"))  # no status to name
    assert "(HTTP 404)" in call_failure.reason(named("NotFoundError", 404))
    assert "rate-limiting" in call_failure.reason(named("RateLimitError", 429))
    assert "rerank_judge_max_chars" in call_failure.reason(named("ContextWindowExceededError", 400))
    assert "(HTTP 502)" in call_failure.reason(named("BadGatewayError", 502))


def test_a_failure_whose_kinds_say_nothing_more_gets_no_reason():
    assert call_failure.reason(named("BadRequestError", 400)) is None
    assert call_failure.reason(ValueError("sk-secret-123")) is None


def test_no_reason_quotes_the_failures_text():
    for exc in (named("AuthenticationError", 401), named("APIConnectionError", 500), named("RateLimitError", 429)):
        assert "sk-secret" not in call_failure.reason(exc)


class _HostileStatus(Exception):
    @property
    def status_code(self):
        raise RuntimeError("reading me fails")


def test_a_status_that_is_not_a_status_says_nothing():
    assert call_failure.reason(_HostileStatus()) is None
    for status in (True, "401", 401.0, 200, 99999, None):
        assert call_failure.reason(named("Weird", status)) is None


def test_a_chain_that_loops_or_runs_deep_is_read_to_an_end():
    a, b = named("APIError"), named("Other")
    a.__cause__, b.__context__ = b, a
    assert call_failure.reason(a) is None
    deep = [named(f"Layer{i}") for i in range(50)] + [ConnectionRefusedError(111, "x")]
    assert call_failure.reason(chained(*deep)) is None  # past what is read: the name alone
    assert "refused" in call_failure.reason(chained(*deep[-5:]))


def test_an_implicit_context_counts_like_a_cause():
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except OSError:
            raise named("APIConnectionError", 500)  # noqa: B904 - as a library without "from" does
    except Exception as exc:
        assert "refused the connection" in call_failure.reason(exc)
