"""The probe's vocabulary, shared by every scorer: the three probe documents, how a set of
scores is judged (order, margin by scale, degenerate outputs), and what a probe reports.

"Does /rerank answer?" is not enough: a vLLM-served Qwen3-Reranker answers /v1/rerank with
near-random scores. So every scorer is probed with a clearly relevant, a near-miss and a
clearly irrelevant document, and judged by the same rules here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..settings import shown_endpoint
from ..vocabulary import scorer_words as words
from .wire import Route

PROBE_QUERY = "What is the capital of France?"
RELEVANT = "Paris is the capital and largest city of France."
NEAR_MISS = "Lyon is a large city in the south-east of France, known for its cuisine."
IRRELEVANT = "Photosynthesis converts sunlight into chemical energy in green plants."
PROBE_DOCS = (RELEVANT, NEAR_MISS, IRRELEVANT)

# The gap a working reranker shows between the relevant and irrelevant probe documents.
MARGINS = {"probability": 0.3, "cosine": 0.1, "logit": 2.0, "bm25": 0.0}
SWAP_TOLERANCE = 1e-3


def score_scale(scores: list[float]) -> str:
    if all(0.0 <= s <= 1.0 for s in scores):
        return "probability"
    if all(-1.0 <= s <= 1.0 for s in scores):
        return "cosine"
    return "logit"


@dataclass
class Grade:
    mark: str  # pass | weak | fail
    scale: str
    reason: str


def grade_probe(relevant: float, near: float, irrelevant: float) -> Grade:
    """Order, margin by scale, and the degenerate outputs of misconfigured servers."""
    scores = [relevant, near, irrelevant]
    scale = score_scale(scores)
    if max(scores) - min(scores) < 1e-6:
        return Grade("fail", scale, words.all_alike(relevant))
    if max(abs(s) for s in scores) < 1e-6:
        return Grade("fail", scale, words.ALL_ABOUT_ZERO)
    if scale == "probability" and min(scores) > 0.99:
        return Grade("fail", scale, words.ALL_NEAR_ONE)
    if relevant <= irrelevant:
        return Grade("fail", scale, words.IRRELEVANT_ABOVE)
    gap = relevant - irrelevant
    shown = words.probe_scores(relevant, irrelevant, scale)
    if relevant <= near:
        return Grade("weak", scale, words.near_miss_above(shown))
    if gap < MARGINS[scale]:
        return Grade("weak", scale, words.thin_margin(shown))
    return Grade("pass", scale, words.ranks_correctly(shown))


@dataclass
class Attempt:
    route: Route
    verdict: str  # pass | weak | fail | error
    reason: str
    status: int | None = None
    scores: dict[str, float] = field(default_factory=dict)
    latency_ms: float = 0.0
    models: tuple[str, ...] = ()  # the model names the server listed in its error
    timed_out: bool = False  # no answer within the call's deadline
    malformed: bool = False  # an answer that could not be read as scores
    bad_setting: bool = False  # nothing was sent: a setting cannot make a request (NotConfigured)
    unreachable: bool = False  # the endpoint's host refused or was not found (TransportError.unreachable)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.route.as_dict(),
            "route": self.route.describe(),
            "verdict": self.verdict,
            "reason": self.reason,
            "status": self.status,
            "scores": {k: round(v, 6) for k, v in self.scores.items()},
            "latency_ms": round(self.latency_ms, 1),
        }


@dataclass(frozen=True)
class Verdict:
    """What a successful probe learned; reused by every call until the endpoint fails."""

    route: Route | None  # None for the in-process rerankers
    scale: str
    relevant: float
    irrelevant: float
    batch_limit: int | None = None
    quality: str = "pass"
    latency_s: float | None = None  # how long the probe's answer took, when the scorer measures it (the utility judge)


@dataclass
class ProbeReport:
    ok: bool
    # ok | weak | fusion | misranks | too_slow | unreachable | timeout | auth | model |
    # unsupported | busy | error | not_configured | refused | bad_setting
    verdict: str
    reason: str
    endpoint: str = ""
    model: str = ""
    api_setting: str = ""
    chosen: Attempt | None = None
    attempts: list[Attempt] = field(default_factory=list)
    latency_ms: float = 0.0
    batch_limit: int | None = None
    notes: list[str] = field(default_factory=list)
    result: Verdict | None = None
    detected_api: str | None = None  # an in-process scorer that passed names itself (a server: its chosen route's API)
    served_models: tuple[str, ...] = ()  # what the server said it serves, when it had to be named
    # What a person's probe adds (async_api.probe_report): the setting a bad one names, the
    # mode in words, and the say measured again (calibration.Trust.as_dict and in words).
    setting: str | None = None
    mode_text: str | None = None
    trust: dict[str, Any] | None = None
    trust_text: str | None = None

    @property
    def route(self) -> str | None:
        """The route that answered, in words."""
        return self.chosen.route.describe() if self.chosen else None

    @property
    def answered_api(self) -> str | None:
        """The API that answered: the chosen route's, or the in-process scorer's own name."""
        return self.chosen.route.api if self.chosen else self.detected_api

    @property
    def scale(self) -> str | None:
        return self.result.scale if self.result else None

    def __post_init__(self) -> None:
        # Shown by Test connection, the status tool and the CLI, and quoted in reasons: never a password
        self.endpoint = shown_endpoint(self.endpoint)

    def as_dict(self) -> dict[str, Any]:
        """What Test connection, the status tool and the CLI show. Never holds the key."""
        chosen = self.chosen
        return {
            "ok": self.ok,
            "verdict": self.verdict,
            "reason": self.reason,
            "endpoint": self.endpoint,
            "model": self.model,
            "api_setting": self.api_setting,
            "detected_api": self.answered_api,
            "route": self.route,
            "templated": chosen.route.templated if chosen else None,
            "scale": self.scale,
            "relevant_score": chosen.scores.get("relevant") if chosen else None,
            "irrelevant_score": chosen.scores.get("irrelevant") if chosen else None,
            "near_miss_score": chosen.scores.get("near_miss") if chosen else None,
            "batch_limit": self.batch_limit,
            "latency_ms": round(self.latency_ms, 1),
            "attempts": [a.as_dict() for a in self.attempts],
            "notes": list(self.notes),
            "served_models": list(self.served_models),
            **({"setting": self.setting} if self.setting is not None else {}),
            **({"mode_text": self.mode_text} if self.mode_text is not None else {}),
            **({"trust": self.trust, "trust_text": self.trust_text} if self.trust is not None else {}),
        }


def failed(verdict: str, reason: str, endpoint: str = "", notes: list[str] | None = None) -> ProbeReport:
    """The report of a probe that could not run."""
    return ProbeReport(False, verdict, reason, endpoint, notes=list(notes or []))


def failed_report(verdict: str, reason: str, endpoint: str = "", notes: list[str] | None = None) -> dict[str, Any]:
    """failed's report as JSON, in the same shape as every other report."""
    return failed(verdict, reason, endpoint, notes).as_dict()
