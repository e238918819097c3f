"""What the plugin is doing, in plain words: the one vocabulary every view uses — the chat's
recall line, the panel and Test connection (served to the browser by
api/settings_fields.py, like the settings' limits), the status API and tool, the chat
skill and the CLI. Its data file, vocabulary.json, holds Test connection's verdicts.

The words differ by scorer only through what the scorer declares (scoring/scorers/base.py:
its ``mode``, ``asks_utility_model``, ``sends_text``), so a new scorer speaks by declaring.
A reason (an exception's message, a probe's finding) is said where the rule that found it
lives and quoted here as it is. No word here holds a path or a URL: the web UI turns
path-like text in a recall step into file-browser links.

In order: the modes and what judged (every view); a scorer's say; around a call (the
breaker, the endpoint guard, the privacy notes); the host's post-filter; the status tool's
text; the chat's recall line (heads, parts, why a reranker was not used, the fallback);
Test connection; no reranker to probe; the CLI, and its report of a decision log."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Sequence

from ..errors import (
    BreakerOpen,
    DeadlineExceeded,
    MalformedResponse,
    NotConfigured,
    ProbeFailed,
    QueryCut,
    Refused,
    ServerError,
    SettingsError,
    TooSlow,
    TransportError,
)
from .scorer_words import UTILITY_MODEL
from .shown import LogSummary, Outcome, Probed, Route, Scorer, Settings, StatusSummary, Trust
from .transport import no_answer_within


OFF = "off"
FUSION = "fusion"
LEXICAL = "fusion+lexical"
LOCAL = "fusion+local"
REMOTE = "fusion+reranker"
UTILITY = "fusion+utility"


def mode(settings: Settings, scorer: Scorer | None) -> str:
    """The mode's name; ``scorer``: the settings' scorer (scorers.for_settings), or None."""
    if not settings.enabled:
        return OFF
    return FUSION if scorer is None else scorer.mode


# The chat's recall line names what ordered the memories, once per recall.
CHAT = {
    FUSION: "ordered by the plugin's own searches, no reranker",
    LEXICAL: "reranked by the built-in word matcher (BM25)",
    LOCAL: "reranked by the in-process cross-encoder",
    UTILITY: f"judged by {UTILITY_MODEL}",
}
# A server by the wire it speaks; the rerank family (Cohere, Jina, Infinity, llama.cpp,
# vLLM /rerank) shares one wire, so it is named by its role.
SERVERS = {
    "tei": "your TEI server",
    "vllm-score": "your vLLM server",
    "voyage": "the Voyage API",
    "mixedbread": "the Mixedbread API",
}
SERVER = "your reranker server"
QWEN3 = "your Qwen3-Reranker on vLLM"

# Test connection's verdicts: a headline and what to do next, per verdict; data, kept in
# vocabulary.json beside this module.
DATA = Path(__file__).with_name("vocabulary.json")


@functools.lru_cache(maxsize=1)
def verdict_words() -> dict[str, dict[str, str]]:
    return json.loads(DATA.read_text(encoding="utf-8"))["verdicts"]


def chat_words(scorer: Scorer | None, route: Route | None = None) -> str:
    """What ordered a recall's memories, for the chat's line (``scorer`` None: fusion alone).
    ``route``: the detected route of a server (helpers/wire), when one answered."""
    current = FUSION if scorer is None else scorer.mode
    if current in CHAT:
        return CHAT[current]
    if route is None:
        return f"reranked by {SERVER}"
    if route.templated:
        return f"reranked by {QWEN3}"
    return f"reranked by {SERVERS.get(route.dialect.name, SERVER)}"


def judge_name(scorer: Scorer | None, route: Route | None = None) -> str:
    """What judged, as a noun: "your TEI server", "the built-in word matcher (BM25)"."""
    words = chat_words(scorer, route)
    return words.split(" by ", 1)[1] if " by " in words else words


# Where a reranker with no say on the calibration set may still have some (calibration.lend_say).
NEW_CHAT = "a new chat (its first message)"
WORDS_LEAD_STORE = "a store whose embedder misses what the message's words find"
SOME_SAY_LENT_IN = f"{NEW_CHAT} and in {WORDS_LEAD_STORE}"
# Where one better than the embedder that orders, not guesses, has full say (Trust.full_where_words_lead).
FULL_SAY_WHERE_WORDS_LEAD = (
    f"in {WORDS_LEAD_STORE} it is trusted fully: it kept the calibration's memories about something else "
    "entirely below the answer"
)


def no_say_words(scorer: Scorer | None, route: Route | None, trust: Trust | None) -> str:
    """The chat line's words for a reranker with no say in a search: its say is not measured
    yet (it was asked, and answered), or it earned none on the calibration set
    (scoring/calibration.py), so recalls no longer ask it where it has none. One sentence
    for both searches of the recall that measured it, asked or not."""
    name = judge_name(scorer, route)
    if trust is None or trust.say == "unmeasured":
        return f"{name} answered, but has no say until its calibration finishes"
    where = f"only in {SOME_SAY_LENT_IN}" if trust.lendable else "no longer"
    return (
        f"{name} has no say: it did not order the calibration questions clearly better than Agent Zero's "
        f"own search, so recalls ask it {where}"
    )


def panel_words() -> dict[str, Any]:
    """The words the settings panel shows, as the panel reads them."""
    return {
        "verdicts": verdict_words(),
        "modes": {m: CHAT.get(m, f"reranked by {SERVER}") for m in (FUSION, LEXICAL, LOCAL, UTILITY, REMOTE)},
    }


def describe(settings: Settings, scorer: Scorer | None, route: str | None = None) -> str:
    """One line: which mode, and whether its order is applied. ``route`` is the detected
    route of a server (e.g. "TEI /rerank"), when known."""
    current = mode(settings, scorer)
    if current == OFF:
        return "off: recall is stock Agent Zero (rerank_enabled is false)"
    if current == FUSION:
        text = "built-in fusion, no reranker server"
        if settings.api in ("rerank", "qwen3_score"):
            text += f" (rerank_api is '{settings.api}' but rerank_endpoint is empty)"
    elif current == LEXICAL:
        text = "built-in fusion + the built-in lexical reranker (BM25, no server)"
    elif current == UTILITY:
        text = f"built-in fusion + {UTILITY_MODEL} as the judge (one LLM call per recall, no server)"
    elif current == LOCAL:
        text = f"built-in fusion + the in-process cross-encoder {settings.local_model}"
    else:
        text = f"built-in fusion + the reranker at {settings.shown_endpoint} ({route or 'API detected on first use'})"
    if not settings.apply:
        text += "; shadow mode: measured only, the agent gets Agent Zero's own order"
    return text


def as_dict(settings: Settings, scorer: Scorer | None, route: str | None = None) -> dict[str, Any]:
    return {"mode": mode(settings, scorer), "mode_text": describe(settings, scorer, route), "applied": settings.apply}


# --- a scorer's say, earned on the calibration set -----------------------------------------
def say_words(result: Trust, name: str) -> str:
    """One sentence for Test connection and the status tool: how the scorer ``name`` did
    against Agent Zero's own search on the calibration set (``result``: scoring/calibration.Trust),
    and what that means for recall."""
    if result.say == "unmeasured":
        return f"{name} has no say in recall yet: its calibration did not finish ({result.reason})"
    figures = (
        f"on {result.questions} calibration questions it scored {result.reranker:.2f} (1.00: the answer always "
        f"first), {result.embedder_name} {result.embedder:.2f} ({result.calls} calls, {result.seconds:.1f} s)"
    )
    # recall/pipeline.reranker_leads: a line between relevant and not that can be read
    # (calibration.Trust.means_relevant), and its best memory called relevant
    leads = (
        "; in a new chat, where it calls its best memory relevant, its own order leads" if result.means_relevant else ""
    )
    if result.say == "full":
        return f"{name} is trusted fully: {figures}; its picks that stand out take the first places in recall{leads}"
    fully_where_words_lead = f"; {FULL_SAY_WHERE_WORDS_LEAD}" if result.full_where_words_lead else ""
    # recall/pipeline.combine: a pick the searches found near the top, or one a reranker whose
    # line can be read calls relevant itself
    near_top = "its own searches found them near the top too" + (
        " or it calls them relevant itself" if result.means_relevant else ""
    )
    if result.say == "some":
        return (
            f"{name} is trusted a little: {figures}; its picks that stand out may move the plugin's "
            f"fused order only when {near_top}{leads}{fully_where_words_lead}"
        )
    if result.reranker is not None and result.embedder is not None and abs(result.reranker - result.embedder) < 0.02:
        why = "it orders like an embedding model, not a reranker"
    elif result.reranker is not None and result.embedder is not None and result.reranker < result.embedder:
        why = "it did worse than the embedder"
    else:
        why = "it was not clearly better than the embedder"
    said = (
        f"{name} gets no say in recall: {figures}, so {why}; the plugin's fused order stands and recalls do not "
        "ask it (Test connection measures it again)"
    )
    if result.lendable:
        said += (
            f", except in {NEW_CHAT if result.full_where_words_lead else SOME_SAY_LENT_IN}: it is better than the "
            "embedder by more than a rerun could move it, and there its picks that stand out may move the fused "
            f"order when {near_top}{leads}{fully_where_words_lead}"
        )
    elif result.surely_better and result.unrelated_above is not None:
        said += (
            ". It is better than the embedder by more than a rerun could move it, but it scored "
            f"{result.unrelated_above:.0%} of the calibration's memories about something else entirely at or above "
            "the answer, as noise does, so no search lends it a say"
        )
    return said


# --- around a call: the breaker and the endpoint guard -------------------------------------


def skipped(settings: Settings, scorer: Scorer) -> str:
    """Why a call was not made: its breaker is open (BreakerOpen's reason)."""
    what = UTILITY_MODEL if scorer.asks_utility_model else "endpoint"
    return f"{what} failing; skipped for up to {settings.breaker_cooldown:g} s"


def refused(shown: str) -> str:
    """The endpoint guard's refusal (Refused's reason); ``shown``: how the endpoint is named."""
    return (
        f"refused by the privacy guard: {shown} is not on loopback or a private network (setting 'rerank_private_only')"
    )


def utility_endpoint_named(model: str, endpoint: str | None, host: str) -> str:
    """How a refusal names the utility model's endpoint: ``endpoint`` None when it cannot be
    read, "" when the model has no api_base (a provider's hosted service)."""
    what = f"{UTILITY_MODEL} ({model})"
    if endpoint is None:
        return f"{what}, whose endpoint cannot be read from Agent Zero's model settings,"
    if not endpoint:
        return f"{what}, which has no api_base and so runs at its provider's hosted service,"
    return f"{what} at {host or 'its api_base'}"


def privacy_notes(settings: Settings, scorer: Scorer | None) -> list[str]:
    """What Test connection says about the privacy guard for the settings' scorer (None:
    fusion alone, which sends nothing)."""
    out = []
    remote = scorer is not None and scorer.sends_text
    if scorer is not None and scorer.asks_utility_model and settings.private_only:
        out.append(
            f"privacy guard: {UTILITY_MODEL} judges only when its api_base is on loopback or a private "
            "network (a local utility model: Ollama, LM Studio, vLLM); a hosted one (no api_base) is refused"
        )
    elif settings.private_only:
        out.append(
            "privacy guard: only loopback and private-network endpoints are allowed"
            if remote
            else "privacy guard: nothing leaves this machine (in-process reranker)"
        )
    if settings.redact:
        out.append(
            "privacy guard: e-mails, keys and passwords are masked before memory text is sent"
            if remote
            else "privacy guard: redaction not needed, the in-process reranker sends nothing"
        )
    return out


# --- the host's own post-filter, beside the utility judge ----------------------------------
POST_FILTER = (
    "Agent Zero's memory post-filter is on too, so the utility model judges each recall twice; turn the post-filter off"
)
# Test connection says why, where a person is deciding.
POST_FILTER_WHY = (
    "(Memory settings): this judge reads the whole pool, the post-filter only what is already cut to the prompt"
)


# --- the status tool's text ---------------------------------------------------------------
def _key_words(status: StatusSummary) -> str:
    if status.api_key_set:
        return "set"
    if status.api_key_saved_for:
        return f"none sent (the stored key was saved for {status.api_key_saved_for}, not this endpoint)"
    return "none"


def status_text(status: StatusSummary, probe: Probed | None = None) -> str:
    """The status summary (status_report.collect) in plain text for the agent: the headline
    first, then the details. ``probe``: the report of a probe just made (aprobe's)."""
    lines = []
    enabled = status.enabled_for_agent and status.setting_enabled
    counters = status.stats
    if status.settings_error:
        headline = f"NOT WORKING: a setting is invalid: {status.settings_error}"
    elif not enabled:
        headline = "OFF: the plugin is disabled for this agent; recall is stock Agent Zero"
    elif not status.wrap_live:
        headline = "NOT WORKING: the memory search is not wrapped (restart Agent Zero)"
    elif probe is not None and status.has_reranker:
        headline = (
            "WORKING: " if probe.ok else "RERANKER NOT WORKING (recall uses built-in fusion meanwhile): "
        ) + probe.reason
    elif not status.has_reranker:
        headline = f"WORKING: {status.mode_text}; nothing to probe"
    else:
        headline = f"ON: {status.mode_text}"
    lines.append(headline)
    if enabled and not status.settings_error:
        if headline.startswith(("WORKING: ", "RERANKER NOT WORKING")) and status.has_reranker:
            lines.append(f"mode: {status.mode_text}")
        lines.append(
            f"so far: {counters.total('reranked')} reranked, {counters.total('fused')} fused, "
            f"{counters.total('shadow')} shadow, "
            f"{counters.total('reranker_unavailable')} with the reranker unavailable, "
            f"{counters.total('fallback')} fallbacks to Agent Zero's own order"
        )
    lines.append(
        f"endpoint: {status.endpoint or '-'}  model: {status.model or '-'}  api setting: "
        f"{status.api_setting}  api key: {_key_words(status)}"
    )
    judge = status.judge
    if judge is not None:
        lat = judge.latency
        timing = (
            f"last answer {lat.last_ms} ms, median {lat.median_ms} ms over {lat.calls} calls"
            if lat
            else "not asked yet"
        )
        lines.append(f"judge: {UTILITY_MODEL} {judge.utility_model or '-'}; {timing}")
        if judge.not_used:
            lines.append(f"judge not used: {judge.not_used}")
        if judge.post_filter:
            lines.append(f"note: {POST_FILTER}")
    trust_text = (probe.trust_text if probe is not None else None) or status.trust_text
    if trust_text and status.has_reranker:
        lines.append(f"say in recall: {trust_text}")
    detected = (probe.route if probe is not None else None) or (
        status.detected.route if status.detected is not None else None
    )
    lines.append(f"detected: {detected or 'not probed yet'}; wrap live: {status.wrap_live}")
    if status.has_reranker and status.query_chars is not None:
        lines.append(query_line(status.query_chars, status.query_ran_out_on))
    lat = counters.latency
    lines.append(
        f"latency p50 {lat.p50} ms, p95 {lat.p95} ms over {lat.samples} calls; "
        f"fallbacks by reason: {counters.fallback_reasons or 'none'}; "
        f"reranker unavailable by reason: {counters.unavailable_reasons or 'none'}"
    )
    if counters.last_error is not None:
        lines.append(f"last error: {counters.last_error.reason}")
    latest = counters.latest_answered
    if latest is not None and latest.reason:  # only the latest search's note: older ones are history
        lines.append(f"note: {latest.reason}")
    if counters.shadow is not None:
        s = counters.shadow
        lines.append(
            f"shadow: top result would change in {s.top_changed}/{s.searches} searches; mean overlap@k "
            f"{s.mean_overlap_at_k}; {s.promoted_from_below_cut} memories from below the host's cut"
        )
    for name, state in status.breaker.items():
        if state.open_for_s:
            lines.append(f"circuit breaker open for {state.open_for_s} s more: {name.split('|')[0]}")
    if probe is not None:
        for attempt in probe.attempts:
            lines.append(f"  tried {attempt.route.describe()}: {attempt.verdict} ({attempt.reason[:120]})")
    return "\n".join(lines)


# --- the chat's recall line ---------------------------------------------------------------
# The words come from the kind of failure alone, so no key and no memory text can reach the
# chat. recall/recall_line.py puts a recall's two searches on one line.
def chat_head(done: Outcome) -> str:
    """What ordered one search's memories (recall/outcome.Outcome ``done``), and why not the
    reranker when one was configured."""
    if done.reranked:
        head = chat_words(done.scorer, done.route)
    elif done.scored or done.not_asked:
        head = f"{CHAT[FUSION]}; {no_say_words(done.scorer, done.route, done.trust)}"
    elif done.no_opinion:
        head = f"{CHAT[FUSION]}; {done.no_opinion}"
    elif done.failure is not None:
        head = f"{CHAT[FUSION]}; the reranker was not used: {done.failure.words}"
    else:
        head = chat_words(done.scorer)
    head = head if done.applied else f"shadow mode, not applied: {head}"
    if done.scorer is not None and done.scorer.asks_utility_model and done.post_filter:
        head += f"; {POST_FILTER}"
    return head


# The reranker's own order led: it called its best memory relevant (recall/pipeline.reranker_leads).
RERANKER_LED = "in the reranker's own order (it called its best memory relevant)"
# A store whose embedder misses what the message's words find (recall/store_agreement.py).
WORDS_LED = "the message's words leading (in this store the embedder misses what they find)"


def chat_part(done: Outcome) -> str:
    """One search's part of the line: of what reached (or would reach) the prompt, how many
    Agent Zero alone would not have shown there (not in its own first slots), whether the
    first one differs, whether the message's words led, and for the utility model how long
    its answer took (per search, so the two searches still share one head)."""
    if not done.shown:
        return "none found" if not done.dropped_by_floor else "none above the relevance floor"
    new, top_changed = done.changes.entered_top_k, done.changes.top_changed
    if done.applied:
        text = f"{new} of {done.shown} that Agent Zero alone would not have shown"
        text += ", first one changed" if top_changed else ", same first one"
    else:
        text = f"{new} of {done.shown} would be ones Agent Zero alone does not show"
        text += ", the first one would change" if top_changed else ", the same first one"
    if done.words_led:
        text += f", {WORDS_LED}"
    if done.reranked and done.reranker_led:
        text += f", {RERANKER_LED}"
    if done.scorer is not None and done.scorer.asks_utility_model and done.scored:
        if done.same_call:
            text += ", judged in the same call"
        elif done.scorer_ms is not None:
            text += f", judged in {done.scorer_ms / 1000:.1f} s"
        else:
            text += ", judged from the score cache"
    return text


FALLBACK_PART = "as Agent Zero found them"


def fallback_head(words: str) -> str:
    """A search whose own steps failed: the host's own order stood, and why."""
    return f"Agent Zero's own order ({words})"


def host_order_kept(exc: BaseException) -> str:
    """Why the plugin left the host's own result, from the kind of failure alone."""
    if isinstance(exc, SettingsError):
        return f"the setting {exc.key} is invalid"
    if isinstance(exc, TimeoutError):
        return "the recall's time ran out"
    return f"the plugin's search failed ({type(exc).__name__})"


def no_opinion(scorer: Scorer | None) -> str:
    """A reranker that answered but scored every memory alike: the utility judge's "[]"."""
    if scorer is not None and scorer.asks_utility_model:
        return f"{UTILITY_MODEL} found none of the memories useful, so the fused order stands"
    return "it scored every memory alike, so the fused order stands"


# Who a failure is said of, by the scorer's mode: every kind of failure has one wording
# (_UNAVAILABLE, _probe_failed, vocabulary.json's chat words), said of whichever failed.
SUBJECT = {
    REMOTE: "the server",
    LOCAL: "the in-process cross-encoder",
    LEXICAL: "the built-in word matcher",
    UTILITY: UTILITY_MODEL,
}


def subject(scorer: Scorer | None) -> str:
    """Who failed: what the scorer declares itself (its mode), a server when it is none of ours."""
    return SUBJECT.get(scorer.mode, SUBJECT[REMOTE]) if scorer is not None else SUBJECT[REMOTE]


def reranker_unavailable(exc: BaseException, settings: Settings, scorer: Scorer | None) -> str:
    """Why the reranker was not used, from the kind of failure alone, said of the scorer."""
    who = subject(scorer)
    if isinstance(exc, ProbeFailed):
        return _probe_failed(exc, settings, who)
    return next(say(exc, settings, who) for kind, say in _UNAVAILABLE if isinstance(exc, kind))


def failure_words(verdict: str, who: str = SUBJECT[REMOTE]) -> str:
    """A kind of failure (a probe verdict of vocabulary.json) as the chat line says it of
    ``who``: its one wording, which Test connection's reasons start from too; "" for a
    verdict that has none."""
    return verdict_words().get(verdict, {}).get("chat", "").format(who=who)


def _probe_failed(exc: ProbeFailed, settings: Settings, who: str) -> str:
    if exc.verdict == "too_slow":  # the measured seconds and what to change, in the scorer's words
        return str(exc)
    if exc.verdict == "timeout":
        return gave_no_answer(who, settings.timeout)
    if exc.verdict == "not_configured":
        return not_set_up(who)
    if exc.verdict == "busy" and exc.status is not None:
        return busy(who, exc.status)
    chat = failure_words(exc.verdict, who)
    if chat:
        return chat
    if exc.status is not None:
        return answered_http(who, exc.status)
    return unreadable(who) if exc.malformed else f"{who} failed the probe (see Test connection)"


def query_line(chars: int, ran_out_on: int | None) -> str:
    """What the reranker reads as its query (status_text; scoring/query_budget.py)."""
    line = f"reranker's query: the message and the newest conversation, at most {chars:,} characters"
    if ran_out_on is not None:
        line += f" (cut: it ran out of time reading {ran_out_on:,}; until Agent Zero restarts or these settings change)"
    return line


def query_cut(tried_chars: int, now_chars: int) -> str:
    """A reranker that ran out of time reading a long query (scoring/query_budget.py)."""
    return (
        f"it ran out of time reading a {tried_chars:,}-character query, so from now on its query is cut to "
        f"{now_chars:,} characters (the message and the newest conversation that fits)"
    )


def gave_no_answer(who: str, seconds: float) -> str:
    return f"{who} gave {no_answer_within(seconds)}"


# What a server answers when it is there but cannot score now: overloaded (TEI, Infinity and
# the hosted APIs: 429) or still loading its model, or past its parallel slots (llama.cpp,
# Ollama: 503). Not a wrong route or a wrong setting: the same request may pass in a moment.
BUSY_STATUSES = (429, 503)


def busy(who: str, status: int) -> str:
    return f"{failure_words('busy', who)} (HTTP {status})"


def answered_http(who: str, status: int) -> str:
    return f"{who} answered HTTP {status}"


def unreadable(who: str) -> str:
    return f"{who}'s answer could not be read"


def not_set_up(who: str) -> str:
    return f"{who} is not set up (see Test connection)"


# --- a server's probe, in Test connection's words (scorers/remote.py) ------------------------
PROBE_NO_ROUTE = "no route to try for this endpoint and API setting"
FOLLOWS_POSITION = "scores follow the position, not the document"
TEMPLATED_AFTER_RAW = "; raw text ranked wrongly, so the Qwen3 judge prompt is rendered here"


def probe_cannot_connect(reason: str) -> str:
    return f"cannot connect: {reason}"


def probe_malformed(reason: str) -> str:
    return f"malformed answer: {reason}"


def probe_unreachable(endpoint: str, reason: str) -> str:
    return f"cannot reach {endpoint}: {reason}"


def probe_timeout(endpoint: str, route: str, reason: str) -> str:
    return f"{endpoint} did not answer in time on {route}: {reason}"


def probe_auth(key_sent: bool, route: str, said: str) -> str:
    """A 401/403, with the server's own words (an origin or plan rule says more than "key")."""
    if key_sent:
        return f"{failure_words('auth')}: {route}: {said}; check 'rerank_api_key'"
    return f"the server wants an API key and none is set: {route}: {said}; type it into 'rerank_api_key'"


def probe_model(model: str, served: Sequence[str], status: int | None, route: str) -> str:
    wanted = f"has no model '{model}'" if model else "serves several models and needs one named"
    return f"the server {wanted}: set 'rerank_model' to one of {', '.join(served)} (HTTP {status} from {route})"


def probe_misranks(route: str, reason: str) -> str:
    return f"the endpoint answers but does not rank correctly: {route}: {reason}"


def probe_unsupported() -> str:
    return f"{failure_words('unsupported')} (llama.cpp: start it with --reranking)"


def probe_busy(route: str, reason: str) -> str:
    return f"{failure_words('busy')}: {route}: {reason}"


def probe_error(route: str, reason: str) -> str:
    return f"no route answered correctly; last: {route}: {reason}"


# Any other failure, by the first kind that matches: (kind, words for (exc, settings, who)).
_UNAVAILABLE = (
    (TooSlow, lambda exc, s, who: str(exc)),  # the judge's: the measured seconds and what to change
    (QueryCut, lambda exc, s, who: f"{gave_no_answer(who, s.timeout)}; {query_cut(exc.tried_chars, exc.now_chars)}"),
    ((TimeoutError, DeadlineExceeded), lambda exc, s, who: gave_no_answer(who, s.timeout)),
    (BreakerOpen, lambda exc, s, who: f"{who} kept failing, skipped for up to {s.breaker_cooldown:g} s"),
    (TransportError, lambda exc, s, who: f"the call to {who} failed"),  # a probe that reached nothing: "unreachable"
    (
        ServerError,
        lambda exc, s, who: (
            failure_words("auth", who)
            if exc.status in (401, 403)
            else busy(who, exc.status)
            if exc.status in BUSY_STATUSES
            else answered_http(who, exc.status)
        ),
    ),
    (MalformedResponse, lambda exc, s, who: unreadable(who)),
    (Refused, lambda exc, s, who: failure_words("refused", who)),
    (NotConfigured, lambda exc, s, who: not_set_up(who)),
    (BaseException, lambda exc, s, who: f"{who} failed (see Test connection)"),
)


# --- Test connection -----------------------------------------------------------------------
UNSAVED_NOTE = "Test checks the values shown; press Save to keep them."
NO_FORM = "no settings were sent"


def asked_chat_model(model: str) -> str:
    return f"asked the utility model of the open chat ({model})"


def asked_settings_model(model: str) -> str:
    return f"asked the utility model of Agent Zero's model settings ({model}); no chat was open"


def asked_nobody(exc: BaseException) -> str:
    return (
        "no chat was open and the utility model could not be built from Agent Zero's model settings "
        f"({type(exc).__name__})"
    )


def asked_note(asked: str) -> str:
    return f"{UTILITY_MODEL}: {asked}"


def key_elsewhere(saved_for: str, endpoint_origin: str) -> str:
    """Why the placeholder does not stand for the stored key here, in words for the panel."""
    return (
        f"the stored key was saved for another server ({saved_for or 'no endpoint'}), not for "
        f"{endpoint_origin or 'this endpoint'}; type the key for this server again "
        "(or clear the field if it needs none)"
    )


def key_not_sent(elsewhere: str, answered: bool, reason: str = "") -> str:
    """Test connection with the stored key bound to another server: tested without it."""
    said = f"setting 'rerank_api_key': {elsewhere}"
    if answered:
        return f"{said}; it was not sent, and this server answered without a key"
    return f"{said}; it was not sent — without a key: {reason}"


# --- no reranker to probe -------------------------------------------------------------------
def fusion_alone(settings: Settings) -> str:
    """The probe's reason with no reranker configured, the default."""
    return (
        f"{describe(settings, None)}: recall fuses the plugin's searches by rank; "
        "set 'rerank_endpoint' to add a reranker server"
    )


def api_without_endpoint(settings: Settings) -> str:
    return (
        f"rerank_api is '{settings.api}' but no endpoint is set (setting 'rerank_endpoint'); "
        "recall uses built-in fusion meanwhile"
    )


# --- the CLI (python -m helpers.cli) --------------------------------------------------------
CLI_BM25 = "lexical (built-in BM25, no server)"
CLI_UNAVAILABLE = "the reranker is unavailable (run `probe` for the reason); nothing was reordered"


def probe_headline(report: Probed) -> str:
    """The CLI probe's first line: usable or not, and why."""
    return f"{'OK' if report.ok else 'NOT USABLE'}: {report.reason}"


def log_cut(read_bytes: int) -> str:
    """A decision log too long to read whole: how much was read."""
    return f"only the first {read_bytes >> 20} MiB were read"


def decision_log_text(summary: LogSummary) -> str:
    """The CLI report's summary of a decision log (report/decision_log.summarise)."""
    k = summary.k
    return "\n".join(
        [
            f"searches logged: {summary.searches} ({', '.join(f'{c}: {n}' for c, n in summary.by_caller.items())})",
            f"top result changed by reranking: {summary.top1_changed:.0%} of searches",
            f"top {k} changed: {summary.top_k_changed:.0%} of searches; "
            f"{summary.new_in_top_k_per_search} memories per search entered the top {k}",
            f"memories kept in the top {k} moved {summary.mean_rank_move} places on average",
            f"reranking latency: p50 {summary.latency_p50_ms} ms, p95 {summary.latency_p95_ms} ms",
        ]
        + ([f"skipped {summary.unreadable_lines} unreadable lines"] if summary.unreadable_lines else [])
        + ([log_cut(summary.read_bytes)] if summary.read_bytes else [])
    )


def log_unreadable_lines(lines: int) -> str:
    return f"{lines} unreadable lines"


def log_holds_nothing(notes: Sequence[str]) -> str:
    return "the log holds no searches" + (f" ({'; '.join(notes)})" if notes else "")


# --- the relevance floor (recall/policies.py) -----------------------------------------------
ALL_DROPPED = "every candidate scored below the relevance floor"


def min_score_floor(min_score: float, scale: str) -> str:
    return f"rerank_min_score {min_score:g} on the server's {scale} scale"


def relative_floor(setting: float, cut: float) -> str:
    return f"rerank_relative_floor {setting:g} = {cut:.3g} of 0..1 relevance"


def all_dropped(floor: str) -> str:
    return f"{ALL_DROPPED} ({floor}), so this search returned nothing"


# --- what the counters, the decision log and the callers are told --------------------------
SHADOW_BUSY = "shadow measurements already running"
RAN_OUT_BEFORE_ASKED = "the recall's time ran out before the reranker was asked"
TIMEOUT_REASON = "timeout: no answer within rerank_timeout or the recall's deadline"
NOT_STRINGS = "query and documents must be strings"
NOT_A_LIST = "documents must be a list (or any sequence) of strings, not a string, a mapping or a set"
BLANK_QUERY = "the query is blank: nothing to rank by"
RERANK_NOT_IN_TIME = "no answer within rerank_timeout"
PROBE_NOT_IN_TIME = "the probe did not finish in time"


def took_longer_than(seconds: float) -> str:
    return f"the test took longer than {seconds:g} s"


def bad_setting_reason(exc: BaseException) -> str:
    return f"bad setting: {exc}"


def failed_reason(kind: str, detail: str, expected: bool) -> str:
    """A failure for the counters and the decision log: a reranker's (``expected``) as it
    said it, any other as unexpected, cut short."""
    return f"{kind}: {detail}" if expected else f"unexpected {kind}: {detail[:200]}"


def missing_document(doc_id: object) -> str:
    return f"could not find document for id {doc_id}"


def setting_invalid_text(exc: BaseException) -> str:
    return f"a setting is invalid: {exc}"
