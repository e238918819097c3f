"""What the vocabulary reads of the plugin's own values, as protocols: the fields its words
are made from, typed, and no import of the modules that make them (they import the
vocabulary). Each names the class that fills it."""

from __future__ import annotations

from typing import Protocol


class Settings(Protocol):
    """settings.Settings"""

    api: str
    apply: bool
    breaker_cooldown: float
    enabled: bool
    local_model: str
    private_only: bool
    redact: bool
    timeout: float

    @property
    def shown_endpoint(self) -> str: ...


class Scorer(Protocol):
    """scoring/scorers/base.Scorer: its mode and what it declares."""

    mode: str
    asks_utility_model: bool
    sends_text: bool


class Dialect(Protocol):
    """scoring/wire/base.Dialect"""

    name: str


class Route(Protocol):
    """scoring/wire/base.Route: the wire a server answered on."""

    dialect: Dialect
    templated: bool

    def describe(self) -> str: ...


class Trust(Protocol):
    """scoring/calibration.Trust: the say a reranker earned on the calibration set."""

    say: str
    reranker: float | None
    embedder: float | None
    embedder_name: str
    calls: int
    seconds: float
    reason: str
    questions: int
    unrelated_above: float | None

    @property
    def surely_better(self) -> bool: ...

    @property
    def means_relevant(self) -> bool: ...

    @property
    def lendable(self) -> bool: ...

    @property
    def full_where_words_lead(self) -> bool: ...


class Failure(Protocol):
    """recall/failures.Failure"""

    words: str


class Changes(Protocol):
    """report/changes.Changes"""

    top_changed: bool
    entered_top_k: int


class Outcome(Protocol):
    """recall/outcome.Outcome: what one search did, as the chat line tells it."""

    applied: bool
    scored: bool
    no_opinion: str
    not_asked: bool
    failure: Failure | None
    scorer: Scorer | None
    route: Route | None
    trust: Trust | None
    post_filter: bool
    shown: int
    dropped_by_floor: int
    changes: Changes | None
    words_led: bool
    reranker_led: bool
    same_call: bool
    scorer_ms: float | None

    @property
    def reranked(self) -> bool: ...


class JudgeSummary(Protocol):
    """status_report.JudgeSummary"""

    utility_model: str
    latency: AnswerTimes | None
    post_filter: bool
    not_used: str | None


class AnswerTimes(Protocol):
    """scoring/scorers/utility.AnswerTimes"""

    last_ms: float
    median_ms: float
    calls: int


class Detected(Protocol):
    """status_report.Detected"""

    route: str


class StatusSummary(Protocol):
    """status_report.StatusSummary: the status tool's and the CLI's summary."""

    wrap_live: bool
    enabled_for_agent: bool | None
    settings_error: str | None
    setting_enabled: bool
    has_reranker: bool
    mode_text: str
    endpoint: str | None
    model: str | None
    api_setting: str
    api_key_set: bool
    api_key_saved_for: str | None
    judge: JudgeSummary | None
    trust_text: str | None
    detected: Detected | None
    query_chars: int | None
    query_ran_out_on: int | None
    stats: Counters
    breaker: dict[str, BreakerState]  # by endpoint


class Latency(Protocol):
    """report/stats.Latency"""

    p50: float | None
    p95: float | None
    samples: int


class Note(Protocol):
    """report/stats.ErrorNote"""

    reason: str


class Recorded(Protocol):
    """report/stats.CallRecord"""

    outcome: str
    reason: str


class ShadowSummary(Protocol):
    """report/stats.ShadowSummary"""

    searches: int
    top_changed: int
    mean_overlap_at_k: float
    promoted_from_below_cut: int


class Counters(Protocol):
    """report/stats.Summary: what the plugin did so far."""

    fallback_reasons: dict[str, int]
    unavailable_reasons: dict[str, int]
    latency: Latency
    last_error: Note | None
    shadow: ShadowSummary | None

    def total(self, outcome: str) -> int: ...

    @property
    def latest_answered(self) -> Recorded | None: ...


class BreakerState(Protocol):
    """scoring/breaker.Shown"""

    open_for_s: float


class Attempted(Protocol):
    """scoring/verdicts.Attempt"""

    route: Route
    verdict: str
    reason: str
    status: int | None
    latency_ms: float


class Probed(Protocol):
    """scoring/verdicts.ProbeReport: what a probe a person asked for found."""

    ok: bool
    reason: str
    trust_text: str | None
    attempts: list[Attempted]
    batch_limit: int | None
    notes: list[str]

    @property
    def route(self) -> str | None: ...

    @property
    def answered_api(self) -> str | None: ...

    @property
    def scale(self) -> str | None: ...


class LogSummary(Protocol):
    """report/decision_log.LogSummary: what a decision log says reranking did."""

    searches: int
    by_caller: dict[str, int]
    k: int
    top1_changed: float
    top_k_changed: float
    new_in_top_k_per_search: float
    mean_rank_move: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    unreadable_lines: int
    read_bytes: int | None
