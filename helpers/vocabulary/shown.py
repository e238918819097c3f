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
    failure: Failure | None
    scorer: Scorer | None
    route: Route | None
    trust: Trust | None
    post_filter: bool
    shown: int
    dropped_by_floor: int
    changes: Changes | None
    words_led: bool
    same_call: bool
    scorer_ms: float | None

    @property
    def reranked(self) -> bool: ...


class JudgeSummary(Protocol):
    """status_report.JudgeSummary"""

    utility_model: str
    latency: dict[str, float] | None
    post_filter: bool
    not_used: str | None


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
    stats: dict  # report/stats.Stats.snapshot: the counters' own JSON
    breaker: dict  # scoring/breaker.Breaker.snapshot
