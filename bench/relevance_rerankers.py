"""The rerankers the relevance bench judges the plugin with, from perfect to weak.

- ``oracle``: knows the labels (the ceiling: what a perfect reranker could do with a pool).
- ``noisy-σ``: the oracle with Gaussian noise of σ on its logit: relevant memories score
  +2, others -2, before the noise, so σ 2 misorders ~8 % of relevant/irrelevant pairs and
  σ 4 ~24 %. Deterministic per (query, memory).
- ``minilm``: all-MiniLM-L6-v2 — the host's own default embedder — scoring the cosine of
  query and memory, served as a ``/v1/rerank`` server (llama.cpp's wire, raw scores): the
  kind of weak "reranker" a user gets by pointing the plugin at an embedding model.
- ``lexical``: the plugin's built-in BM25 (no server).

Every one of them answers the connection probe like an ordinary model, so the plugin's
detection accepts it the way it would accept a real server.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from pathlib import Path
from typing import Callable

PROBE_MARGIN = 6.0  # the oracle's logit for "relevant"


class Oracle:
    """Scores the memories labelled relevant to the question being asked above the rest.
    It recognises the question by its message at the start of the reranker's query."""

    def __init__(self, questions: list[dict], memories: list[dict]):
        # The plugin's calibration questions are labelled too: a simulated reranker is as
        # good on them as on the corpus, as a real one would be.
        calibration = calibration_labels()
        pairs = [(q["message"].strip(), set(q["relevant"])) for q in questions] + [(q, {i}) for q, i, _ in calibration]
        self.by_message = sorted(pairs, key=lambda p: -len(p[0]))
        # The corpus's ids win: the calibration items drawn from the tuning half are its
        # questions and memories, labelled alike (the answer is one of the question's
        # relevant memories, the others none of them).
        self.id_by_text = {t.strip(): i for _, _, texts in calibration for i, t in texts} | {
            m["text"].strip(): m["id"] for m in memories
        }

    def label(self, query: str, document: str) -> bool | None:
        """True/False for a corpus question, None for anything else (the probe)."""
        relevant = next((ids for message, ids in self.by_message if query.strip().startswith(message)), None)
        if relevant is None:
            return None
        return self.id_by_text.get(document.strip()) in relevant

    def __call__(self, query: str, document: str) -> float:
        label = self.label(query, document)
        if label is None:
            return _ordinary(query, document)
        return PROBE_MARGIN if label else -PROBE_MARGIN


class NoisyOracle:
    def __init__(self, oracle: Oracle, sigma: float):
        self.oracle, self.sigma = oracle, sigma

    def __call__(self, query: str, document: str) -> float:
        label = self.oracle.label(query, document)
        if label is None:
            return _ordinary(query, document)
        seed = hashlib.blake2b(f"{self.sigma}|{query}|{document}".encode(), digest_size=8).digest()
        noise = random.Random(seed).gauss(0.0, self.sigma)
        return (2.0 if label else -2.0) + noise


class MiniLMCosine:
    """cos(query, memory) with all-MiniLM-L6-v2; memory vectors memoised (a pool repeats)."""

    def __init__(self, encode: Callable[[list[str]], list[list[float]]]):
        self.encode = encode
        self._memo: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _vector(self, text: str) -> list[float]:
        with self._lock:
            hit = self._memo.get(text)
        if hit is None:
            hit = self.encode([text])[0]
            with self._lock:
                self._memo[text] = hit
        return hit

    def __call__(self, query: str, document: str) -> float:
        a, b = self._vector(query), self._vector(document)
        dot = sum(x * y for x, y in zip(a, b))
        norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1.0
        return dot / norm


CALIBRATION_SET = Path(__file__).resolve().parent.parent / "helpers" / "scoring" / "calibration_set.json"


def calibration_labels() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(question, the answer's id, [(id, candidate text)]) for the plugin's calibration set."""
    items = json.loads(CALIBRATION_SET.read_text(encoding="utf-8"))["items"]
    out = []
    for n, item in enumerate(items):
        ids = [(f"calibration:{n}:{c}", text) for c, text in enumerate(item["candidates"])]
        out.append((item["query"].strip(), ids[item["answer"]][0], ids))
    return out


def _ordinary(query: str, document: str) -> float:
    from tests.servers.scoring import relevance

    return relevance(query, document)


class AskedOracle(Oracle):
    """The oracle for a bench of many stores (LoCoMo): there, questions of different
    conversations can share their words and memories their text, so it is told which
    question is being asked (``ask``, before each recall) and knows the texts of that
    question's gold memories."""

    def __init__(self) -> None:
        self.message: str | None = None
        self.gold: frozenset[str] = frozenset()
        # The plugin's calibration questions, labelled as Oracle labels them.
        self.calibration = {
            q: {t.strip() for i, t in texts if i == answer} for q, answer, texts in calibration_labels()
        }
        self.calibration_texts = {q: {t.strip() for _, t in texts} for q, _, texts in calibration_labels()}
        # Each question's unrelated memories are wrong answers to it too (Oracle labels them so
        # by their own ids); unlabelled, a noisy oracle would score them by word overlap alone,
        # without its noise, and look like a trained model that keeps them below the answer.
        from helpers.scoring.calibration import ITEMS

        for item in ITEMS:
            self.calibration_texts[item.query.strip()] |= {t.strip() for t in item.unrelated}

    def ask(self, message: str, gold_texts: frozenset[str]) -> None:
        self.message, self.gold = message.strip(), gold_texts

    def label(self, query: str, document: str) -> bool | None:
        asked = query.strip()
        if asked in self.calibration and document.strip() in self.calibration_texts[asked]:
            return document.strip() in self.calibration[asked]
        if self.message is None or not asked.startswith(self.message):
            return None
        return document.strip() in self.gold
