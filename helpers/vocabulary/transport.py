"""What a server's answer, or the way to it, did wrong, in the words Test connection and the
chat show: the HTTP client's (scoring/client.py), the body reader's (response_body.py), the
wire's (wire/_parse.py), the error reader's (server_errors.py) and the key scrubber's. Plain
values in, words out: it imports nothing of the plugin, so every layer can use it."""

from __future__ import annotations

# --- the request ---------------------------------------------------------------------------
NEEDS_SCHEME_AND_HOST = "it needs http:// or https:// and a host"
KEY_NOT_HEADER_SAFE = "the API key has characters an HTTP header cannot carry (setting 'rerank_api_key')"
NOT_SENT_IN_TIME = "timed out before the request was sent"
REDIRECT_LOOP = "the server redirected in a loop (more than 20 hops); nothing was answered"
REDIRECT_NOT_FOLLOWED = "redirected; not followed while rerank_private_only is on"
CONNECTION_FAILED = "connection failed"


def invalid_endpoint(reason: str) -> str:
    return f"the endpoint is not a valid URL: {reason} (setting 'rerank_endpoint')"


def no_answer_within(seconds: float) -> str:
    return f"no answer within {seconds:g} s"


def no_complete_answer_within(seconds: float) -> str:
    return f"no complete answer within {seconds:g} s"


# --- the answer's body ---------------------------------------------------------------------
NESTED_TOO_DEEP = "the answer is nested too deeply to read"
EMPTY_BODY = "empty response body"
HTML_NOT_JSON = "an HTML page instead of JSON (a proxy or login page?)"
JSON_NESTED_TOO_DEEP = "response is not valid JSON (nested too deeply)"


def corrupt_compressed(coding: str = "") -> str:
    what = f"{coding}-compressed" if coding else "compressed"
    return f"the {what} answer is corrupt and cannot be decompressed"


def coding_not_asked_for(coding: str | None) -> str:
    """``coding``: the header's codings when each is a registered name, else None (the
    header is the server's to write: it may echo anything sent, a key included)."""
    if coding is None:
        return "the answer is compressed in a coding that was not asked for"
    return f"the answer is compressed as '{coding}', which was not asked for"


def answer_too_large(limit: str) -> str:
    return f"answer too large: more than {limit} (decompressed); a reranker answer needs far less"


def invalid_json(reason: str) -> str:
    return f"response is not valid JSON ({reason})"


def non_finite_constant(name: str) -> str:
    return f"non-finite number {name}"


# --- the results in it ---------------------------------------------------------------------
RESULT_NOT_OBJECT = "a result is not an object"
OTHER_KIND = "a value of another kind"


def expected_results_under(containers: str) -> str:
    return f"expected a list of results under {containers}"


def results_for_documents(results: int, documents: int) -> str:
    return f"{results} results for {documents} documents"


def index_not_whole(shape: str, last: int) -> str:
    return f"result index ({shape}, not a whole number) is not in 0..{last}"


def index_out_of_range(index: int, last: int) -> str:
    return f"result index {_number(index)} is not in 0..{last}"


def index_twice(index: int) -> str:
    return f"result index {index} appears twice"


def _number(n: int) -> str:
    """A server's whole number as a reason quotes it: at most a dozen characters (JSON's
    integers have no bound, and a reason is one line)."""
    text = str(n)
    return text if len(text) <= 12 else f"{text[:8]}… ({len(text.lstrip('-'))} digits)"


def score_not_number(index: int, shape: str) -> str:
    return f"the score for index {index} is {shape}, not a finite number"


def score_not_finite(index: int) -> str:
    return f"the score for index {index} is not a finite number"


def score_beyond(index: int, bound: float) -> str:
    return f"the score for index {index} is beyond any reranker's range (±{bound:g})"


# --- a server's error answer and the key ---------------------------------------------------
ERROR_NOT_STRUCTURED = "the error answer is not structured (nested too deeply, or unreadable)"
KEY_WITHHELD = "(the server's text was withheld: it held the API key in some form)"
