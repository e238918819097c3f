"""Typed errors of the reranker client. They stay inside the plugin: the public API and
the recall wrapper turn every one of them into a fallback, never into an exception the
host sees."""

from __future__ import annotations


class RerankError(Exception):
    """Base of every failure the client can report. ``retryable`` drives the retry policy."""

    retryable = False


class MalformedResponse(RerankError):
    """The server answered, but not with one valid, finite score per document."""


class ServerError(RerankError):
    """A non-2xx answer (or an ``error`` body on a 2xx). ``status`` is the HTTP status;
    ``models`` the model names the server said it serves, when it listed them."""

    def __init__(self, status: int, message: str, *, retry_after: float | None = None, models: tuple[str, ...] = ()):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.models = models

    @property
    def retryable(self) -> bool:  # type: ignore[override]
        return self.status in (429, 502, 503, 504)


class BatchTooLarge(ServerError):
    """The server named how many documents one request may carry ("maximum allowed batch
    size M" from TEI, "at most M items" from pydantic servers): split and send again."""

    def __init__(self, status: int, message: str, limit: int):
        super().__init__(status, message)
        self.limit = limit


class PairTooLong(ServerError):
    """The server counted a (query, document) pair past what its model reads at once
    (llama.cpp's physical batch, vLLM's context length) and refused the whole request,
    naming ``tokens`` sent against its ``limit``: cut the documents shorter and send again."""

    def __init__(self, status: int, message: str, tokens: int, limit: int):
        super().__init__(status, message)
        self.tokens, self.limit = tokens, limit


class TransportError(RerankError):
    """Connection refused or reset, DNS failure, TLS failure: worth one more try.
    ``unreachable``: the endpoint's own host refused or could not be found (not a dropped
    answer, not a redirect's target): every other path of it would fail the same way."""

    retryable = True

    def __init__(self, message: str, *, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable


class DeadlineExceeded(RerankError):
    """The call's total time budget ran out (retries included)."""


class TooSlow(DeadlineExceeded):
    """A judge gave no answer within the whole time a recall gives it (rerank_timeout):
    not a passing delay but its speed, so it is kept as a verdict (scoring/probing.py)
    and the judge is not asked again on the recall path until a trial says otherwise.
    ``seconds``: how long it was waited for."""

    def __init__(self, message: str, seconds: float):
        super().__init__(message)
        self.seconds = seconds


class QueryCut(DeadlineExceeded):
    """A reranker gave no answer within its whole time to a long query: from now on it is
    asked a shorter one (scoring/query_budget.py). ``tried_chars``: the query it ran out
    on; ``now_chars``: what its query holds from now on."""

    def __init__(self, message: str, tried_chars: int, now_chars: int):
        super().__init__(message)
        self.tried_chars, self.now_chars = tried_chars, now_chars


class BreakerOpen(RerankError):
    """The endpoint failed repeatedly and is being skipped for a cool-down."""


class NotConfigured(RerankError):
    """No endpoint, or a setting the call cannot work with."""


class Refused(RerankError):
    """The privacy guard would not send memory text to this endpoint."""


class ProbeFailed(RerankError):
    """The probe found nothing usable; ``verdict`` says how (scoring/verdicts.py), and for a
    route that answered wrongly, ``status`` (its HTTP status) or ``malformed``."""

    def __init__(self, verdict: str, reason: str, status: int | None = None, malformed: bool = False):
        super().__init__(reason)
        self.verdict, self.status, self.malformed = verdict, status, malformed


class ResponseTooLarge(MalformedResponse):
    """The answer grew past what any reranker answer needs (counted after decompression)."""


class RedirectLoop(RerankError):
    """The server kept redirecting (httpx stops after 20 hops): no answer to read."""


class SettingsError(ValueError):
    """A setting has a value the plugin cannot use. ``key`` names it."""

    def __init__(self, key: str, message: str):
        super().__init__(f"setting '{key}': {message}")  # how every view names a setting's problem
        self.key = key
        self.detail = message  # without the key, for callers that name it their own way (the CLI)


class SaveRefused(ValueError):
    """A Save the settings hook refuses (hooks.save_plugin_config). Its message is a
    ``SettingsError``'s, naming the setting and never a key's value: the plugin's end
    extension of Agent Zero's ``Plugins._save_config`` turns it into the answer the host's
    settings modal shows (``{"ok": false, "error": message}``), where the host itself would
    answer any exception with a 500 its modal reads as "Save failed"."""
