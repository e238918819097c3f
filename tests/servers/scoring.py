"""Deterministic lexical relevance model shared by every fake server.

`relevance()` is in logit units, like a cross-encoder's raw head output, so a
server can publish it as is (llama.cpp, `raw_scores`) or squash it with
`probability()` (TEI, Infinity, vLLM, hosted APIs). Tests import it to predict
exactly what a server will answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from pathlib import Path

__all__ = [
    "relevance",
    "word_overlap",
    "calibration_label",
    "calibration_question_in",
    "calibration_answer",
    "probability",
    "sigmoid",
    "logit",
    "content_stems",
    "count_tokens",
    "truncate_tokens",
    "jitter",
    "NO_OVERLAP",
]

# Returned when query and document share no content word: sigmoid(-6) ~ 0.0025,
# low enough that every probe counts it as "clearly irrelevant".
NO_OVERLAP = -6.0
_COVERAGE_WEIGHT = 10.0  # how much of the query the document answers
_PRECISION_WEIGHT = 3.0  # how focused the document is on the query

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+|[^\w\s]")

STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing down
    during each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves""".split()
)

# Words that occur in many documents. There is no corpus to take IDF from, so a
# fixed list stands in for "frequent, therefore weak evidence".
COMMON_WORDS = frozenset(
    """big city day good great known large long make made many much new old one part
    people place small thing time two use used way well year""".split()
)


def _stem(word: str) -> str:
    """Strip English plural endings only: enough to match "cities" with "city"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_stems(text: str) -> frozenset[str]:
    """Lower-cased content-word stems of `text` (stop words removed)."""
    words = (w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)
    return frozenset(_stem(w) for w in words)


def _weight(stem: str) -> float:
    # Longer words are rarer in English; common words count half. Together an IDF
    # stand-in, so "capital" outweighs "city".
    base = 0.6 + 0.1 * min(len(stem), 10)
    return base * (0.5 if stem in COMMON_WORDS else 1.0)


def _total(stems) -> float:
    # Sorted so the float sum is identical under any PYTHONHASHSEED.
    return sum(_weight(s) for s in sorted(stems))


# The plugin's calibration set (helpers/scoring/calibration_set.json): the stand-in model
# knows its answers, as a capable cross-encoder does, so a server built on ``relevance``
# earns its say in recall; a test of a weak reranker uses ``word_overlap`` alone.
_CALIBRATION = Path(__file__).resolve().parents[2] / "helpers" / "scoring" / "calibration_set.json"


@functools.lru_cache(maxsize=1)
def _calibration_answers() -> dict[str, tuple[str, frozenset[str]]]:
    items = json.loads(_CALIBRATION.read_text(encoding="utf-8"))["items"]
    return {
        i["query"].strip(): (i["candidates"][i["answer"]].strip(), frozenset(c.strip() for c in i["candidates"]))
        for i in items
    }


def calibration_label(query: str, document: str) -> bool | None:
    """True/False for a calibration question and one of its candidates, else None."""
    known = _calibration_answers().get(query.strip())
    if known is None or document.strip() not in known[1]:
        return None
    return document.strip() == known[0]


def calibration_question_in(text: str) -> str | None:
    """The calibration question ``text`` holds (a request body, a judge's prompt), if any."""
    return next((q for q in _calibration_answers() if q in text), None)


def calibration_answer(question: str) -> str:
    return _calibration_answers()[question.strip()][0]


def partly_calibrated(known: int, otherwise=None, *, clean: bool = False):
    """A model that knows the answers of the first ``known`` calibration questions and puts
    the answer last for the others (reciprocal rank 1/5: its MRR is (known + rest / 5) / n);
    on everything else ``otherwise`` (word overlap). The unrelated memories sent with each
    question score as a wrong candidate does (above an answer it does not know, as noise
    puts them), or, ``clean``, below everything (as a trained model that tells a memory
    about something else entirely from a near miss does)."""
    order = list(_calibration_answers())

    def score(query: str, document: str) -> float:
        question = calibration_question_in(query)
        if question is not None:
            if clean and calibration_label(question, document) is None:
                return -8.0
            right = document.strip() == calibration_answer(question)
            if order.index(question) < known:
                return 6.0 if right else -4.0
            return -6.0 if right else -4.0
        return (otherwise or word_overlap)(query, document)

    return score


def partly_calibrated_mrr(known: int) -> float:
    """partly_calibrated(known)'s mean reciprocal rank on the calibration set: 1 for the
    questions it knows, 1/5 (the answer last of five) for the rest."""
    n = len(_calibration_answers())
    return (known + (n - known) / 5) / n


def fewest_known(enough) -> int:
    """The fewest answers partly_calibrated must know for ``enough(its MRR)``."""
    return next(k for k in range(len(_calibration_answers()) + 1) if enough(partly_calibrated_mrr(k)))


def relevance(query: str, document: str) -> float:
    """Relevance of `document` to `query` in logit units, in [-6, +7]: word overlap, and
    the answers of the plugin's calibration questions, as a capable model knows them."""
    label = calibration_label(query, document)
    if label is not None:
        return 6.5 if label else NO_OVERLAP + 1.0
    return word_overlap(query, document)


def word_overlap(query: str, document: str) -> float:
    """Relevance by shared words alone, in logit units, in [-6, +7]."""
    q, d = content_stems(query), content_stems(document)
    shared = q & d
    if not shared:
        return NO_OVERLAP
    matched = _total(shared)
    coverage = matched / _total(q)
    precision = matched / _total(d)
    return _COVERAGE_WEIGHT * coverage + _PRECISION_WEIGHT * precision + NO_OVERLAP


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))


def probability(query: str, document: str) -> float:
    """sigmoid(relevance): what a single-label cross-encoder reports by default."""
    return sigmoid(relevance(query, document))


def count_tokens(text: str) -> int:
    """A crude but stable token count (words and punctuation marks)."""
    return len(_TOKEN.findall(text))


def truncate_tokens(text: str, limit: int) -> str:
    """Keep the first `limit` tokens of `text` (right-side truncation)."""
    if limit <= 0:
        return ""
    for i, match in enumerate(_TOKEN.finditer(text)):
        if i == limit - 1:
            return text[: match.end()]
    return text


def jitter(*parts: str) -> float:
    """A deterministic pseudo-random number in [-1, 1] derived from `parts`."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**63 - 1.0
