"""What a scorer says of itself, in the words Test connection, the status tool and the chat
show: its probe's grade (scoring/verdicts.py), the in-process cross-encoder's loading and
failures (scorers/local.py), the utility judge's probe and calls (scorers/utility.py,
scoring/judge.py), the built-in word matcher's, and the calibration's account of the say
(scoring/calibration.py, score.py). Plain values in, words out: it imports nothing of the
plugin."""

from __future__ import annotations

UTILITY_MODEL = "Agent Zero's utility model"  # for the utility model there is no server to name


# --- the probe's grade (verdicts.grade_probe) --------------------------------------------------
ALL_ABOUT_ZERO = "every score is about 0: a broken model conversion?"
ALL_NEAR_ONE = "every score is near 1.0: scores squashed twice?"
IRRELEVANT_ABOVE = "the irrelevant document ranked above the relevant one"


def all_alike(score: float) -> str:
    return f"every document scored {score:.4g}: the model is not scoring"


def probe_scores(relevant: float, irrelevant: float, scale: str) -> str:
    return f"relevant {relevant:.3g} vs irrelevant {irrelevant:.3g}, {scale} scale"


def near_miss_above(shown: str) -> str:
    return f"a near miss ranked above the answer ({shown})"


def thin_margin(shown: str) -> str:
    return f"ranks right but by a thin margin ({shown})"


def ranks_correctly(shown: str) -> str:
    return f"ranks correctly ({shown})"


# --- the built-in word matcher -----------------------------------------------------------------
LEXICAL_PROBE = "built-in BM25 (lexical, no server): ranks by shared words, not meaning"


# --- the in-process cross-encoder (scorers/local.py) --------------------------------------------
INSTALL_HINT = "install it with: pip install sentence-transformers (Agent Zero already ships it)"
LOCAL_NOT_INSTALLED = (
    f"the local reranker needs the sentence-transformers package, which is not installed; {INSTALL_HINT}"
)
LOCAL_DOWNLOAD_NOTE = (
    "; a Hugging Face model id is downloaded on first use, so that needs network access once"
    " (or the model already in the Hugging Face cache)"
)
LOCAL_BLOCKS = "local.load_model blocks: await local.model() on an event loop"
TRY_AGAIN_SOON = "; try again in a moment"


def local_broken_install(kind: str, detail: str) -> str:
    return f"sentence-transformers is installed but does not import ({kind}: {detail}); {INSTALL_HINT}"


def local_no_folder(name: str) -> str:
    return f"the local model folder {name} does not exist (setting 'rerank_local_model')"


def local_cannot_load(name: str, kind: str, detail: str, where: str) -> str:
    return f"cannot load the local model {name!r} (setting 'rerank_local_model'): {kind}: {detail}{where}"


def local_loading(model: str, since: str) -> str:
    return f"the local model {model} is still loading{since}; it will be used once it is ready"


def loading_for(seconds: float) -> str:
    return f" for {seconds:.0f} s"


def local_too_slow(documents: int) -> str:
    return f"the local model did not score {documents} documents within the timeout"


def local_failed(kind: str, detail: str) -> str:
    return f"the local model failed: {kind}: {detail}"


def local_probed(model: str, device: str, grade: str) -> str:
    return f"local cross-encoder {model} on {device}: {grade}"


def local_ready_in(ms: float) -> str:
    return f"ready and scored the probe in {ms:.0f} ms"


# --- the utility judge (scorers/utility.py, scoring/judge.py) ---------------------------------
NO_AGENT = (
    f"no agent to ask: {UTILITY_MODEL} is asked for an Agent Zero chat (recall, the status tool, Test connection)"
)
NO_ARRAY = "the utility model's answer holds no JSON array of memory numbers"
SEVERAL_ARRAYS = "the utility model's answer holds several different arrays of memory numbers, not saying which"


def judge_misranks(model: str, trials: int, answered: str) -> str:
    return (
        f"{UTILITY_MODEL} ({model}) did not put the relevant probe memory first in each of {trials} trials: {answered}"
    )


def judge_probed(model: str, weak: bool, trials: int, seconds: float, timeout: float) -> str:
    what = "puts the answer first but also lists the off-topic memory" if weak else "ranks the probe correctly"
    return (
        f"{UTILITY_MODEL} ({model}) {what} in {trials} trials, answering within {seconds:.1f} s "
        f"(rerank_timeout {timeout:g} s)"
    )


def judge_listed(names: list[str]) -> str:
    return f"it listed {names or 'nothing'}"


def judge_usually(typical: float, left: float) -> str:
    return f"{UTILITY_MODEL} usually answers in {typical:.1f} s; {left:.1f} s were left"


def judge_no_time(timeout: float) -> str:
    return f"no time left to ask {UTILITY_MODEL} (rerank_timeout {timeout:g} s)"


def judge_not_in_time(allowed: float) -> str:
    return f"{UTILITY_MODEL} did not answer in the {allowed:.1f} s the recall had left"


def judge_call_failed(kind: str, why: str | None = None) -> str:
    """``why``: what the failure is (scoring/call_failure.py), when its kinds tell more than
    ``kind``, its name."""
    return f"{UTILITY_MODEL} call failed ({kind})" + (f": {why}" if why else "")


# Why it failed (scoring/call_failure.py), told from the failure's kinds and status, never its text.
JUDGE_NAME_NOT_FOUND = (
    "its server's name could not be looked up (no network, or a wrong API base in Agent Zero's model settings)"
)
JUDGE_CONNECTION_REFUSED = "its server refused the connection (is it running, on the port its API base names?)"
JUDGE_TLS_FAILED = "the secure connection to its server failed (its certificate or TLS)"
JUDGE_MODEL_NOT_FOUND = (
    "the provider knows no such model or address (HTTP 404): check the utility model's name and API base"
)
JUDGE_RATE_LIMITED = "the provider is rate-limiting it (HTTP 429); recall uses the fused order meanwhile"
JUDGE_PROMPT_TOO_LONG = "the prompt is longer than its context: lower rerank_judge_max_chars"
JUDGE_UNREACHABLE = "its server could not be reached (the network, a firewall or its API base)"


def judge_key_refused(status: int | None) -> str:
    code = f" (HTTP {status})" if status else ""
    return f"the provider refused its API key{code}: check the utility model's key in Agent Zero's model settings"


def judge_provider_error(status: int) -> str:
    return f"the provider answered with an error of its own (HTTP {status})"


def judge_no_numbers(model: str, detail: str) -> str:
    return f"{UTILITY_MODEL} ({model}) did not answer with memory numbers: {detail}"


def judge_too_slow(model: str, waited: float, timeout: float, may_raise: bool) -> str:
    """``may_raise``: a longer rerank_timeout would give it more time (below the recall's cap)."""
    raise_it = "raise rerank_timeout, " if may_raise else ""
    return (
        f"{UTILITY_MODEL} ({model}) is too slow for recall: no answer within {waited:.1f} s (rerank_timeout "
        f"{timeout:g} s); "
        "recall uses the fused order and tries it again now and then in the background. "
        f"Choose a faster utility model, {raise_it}or lower rerank_judge_max_chars (fewer candidates)"
    )


def judge_answered_kind(kind: str) -> str:
    return f"the utility model answered {kind}, not text"


def judge_only_unshown(last: int) -> str:
    return f"the utility model listed only memory numbers it was not shown (0 to {last})"


# --- the calibration: why a reranker has no say yet (scoring/calibration.py) ------------------
DEFAULT_EMBEDDER = "Agent Zero's default embedder (all-MiniLM-L6-v2)"
NOT_PROBED = "it has not passed its probe"
LAST_DID_NOT_FINISH = "the last calibration did not finish; it is tried again later"
TOO_LITTLE_TIME = "too little of this recall's time was left to measure it"
STOPPING = "the plugin is stopping; it is measured when it runs again"
CALIBRATION_STOPPED = "its calibration was stopped; it is measured again"


def calibration_not_in_time(questions: int) -> str:
    return f"the {questions} calibration questions were not all answered in time"


def calibration_short_answer(scores: int, memories: int) -> str:
    return f"it answered {scores} scores for {memories} calibration memories"


def calibration_running(questions: int) -> str:
    return f"it is being measured on {questions} calibration questions; it has its say once that is done"
