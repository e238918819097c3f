"""Which route does an endpoint speak, and does it rank correctly?

"Does /rerank answer?" is not enough: a vLLM-served Qwen3-Reranker answers /v1/rerank with
near-random scores. So the probe sends a clearly relevant, a near-miss and a clearly
irrelevant document and keeps the first route whose order and margin are right on the
score scale it returns, then checks that swapping the documents moves the scores with them.
The verdict is cached per (endpoint, model, api, instruction, key fingerprint) and dropped
when that endpoint starts failing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from . import client, lexical, mode
from .errors import DeadlineExceeded, NotConfigured, RerankError, ServerError, TransportError
from .settings import Settings
from .wire import TEI, TEI_DEFAULT_BATCH, Route, candidate_routes, split_endpoint

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
class Judgement:
    verdict: str  # pass | weak | fail
    scale: str
    reason: str


def judge(relevant: float, near: float, irrelevant: float) -> Judgement:
    """Order, margin by scale, and the degenerate outputs of misconfigured servers."""
    scores = [relevant, near, irrelevant]
    scale = score_scale(scores)
    if max(scores) - min(scores) < 1e-6:
        return Judgement("fail", scale, f"every document scored {relevant:.4g}: the model is not scoring")
    if max(abs(s) for s in scores) < 1e-6:
        return Judgement("fail", scale, "every score is about 0: a broken model conversion?")
    if scale == "probability" and min(scores) > 0.99:
        return Judgement("fail", scale, "every score is near 1.0: scores squashed twice?")
    if relevant <= irrelevant:
        return Judgement("fail", scale, "the irrelevant document ranked above the relevant one")
    gap = relevant - irrelevant
    shown = f"relevant {relevant:.3g} vs irrelevant {irrelevant:.3g}, {scale} scale"
    if relevant <= near:
        return Judgement("weak", scale, f"a near miss ranked above the answer ({shown})")
    if gap < MARGINS[scale]:
        return Judgement("weak", scale, f"ranks right but by a thin margin ({shown})")
    return Judgement("pass", scale, f"ranks correctly ({shown})")


@dataclass
class Attempt:
    route: Route
    verdict: str  # pass | weak | fail | error
    reason: str
    status: int | None = None
    scores: dict[str, float] = field(default_factory=dict)
    latency_ms: float = 0.0
    models: tuple[str, ...] = ()  # the model names the server listed in its error

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


@dataclass
class ProbeReport:
    ok: bool
    verdict: str  # ok | weak | fusion | misranks | unreachable | auth | model | unsupported | error | not_configured | refused
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
    served_models: tuple[str, ...] = ()  # what the server said it serves, when it had to be named

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
            "detected_api": chosen.route.api if chosen else ("lexical" if self.api_setting == "lexical" and self.ok else None),
            "route": chosen.route.describe() if chosen else None,
            "templated": chosen.route.templated if chosen else None,
            "scale": self.result.scale if self.result else None,
            "relevant_score": chosen.scores.get("relevant") if chosen else None,
            "irrelevant_score": chosen.scores.get("irrelevant") if chosen else None,
            "near_miss_score": chosen.scores.get("near_miss") if chosen else None,
            "batch_limit": self.batch_limit,
            "latency_ms": round(self.latency_ms, 1),
            "attempts": [a.as_dict() for a in self.attempts],
            "notes": list(self.notes),
            "served_models": list(self.served_models),
        }


def failed_report(verdict: str, reason: str, endpoint: str = "", notes: list[str] | None = None) -> dict[str, Any]:
    """A report for a probe that could not run, in the same shape as every other report."""
    return ProbeReport(False, verdict, reason, endpoint, notes=list(notes or [])).as_dict()


# ---------------------------------------------------------------------------------------
_cache: dict[tuple, Verdict] = {}
_cache_lock = threading.Lock()


def cache_key(settings: Settings) -> tuple:
    local = (settings.local_model, settings.local_device, settings.local_max_length) if settings.api == "local" else ()
    return (settings.endpoint, settings.model, settings.api, settings.instruction, settings.max_doc_chars, settings.key_fingerprint, *local)


def cached(settings: Settings) -> Verdict | None:
    with _cache_lock:
        return _cache.get(cache_key(settings))


def forget(settings: Settings | None = None) -> None:
    """Drop the verdict for ``settings`` (all verdicts when None): the endpoint is failing."""
    with _cache_lock:
        if settings is None:
            _cache.clear()
        else:
            _cache.pop(cache_key(settings), None)


async def resolve(settings: Settings, deadline: client.Deadline) -> Verdict:
    """The cached verdict, or a fresh probe; raises ``RerankError`` when nothing usable answers."""
    verdict = cached(settings)
    if verdict is not None:
        return verdict
    report = await probe(settings, deadline)
    if not report.ok or report.result is None:
        raise NotConfigured(report.reason) if report.verdict == "not_configured" else RerankError(report.reason)
    return report.result


async def probe(settings: Settings, deadline: client.Deadline | None = None) -> ProbeReport:
    """Try every candidate route live; cache and return what was found. Never raises."""
    started = time.monotonic()
    deadline = deadline or client.Deadline.after(settings.timeout)
    report = ProbeReport(False, "error", "", settings.endpoint, settings.model, settings.api)
    try:
        await _probe(settings, deadline, report)
    except RerankError as exc:  # the deadline, typically
        report.verdict, report.reason = "error", str(exc)
    report.latency_ms = (time.monotonic() - started) * 1000
    if report.ok and report.result is not None:
        with _cache_lock:
            _cache[cache_key(settings)] = report.result
    return report


async def _probe(settings: Settings, deadline: client.Deadline, report: ProbeReport) -> None:
    if settings.api == "lexical":
        rel, near, irr = lexical.bm25_scores(PROBE_QUERY, PROBE_DOCS)
        report.ok, report.verdict = True, "ok"
        report.reason = "built-in BM25 (lexical, no server): ranks by shared words, not meaning"
        report.result = Verdict(None, "bm25", rel, irr)
        return
    if settings.api == "local":
        from . import local  # optional dependency; imported only when selected

        await local.probe_into(settings, report)
        return
    if not settings.endpoint:
        if settings.api == "auto":  # the built-in default: nothing to connect to, nothing wrong
            report.ok, report.verdict = True, "fusion"
            report.reason = (f"{mode.describe(settings)}: recall fuses the plugin's searches by rank; "
                             "set 'rerank_endpoint' to add a reranker server")
        else:
            report.verdict = "not_configured"
            report.reason = f"rerank_api is '{settings.api}' but no endpoint is set (setting 'rerank_endpoint'); recall uses built-in fusion meanwhile"
        return
    fallback: tuple[Attempt, Judgement] | None = None
    for route in candidate_routes(settings.endpoint, settings.api):
        attempt = await _try_route(settings, route, deadline)
        report.attempts.append(attempt)
        if attempt.verdict == "error" and attempt.status is None and "connect" in attempt.reason.lower():
            break  # the host itself is unreachable: every other route would fail the same way
        if attempt.status in (401, 403):
            break  # the key was refused: do not send it to every other path as well
        if attempt.verdict in ("pass", "weak"):
            judgement = judge(attempt.scores["relevant"], attempt.scores["near_miss"], attempt.scores["irrelevant"])
            if attempt.verdict == "pass":
                await _accept(settings, report, attempt, judgement, deadline)
                return
            fallback = fallback or (attempt, judgement)
        if deadline.remaining() <= 0:
            break
    if fallback is not None:
        await _accept(settings, report, *fallback, deadline)
        return
    _explain_failure(report)


async def _try_route(settings: Settings, route: Route, deadline: client.Deadline) -> Attempt:
    started = time.monotonic()
    attempt = Attempt(route, "error", "")
    try:
        rel, near, irr = await client.score(settings, route, PROBE_QUERY, PROBE_DOCS, deadline)
        attempt.scores = {"relevant": rel, "near_miss": near, "irrelevant": irr}
        judgement = judge(rel, near, irr)
        attempt.verdict, attempt.reason = judgement.verdict, judgement.reason
        if judgement.verdict != "fail":
            # Swapped order: the same text must keep its score, or results are mapped by position.
            swapped = await client.score(settings, route, PROBE_QUERY, PROBE_DOCS[::-1], deadline)
            if any(abs(a - b) > SWAP_TOLERANCE * max(1.0, abs(a)) for a, b in zip((rel, near, irr), swapped[::-1])):
                attempt.verdict, attempt.reason = "fail", "scores follow the position, not the document"
    except ServerError as exc:
        attempt.status, attempt.reason, attempt.models = exc.status, str(exc), exc.models
    except TransportError as exc:
        attempt.reason = f"cannot connect: {exc}"
    except DeadlineExceeded as exc:
        attempt.reason = str(exc)
    except RerankError as exc:
        attempt.reason = f"malformed answer: {exc}"
    attempt.latency_ms = (time.monotonic() - started) * 1000
    return attempt


async def _accept(settings: Settings, report: ProbeReport, attempt: Attempt, judgement: Judgement, deadline: client.Deadline) -> None:
    route = attempt.route
    batch_limit = await _batch_limit(settings, route, deadline)
    report.ok = True
    report.verdict = "ok" if attempt.verdict == "pass" else "weak"
    report.chosen = attempt
    report.batch_limit = batch_limit
    report.result = Verdict(route, judgement.scale, attempt.scores["relevant"], attempt.scores["irrelevant"], batch_limit, attempt.verdict)
    how = route.describe()
    report.reason = f"{how}: {attempt.reason}"
    earlier = [a for a in report.attempts if a is not attempt and a.verdict == "fail"]
    if route.templated and earlier:
        report.reason += "; raw text ranked wrongly, so the Qwen3 judge prompt is rendered here"


async def _batch_limit(settings: Settings, route: Route, deadline: client.Deadline) -> int | None:
    if route.dialect is not TEI:
        return None
    base, _ = split_endpoint(settings.endpoint)
    info = await client.get_json(base + "/info", settings, deadline)
    limit = info.get("max_client_batch_size") if isinstance(info, dict) else None
    return limit if isinstance(limit, int) and limit > 0 else TEI_DEFAULT_BATCH


def _explain_failure(report: ProbeReport) -> None:
    attempts = report.attempts
    statuses = {a.status for a in attempts}
    if not attempts:
        report.verdict, report.reason = "error", "no route to try for this endpoint and API setting"
    elif all(a.status is None and "connect" in a.reason.lower() for a in attempts):
        report.verdict, report.reason = "unreachable", f"cannot reach {report.endpoint}: {attempts[0].reason}"
    elif statuses & {401, 403}:
        report.verdict = "auth"
        report.reason = "the server refused the API key (HTTP 401/403): check 'rerank_api_key'"
    elif any(a.models for a in attempts):
        named = next(a for a in attempts if a.models)
        report.verdict, report.served_models = "model", named.models
        wanted = f"has no model '{report.model}'" if report.model else "serves several models and needs one named"
        report.reason = (
            f"the server {wanted}: set 'rerank_model' to one of {', '.join(named.models)} "
            f"(HTTP {named.status} from {named.route.describe()})"
        )
    elif any(a.verdict in ("fail",) for a in attempts):
        bad = next(a for a in attempts if a.verdict == "fail")
        report.verdict, report.reason = "misranks", f"the endpoint answers but does not rank correctly: {bad.route.describe()}: {bad.reason}"
    elif 501 in statuses:
        report.verdict = "unsupported"
        report.reason = "the server does not support reranking (llama.cpp: start it with --reranking)"
    else:
        last = next((a for a in reversed(attempts) if a.status not in (None, 404, 405)), attempts[-1])
        report.verdict, report.reason = "error", f"no route answered correctly; last: {last.route.describe()}: {last.reason}"
