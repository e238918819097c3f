"""A reranker server: which route it speaks, found by probing, and scoring through it.

The probe tries each candidate route (scoring/wire/) in order and keeps the first whose
order and margin are right on the score scale it returns, then checks that swapping the
documents moves the scores with them. Raw text is tried before the Qwen3 judge template, so
a server that templates on its own side is never sent a prompt templated twice.
"""

from __future__ import annotations

import time
from typing import Sequence

from ...deadline import Deadline
from ...errors import DeadlineExceeded, MalformedResponse, NotConfigured, RerankError, ServerError, TransportError
from ... import vocabulary
from ...settings import Settings, shown_endpoint
from .. import client, endpoint_guard
from ..verdicts import Attempt, Grade, PROBE_DOCS, PROBE_QUERY, ProbeReport, SWAP_TOLERANCE, Verdict, grade_probe
from ..wire import Route, TEI, TEI_DEFAULT_BATCH, candidate_routes, split_endpoint


class RemoteScorer:
    name = "remote"
    api = None  # auto, rerank, qwen3_score: a server at rerank_endpoint
    mode = vocabulary.REMOTE
    sends_text = True  # memory text leaves the process: the privacy guard applies
    may_go_down = True  # a server can fail for a while: the circuit breaker applies
    caches_scores = True  # a round trip is worth saving: the score cache applies
    needs_warm_up = False
    probes_once = False
    asks_utility_model = False
    judges_recall_at_once = False
    calibrates_apart = True  # the whole set, on the plugin's own loop
    calibration_questions = None

    def verdict_key(self, settings: Settings) -> tuple:
        return ()  # the endpoint, model, API, instruction and key are in every verdict's key

    def breaker_key(self, settings: Settings) -> str:
        return (
            f"{shown_endpoint(settings.endpoint)}|{settings.model}|{settings.api}"  # the status views list these keys
        )

    def owns_breaker(self, settings: Settings, key: str) -> bool:
        return key == self.breaker_key(settings)

    def guarded_endpoint(self, settings: Settings) -> tuple[str, str] | None:
        if not settings.endpoint:
            return None
        host = endpoint_guard.hostname(settings.endpoint)
        return host, host or "the endpoint"

    async def probe(self, settings: Settings, deadline: Deadline, report: ProbeReport, *, fresh: bool = False) -> None:
        await _probe(settings, deadline, report)

    async def score(
        self, settings: Settings, verdict: Verdict, query: str, documents: Sequence[str], deadline: Deadline
    ) -> list[float]:
        return await client.score(settings, verdict.route, query, documents, deadline, batch_limit=verdict.batch_limit)

    def warm(self, settings: Settings) -> None:
        pass

    def query_chars(self, settings: Settings) -> int:
        return settings.max_query_chars


REMOTE = RemoteScorer()


async def _probe(settings: Settings, deadline: Deadline, report: ProbeReport) -> None:
    fallback: tuple[Attempt, Grade] | None = None
    for route in candidate_routes(settings.endpoint, settings.api):
        attempt = await _try_route(settings, route, deadline)
        report.attempts.append(attempt)
        if attempt.unreachable:
            break  # the host itself is unreachable: every other route would fail the same way
        if attempt.status in (401, 403):
            break  # the key was refused: do not send it to every other path as well
        if attempt.bad_setting:
            break  # nothing was sent: every other route would stop at the same setting
        if attempt.verdict in ("pass", "weak"):
            grade = grade_probe(attempt.scores["relevant"], attempt.scores["near_miss"], attempt.scores["irrelevant"])
            if attempt.verdict == "pass":
                await _accept(settings, report, attempt, grade, deadline)
                return
            fallback = fallback or (attempt, grade)
        if deadline.remaining() <= 0:
            break
    if fallback is not None:
        await _accept(settings, report, *fallback, deadline)
        return
    _explain_failure(report, settings)


async def _try_route(settings: Settings, route: Route, deadline: Deadline) -> Attempt:
    started = time.monotonic()
    attempt = Attempt(route, "error", "")
    try:
        rel, near, irr = await client.score(settings, route, PROBE_QUERY, PROBE_DOCS, deadline)
        attempt.scores = {"relevant": rel, "near_miss": near, "irrelevant": irr}
        grade = grade_probe(rel, near, irr)
        attempt.verdict, attempt.reason = grade.mark, grade.reason
        if grade.mark != "fail":
            # Swapped order: the same text must keep its score, or results are mapped by position.
            swapped = await client.score(settings, route, PROBE_QUERY, PROBE_DOCS[::-1], deadline)
            if any(abs(a - b) > SWAP_TOLERANCE * max(1.0, abs(a)) for a, b in zip((rel, near, irr), swapped[::-1])):
                attempt.verdict, attempt.reason = "fail", vocabulary.FOLLOWS_POSITION
    except ServerError as exc:
        attempt.status, attempt.reason, attempt.models = exc.status, str(exc), exc.models
    except TransportError as exc:
        attempt.reason, attempt.unreachable = vocabulary.probe_cannot_connect(str(exc)), exc.unreachable
    except DeadlineExceeded as exc:
        attempt.reason, attempt.timed_out = str(exc), True
    except NotConfigured as exc:
        attempt.reason, attempt.bad_setting = str(exc), True
    except MalformedResponse as exc:
        attempt.reason, attempt.malformed = vocabulary.probe_malformed(str(exc)), True
    except RerankError as exc:  # a redirect loop, say: this route failed, another may not
        attempt.reason = str(exc)
    attempt.latency_ms = (time.monotonic() - started) * 1000
    return attempt


async def _accept(settings: Settings, report: ProbeReport, attempt: Attempt, grade: Grade, deadline: Deadline) -> None:
    route = attempt.route
    batch_limit = await _batch_limit(settings, route, deadline)
    report.ok = True
    report.verdict = "ok" if attempt.verdict == "pass" else "weak"
    report.chosen = attempt
    report.batch_limit = batch_limit
    report.result = Verdict(
        route, grade.scale, attempt.scores["relevant"], attempt.scores["irrelevant"], batch_limit, attempt.verdict
    )
    how = route.describe()
    report.reason = f"{how}: {attempt.reason}"
    earlier = [a for a in report.attempts if a is not attempt and a.verdict == "fail"]
    if route.templated and earlier:
        report.reason += vocabulary.TEMPLATED_AFTER_RAW


async def _batch_limit(settings: Settings, route: Route, deadline: Deadline) -> int | None:
    if route.dialect is not TEI:
        return None
    base, _ = split_endpoint(settings.endpoint)
    info = await client.get_json(base + "/info", settings, deadline)
    limit = info.get("max_client_batch_size") if isinstance(info, dict) else None
    whole = isinstance(limit, int) and not isinstance(limit, bool)  # JSON's true is no count
    return limit if whole and limit > 0 else TEI_DEFAULT_BATCH


def _explain_failure(report: ProbeReport, settings: Settings) -> None:
    attempts = report.attempts
    statuses = {a.status for a in attempts}
    if not attempts:
        report.verdict, report.reason = "error", vocabulary.PROBE_NO_ROUTE
    elif attempts[-1].bad_setting:
        report.verdict, report.reason = "bad_setting", attempts[-1].reason
    elif all(a.unreachable for a in attempts):
        report.verdict, report.reason = "unreachable", vocabulary.probe_unreachable(report.endpoint, attempts[0].reason)
    elif attempts[-1].timed_out:
        report.verdict, report.reason = (
            "timeout",
            vocabulary.probe_timeout(report.endpoint, attempts[-1].route.describe(), attempts[-1].reason),
        )
    elif statuses & {401, 403}:
        refused = next(a for a in attempts if a.status in (401, 403))
        report.verdict = "auth"
        report.reason = vocabulary.probe_auth(bool(settings.api_key), refused.route.describe(), refused.reason)
    elif any(a.models for a in attempts):
        named = next(a for a in attempts if a.models)
        report.verdict, report.served_models = "model", named.models
        report.reason = vocabulary.probe_model(report.model, named.models, named.status, named.route.describe())
    elif any(a.verdict in ("fail",) for a in attempts):
        bad = next(a for a in attempts if a.verdict == "fail")
        report.verdict, report.reason = "misranks", vocabulary.probe_misranks(bad.route.describe(), bad.reason)
    elif 501 in statuses:
        report.verdict, report.reason = "unsupported", vocabulary.probe_unsupported()
    elif busy := [a for a in attempts if a.status in vocabulary.BUSY_STATUSES]:
        # A route that is there but could not score now: not "no route", and not kept,
        # so the next recall's probe finds it again once the server has room.
        report.verdict, report.reason = "busy", vocabulary.probe_busy(busy[-1].route.describe(), busy[-1].reason)
    else:
        last = next((a for a in reversed(attempts) if a.status not in (None, 404, 405)), attempts[-1])
        report.verdict, report.reason = "error", vocabulary.probe_error(last.route.describe(), last.reason)
