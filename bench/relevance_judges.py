"""Simulated utility models for ``rerank_api: utility``: callables ``(system, message) -> str``
that read the plugin's own judge prompt (prompts/a0_reranker.judge.msg.md) the way a model
would — the query, then the numbered memories — and answer the JSON list of useful numbers
as a judge of a given accuracy would, from an oracle ``label(query, document) -> bool|None``
(bench/relevance_rerankers.py ``Oracle.label``).

- ``perfect``: lists exactly the memories labelled relevant, in the order shown.
- ``noisy(miss, false)``: misses each relevant memory with probability ``miss`` and lists
  each irrelevant one with probability ``false``; deterministic per (seed, query, memory).
- ``random_picks``: lists a few memories regardless of the question (worse than BM25).

Weak judges as real small models are weak (issue 22), none of them reading the oracle:

- ``slow``: the perfect judge, answering after a time that grows with the prompt (an LLM
  on a CPU reads the prompt before it answers): the probe's short prompt in time, a
  recall's pool after ``rerank_timeout``.
- ``word_overlap``: confidently wrong: lists its top few by the question's rare words
  (weighted by how few of the memories shown hold them), so a distractor that shares the
  question's names comes first and a paraphrase is never listed.
- ``positional``: lists the first memories it is shown, whatever they say.

Memories the oracle does not know (the connection probe, anything outside the corpus) are
judged by shared words, so every judge passes the probe like an ordinary model (the word
overlap judge answers the probe by its own rule, and passes it too). With ``latency``
(seconds, plus ``per_char`` seconds per character of the message) the answer is awaited
after that long, as an LLM call is.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import re
from typing import Callable, Iterable

Label = Callable[[str, str], "bool | None"]

_QUERY = re.compile(
    r"^# User's message and newest conversation[^\n]*\n(.*?)\n# Memories[^\n]*\n", re.DOTALL | re.MULTILINE
)
_QUOTED = re.compile(r"^> ?", re.MULTILINE)
_MEMORY = re.compile(r"^(\d+): (.*)$", re.MULTILINE)
_MEMORIES = re.compile(r"^# Memories[^\n]*\n(.*?)^# Answer", re.DOTALL | re.MULTILINE)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def read_prompt(message: str) -> tuple[str, list[tuple[int, str]]]:
    """(the query, [(number, memory text as shown)]) from the judge's message: the
    conversation's quoted lines ("> ...") unquoted, the numbered lines of the memories."""
    found = _QUERY.search(message)
    query = _QUOTED.sub("", found.group(1)).strip() if found else ""
    section = _MEMORIES.search(message)
    return query, [(int(n), text) for n, text in _MEMORY.findall(section.group(1) if section else "")]


class SimulatedJudge:
    def __init__(
        self,
        label: Label,
        documents: Iterable[str],
        *,
        miss: float = 0.0,
        false: float = 0.0,
        random_picks: int = 0,
        first_picks: int = 0,
        word_picks: int = 0,
        seed: int = 0,
        latency: float = 0.0,
        per_char: float = 0.0,
    ):
        self.label, self.miss, self.false, self.random_picks = label, miss, false, random_picks
        self.first_picks, self.word_picks = first_picks, word_picks
        self.seed, self.latency, self.per_char = seed, latency, per_char
        # The prompt shows each memory folded to one line and cut: find the full text back.
        self._full = {_SPACE.sub(" ", d).strip(): d for d in documents}
        self.calls = 0

    def __call__(self, system: str, message: str):
        self.calls += 1
        answer = self.answer(message)
        delay = self.latency + self.per_char * len(message)
        if delay <= 0:
            return answer

        async def later() -> str:
            await asyncio.sleep(delay)
            return answer

        return later()

    def answer(self, message: str) -> str:
        query, shown = read_prompt(message)
        if self.word_picks:  # reads no oracle: the same rule for the probe and a pool
            return str(_by_rare_shared_words(query, shown)[: self.word_picks])
        labels = {n: self._label(query, text) for n, text in shown}
        if any(v is not None for v in labels.values()):
            listed = self._decide(query, shown, labels)
        else:  # the probe, or text the oracle does not know: shared words, best first
            listed = _by_shared_words(query, shown)
        return str(listed)

    def _label(self, query: str, shown_text: str) -> bool | None:
        full = self._full.get(shown_text) or next(
            (d for folded, d in self._full.items() if folded.startswith(shown_text)), None
        )
        return None if full is None else self.label(query, full)

    def _decide(self, query: str, shown: list[tuple[int, str]], labels: dict[int, bool | None]) -> list[int]:
        if self.random_picks:
            rng = random.Random(f"{self.seed}|{query}")
            return rng.sample([n for n, _ in shown], min(self.random_picks, len(shown)))
        if self.first_picks:
            return [n for n, _ in shown[: self.first_picks]]
        listed = []
        for n, text in shown:
            draw = _draw(self.seed, query, text)
            if labels[n] and draw >= self.miss:
                listed.append(n)
            elif not labels[n] and draw < self.false:
                listed.append(n)
        return listed


def _draw(seed: int, query: str, text: str) -> float:
    digest = hashlib.blake2b(f"{seed}|{query}|{text}".encode(), digest_size=8).digest()
    return random.Random(digest).random()


def _by_shared_words(query: str, shown: list[tuple[int, str]]) -> list[int]:
    words = set(_WORD.findall(query.lower()))
    overlap = [(len(words & set(_WORD.findall(text.lower()))), n) for n, text in shown]
    return [n for count, n in sorted(overlap, key=lambda p: (-p[0], p[1])) if count]


def _by_rare_shared_words(query: str, shown: list[tuple[int, str]]) -> list[int]:
    """The memories sharing the query's content words, best first by the summed rarity of
    the words shared (log(1 + shown / memories holding the word)); ties in the order shown."""
    from bench.relevance_corpus import content_words

    asked = content_words(query)
    words = {n: content_words(text) & asked for n, text in shown}
    held = {w: sum(w in ws for ws in words.values()) for w in asked}
    weight = {n: sum(math.log(1 + len(shown) / held[w]) for w in ws) for n, ws in words.items()}
    return [n for n, _ in sorted(((n, weight[n]) for n, _ in shown if weight[n] > 0), key=lambda p: -p[1])]


def perfect(label: Label, documents: Iterable[str], *, latency: float = 0.0) -> SimulatedJudge:
    return SimulatedJudge(label, documents, latency=latency)


def noisy(
    label: Label, documents: Iterable[str], miss: float, false: float, *, seed: int = 0, latency: float = 0.0
) -> SimulatedJudge:
    return SimulatedJudge(label, documents, miss=miss, false=false, seed=seed, latency=latency)


def worse_than_lexical(
    label: Label, documents: Iterable[str], *, seed: int = 0, latency: float = 0.0
) -> SimulatedJudge:
    """Three memories picked at random, whatever the question."""
    return SimulatedJudge(label, documents, random_picks=3, seed=seed, latency=latency)


def slow(label: Label, documents: Iterable[str], *, per_char: float) -> SimulatedJudge:
    """The perfect judge, taking ``per_char`` seconds per character of its message."""
    return SimulatedJudge(label, documents, per_char=per_char)


def word_overlap(label: Label, documents: Iterable[str], *, picks: int = 3, latency: float = 0.0) -> SimulatedJudge:
    """The ``picks`` memories sharing the question's rarest words, listed with confidence."""
    return SimulatedJudge(label, documents, word_picks=picks, latency=latency)


def positional(label: Label, documents: Iterable[str], *, picks: int = 3, latency: float = 0.0) -> SimulatedJudge:
    """The first ``picks`` memories shown, whatever the question."""
    return SimulatedJudge(label, documents, first_picks=picks, latency=latency)


# Seconds per character of the slow judge's message: the probe (~600 characters) answers in
# about 2 s, a recall's pool (the judge reads up to 6,000 characters of it) after 8 s and
# more, past rerank_timeout's default; like the Qwen2.5-0.5B on a CPU.
SLOW_PER_CHAR = 0.003

# The judges the relevance bench can run, by name: (miss, false) per noisy judge.
NOISY_LEVELS = {"judge-noisy-10": (0.1, 0.05), "judge-noisy-25": (0.25, 0.1), "judge-noisy-40": (0.4, 0.2)}
