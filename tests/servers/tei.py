"""Hugging Face text-embeddings-inference, v1.8 and v1.9 (protocols doc §1).

TEI is axum: body-extraction failures are plain text, its own errors are
`{"error", "error_type"}`, unknown paths are 404 with an empty body and a bad key
is 401 with an empty body. The versions differ in the Validation status (413 vs
422), `auto_truncate` (false vs true) and overload (wait vs fail fast with 429).
"""

from __future__ import annotations

import json
import math
import time

from . import scoring
from .base import Backend, Permits, Reply, Request, empty_reply, json_reply, text_reply

__all__ = ["TeiServer"]

# ErrorType -> (status on <= 1.8, status on >= 1.9); Validation is the one that moved.
_STATUS = {"Empty": 400, "Tokenizer": 422, "Overloaded": 429, "Backend": 424, "Unhealthy": 503}
_TYPE_FOR_STATUS = {
    400: ("Empty", "`texts` cannot be empty"),
    413: ("Validation", "validation failed"),
    422: ("Validation", "validation failed"),
    424: ("Backend", "backend error"),
    429: ("Overloaded", "Model is overloaded"),
    503: ("Unhealthy", "unhealthy"),
}
_JSON_CT = "Expected request with `Content-Type: application/json`"
_DIRECTIONS = ("right", "left", "Right", "Left")


def _is_json_content_type(value: str) -> bool:
    mime = value.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))


def _serde_value(value) -> str:
    """How serde_json names an unexpected value in its messages."""
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{value}"'
    if value is None:
        return "null"
    return "sequence" if isinstance(value, list) else "map"


def _end_position(text: str) -> str:
    lines = text.rstrip().split("\n")
    return f"at line {len(lines)} column {len(lines[-1])}"


class TeiServer(Backend):
    kind = "tei"
    public_paths = frozenset({"/health", "/ping", "/metrics"})

    def __init__(
        self,
        *,
        version: str,
        validation_status: int,
        fail_fast: bool,
        auto_truncate: bool,
        model: str = "BAAI/bge-reranker-base",
        max_client_batch_size: int = 32,
        max_concurrent_texts: int = 512,
        max_input_length: int = 512,
        payload_limit: int = 2_000_000,
        **common,
    ) -> None:
        super().__init__(model=model, **common)
        self.version = version
        self.validation_status = validation_status
        self.fail_fast = fail_fast
        self.auto_truncate = auto_truncate
        self.max_client_batch_size = max_client_batch_size
        self.max_input_length = max_input_length
        self.payload_limit = payload_limit
        self.permits = Permits(max_concurrent_texts)
        self.routes = {
            ("POST", "/rerank"): self.rerank,
            ("POST", "/"): self.rerank,
            ("POST", "/invocations"): self.rerank,
            ("GET", "/info"): self.info,
            ("GET", "/health"): self.health,
            ("GET", "/"): self.health,
            ("GET", "/ping"): self.health,
            ("GET", "/metrics"): self.metrics,
            ("GET", "/api-doc/openapi.json"): self.openapi,
        }

    # GET / is health and never needs a key, POST / is rerank and does.
    def needs_auth(self, req: Request) -> bool:
        if self.api_key is None:
            return False
        return not (req.path in self.public_paths or (req.path == "/" and req.method != "POST"))

    # -- errors --------------------------------------------------------------------

    def tei_error(self, error_type: str, message: str) -> Reply:
        status = self.validation_status if error_type == "Validation" else _STATUS[error_type]
        return json_reply({"error": message, "error_type": error_type}, status)

    def error_reply(self, status: int, message: str | None = None) -> Reply:
        if status in (401, 404, 405):
            return empty_reply(status)
        error_type, default = _TYPE_FOR_STATUS.get(status, ("Backend", "backend error"))
        return json_reply({"error": message or default, "error_type": error_type}, status)

    # -- routes --------------------------------------------------------------------

    def health(self, req: Request) -> Reply:
        return empty_reply(200)

    def metrics(self, req: Request) -> Reply:
        return text_reply("# TYPE te_request_count counter\nte_request_count 0\n", 200)

    def openapi(self, req: Request) -> Reply:
        return json_reply({"openapi": "3.0.3", "info": {"title": "Text Embeddings Inference", "version": self.version}})

    def info(self, req: Request) -> Reply:
        return json_reply(
            {
                "model_id": self.model,
                "model_sha": None,
                "model_dtype": "float32",
                "model_type": {"reranker": {"id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}}},
                "max_concurrent_requests": self.permits.total,
                "max_input_length": self.max_input_length,
                "max_batch_tokens": 16384,
                "max_batch_requests": None,
                "max_client_batch_size": self.max_client_batch_size,
                "auto_truncate": self.auto_truncate,
                "tokenization_workers": 4,
                "version": self.version,
                "sha": None,
                "docker_label": None,
                "served_model_name": self.model,
            }
        )

    def rerank(self, req: Request) -> Reply:
        started = time.monotonic()
        if len(req.body) > self.payload_limit:
            return text_reply("Failed to buffer the request body: length limit exceeded", 413)
        if not _is_json_content_type(req.header("content-type")):
            return text_reply(_JSON_CT, 415)
        parsed = self._extract(req.body)
        if isinstance(parsed, Reply):
            return parsed
        query, texts, truncate, raw_scores, return_text = parsed

        if not texts:
            return self.tei_error("Empty", "`texts` cannot be empty")
        if len(texts) > self.max_client_batch_size:
            return self.tei_error(
                "Validation",
                f"batch size {len(texts)} > maximum allowed batch size {self.max_client_batch_size}",
            )
        if truncate is None:
            truncate = self.auto_truncate
        tokens = 0
        for text in texts:
            problem, n = self._check_length(query, text, truncate)
            if problem:
                return self.tei_error("Validation", problem)
            tokens += n

        # One permit per text; 1.9 fails fast, 1.8 waits (protocols doc §1, Limits).
        if self.fail_fast:
            if not self.permits.try_acquire(len(texts)):
                return self.tei_error("Overloaded", "Model is overloaded")
            held = len(texts)
        else:
            held = self.permits.acquire(len(texts))
        try:
            logits = self.infer(query, texts)
        finally:
            self.permits.release(held)

        if any(math.isnan(x) for x in logits):
            return self.tei_error("Backend", "score is NaN")
        scores = logits if raw_scores else [scoring.sigmoid(x) for x in logits]
        # TEI sorts ascending then reverses, so ties come out in reverse input order.
        order = sorted(range(len(scores)), key=lambda i: scores[i])[::-1]
        ranks = []
        for i in order:
            rank = {"index": i, "score": scores[i]}
            if return_text:
                rank["text"] = texts[i]
            ranks.append(rank)
        elapsed = str(int((time.monotonic() - started) * 1000))
        headers = {
            "x-compute-type": "cpu",
            "x-compute-time": elapsed,
            "x-compute-characters": str(sum(len(query) + len(t) for t in texts)),
            "x-compute-tokens": str(tokens),
            "x-total-time": elapsed,
            "x-tokenization-time": "0",
            "x-queue-time": "0",
            "x-inference-time": elapsed,
        }
        return json_reply(ranks, headers=headers, n_inputs=len(texts))

    # -- helpers -------------------------------------------------------------------

    def _extract(self, body: bytes):
        """axum's Json<RerankRequest> extraction: values, or the plain-text rejection."""
        text = body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if not text.strip():
                detail = "EOF while parsing a value at line 1 column 0"
            else:
                detail = f"{exc.msg[0].lower()}{exc.msg[1:]} at line {exc.lineno} column {exc.colno}"
            return text_reply(f"Failed to parse the request body as JSON: {detail}", 400)

        def reject(detail: str) -> Reply:
            return text_reply(
                f"Failed to deserialize the JSON body into the target type: {detail} {_end_position(text)}",
                422,
            )

        if not isinstance(data, dict):
            return reject(f"invalid type: {_serde_value(data)}, expected struct RerankRequest")
        for name in ("query", "texts"):  # serde reports the first missing field in struct order
            if name not in data:
                return reject(f"missing field `{name}`")
        query, texts = data["query"], data["texts"]
        if not isinstance(query, str):
            return reject(f"query: invalid type: {_serde_value(query)}, expected a string")
        if not isinstance(texts, list):
            return reject(f"texts: invalid type: {_serde_value(texts)}, expected a sequence")
        for i, item in enumerate(texts):
            if not isinstance(item, str):
                return reject(f"texts[{i}]: invalid type: {_serde_value(item)}, expected a string")
        truncate = data.get("truncate")
        if truncate is not None and not isinstance(truncate, bool):
            return reject(f"truncate: invalid type: {_serde_value(truncate)}, expected a boolean")
        direction = data.get("truncation_direction", "right")
        if direction not in _DIRECTIONS:
            return reject(
                f"truncation_direction: unknown variant `{direction}`, expected one of `Left`, `Right`, `left`, `right`"
            )
        flags = []
        for name in ("raw_scores", "return_text"):
            value = data.get(name, False)
            if not isinstance(value, bool):
                return reject(f"{name}: invalid type: {_serde_value(value)}, expected a boolean")
            flags.append(value)
        return query, texts, truncate, flags[0], flags[1]

    def _check_length(self, query: str, text: str, truncate: bool) -> tuple[str | None, int]:
        """TEI's per-pair limits: a character cap, then the token limit."""
        max_chars = self.max_input_length * 250
        chars = len(query) + len(text)
        tokens = scoring.count_tokens(query) + scoring.count_tokens(text) + 3  # [CLS] q [SEP] d [SEP]
        if truncate:
            return None, min(tokens, self.max_input_length)
        if chars > max_chars:
            return f"`inputs` must have less than {max_chars} characters. Given: {chars}", 0
        if tokens > self.max_input_length:
            return f"`inputs` must have less than {self.max_input_length} tokens. Given: {tokens}", 0
        return None, tokens
