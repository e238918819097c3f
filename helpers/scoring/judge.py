"""The utility-model judge's words: the prompt it is asked, and how its answer is read.

The prompt (prompts/a0_reranker.judge.*.md, jinja2) shows the reranker query (the user's
message and the newest conversation), then the memories numbered from 0, each cut to a
per-memory budget and on one line, the best-fused first while a total budget lasts. The
answer is the host's own post-filter format: a JSON array of the numbers of the useful
memories, best first.

Both budgets are hard caps on what a memory puts in the prompt, its number and line break
included (``line_chars``): the recall chooses which memories the judge reads with ``fits``,
the same rule ``build`` shows them by, so a memory is either shown whole-as-cut or not at
all (then it is unjudged, never scored as rejected).

The conversation and the memories are quoted data, not instructions (the system prompt
says so): the conversation is shown one quoted line at a time ("> ..."), each memory on one
line after its number, so neither can forge the prompt's own "# ..." headings or a
numbered memory line.

A chat model wraps that array in prose, code fences or a reasoning block, so the reader
takes the first array of integers anywhere in the answer, skips numbers out of range and
repeats, and refuses anything without one (a refusal, garbage) as a malformed answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

import jinja2

from ..errors import MalformedResponse
from ..settings import PLUGIN_DIR
from ..vocabulary import scorer_words as words
from . import log_odds

SYSTEM_TEMPLATE = "a0_reranker.judge.sys.md"
MESSAGE_TEMPLATE = "a0_reranker.judge.msg.md"

# A listed memory scores in (LISTED_FLOOR, LISTED_FIRST]: the first highest, the rest evenly
# below it; an unlisted one scores UNLISTED. On the 0..1 "probability" scale, the relevance
# floor calibrated on the probe (relevant listed first, irrelevant unlisted) then means "the
# judge listed it", and a score cached from an earlier pool keeps that meaning. Every listed
# memory sits far above every unlisted one (logit 2.2 and up against -4.6), so a judge's
# picks stand out from the pool (fusion.standing_out) as long as it lists a few of many.
LISTED_FIRST = 0.99
LISTED_FLOOR = 0.9
UNLISTED = 0.01

_SPACE = re.compile(r"\s+")
# A [..] holding only integers (quoted or not), a trailing comma allowed. No two \s* side by
# side: "[1" and 60,000 spaces (a small model looping on whitespace) backtracked in quadratic
# time, 24 s with the event loop held.
_ARRAY = re.compile(r"\[\s*(?:\"?-?\d+\"?\s*(?:,\s*\"?-?\d+\"?\s*)*(?:,\s*)?)?\]")
# What of an answer is read: a list of a few dozen numbers, and thinking before it, fit many
# times over; a model that runs on to its token limit is not read to its end.
ANSWER_CHARS = 64 * 1024
_INTEGER = re.compile(r"-?\d+")
# What reasoning models think aloud before answering: not the answer.
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


@dataclass(frozen=True)
class Prompt:
    system: str
    message: str
    shown: int  # how many of the documents (the first ones) the judge reads


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    # No autoescape: a model prompt, not HTML.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PLUGIN_DIR / "prompts")),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def one_line(text: str, max_chars: int) -> str:
    """The memory as the judge reads it: whitespace folded (one memory, one numbered line)
    and cut to ``max_chars``. Only as much of the start is folded as the cut needs (more
    only when whitespace folded away): a 250 KB memory is not folded whole on the loop."""
    limit = max_chars + 64
    while True:
        folded = _SPACE.sub(" ", text[:limit]).strip()
        if len(folded) >= max_chars or limit >= len(text):
            return folded[:max_chars]
        limit *= 4


def line_chars(number: int, text: str) -> int:
    """What one memory puts in the prompt: ``"N: text\\n"``."""
    return len(str(number)) + 2 + len(text) + 1


def fits(documents: Sequence[str], max_chars: int, doc_chars: int, first_number: int = 0, minimum: int = 1) -> int:
    """How many of ``documents`` (the first ones) the judge reads within ``max_chars``,
    numbered from ``first_number``; at least ``minimum`` (one: a budget smaller than one
    memory still shows the best-fused one, cut)."""
    count, spent = 0, 0
    for number, document in enumerate(documents, first_number):
        cost = line_chars(number, one_line(document, doc_chars))
        if count >= minimum and spent + cost > max_chars:
            break
        count, spent = count + 1, spent + cost
    return count


def quoted(text: str, max_chars: int) -> list[str]:
    """The conversation as quoted lines, for the template to show each behind "> ", so none
    of it starts a line the prompt's own structure could be read from (a heading, a
    numbered memory); within ``max_chars``, the markers and line breaks included."""
    lines, spent = [], 0
    for line in text.strip().splitlines():
        line = line.strip()
        room = max_chars - spent - 3  # "> " and the line break
        if not line:
            continue
        if room <= 0:
            break
        lines.append(line[:room])
        spent += len(lines[-1]) + 3
    return lines


def build(query: str, documents: Sequence[str], max_chars: int, doc_chars: int, query_chars: int = 2000) -> Prompt:
    """The prompt for ``documents`` (in pool order): the first that fit ``max_chars``
    (``fits``), at least one; the conversation within ``query_chars``."""
    shown = [
        (number, one_line(document, doc_chars))
        for number, document in enumerate(documents[: fits(documents, max_chars, doc_chars)])
    ]
    env = _environment()
    return Prompt(
        env.get_template(SYSTEM_TEMPLATE).render().strip(),
        env.get_template(MESSAGE_TEMPLATE).render(conversation=quoted(query, query_chars), memories=shown),
        len(shown),
    )


def read_answer(answer: object, shown: int) -> list[int]:
    """The numbers of the useful memories, best first: the JSON array of integers in
    ``answer`` (thinking left out), numbers outside 0..shown-1 and repeats skipped. An answer
    holding arrays that differ ("memory [4] is off-topic; answer: [1, 2]", an example echoed
    back, a reasoning field beside the answer) does not say which it means: no answer.
    Raises ``MalformedResponse``."""
    if not isinstance(answer, str):
        raise MalformedResponse(words.judge_answered_kind(type(answer).__name__))
    arrays = {tuple(_numbers(m.group(0))) for m in _ARRAY.finditer(_without_thinking(answer[:ANSWER_CHARS]))}
    if not arrays:
        raise MalformedResponse(words.NO_ARRAY)
    if len(arrays) > 1:
        raise MalformedResponse(words.SEVERAL_ARRAYS)
    numbers = arrays.pop()
    listed: list[int] = []
    for n in numbers:
        if 0 <= n < shown and n not in listed:
            listed.append(n)
    if numbers and not listed:  # only numbers it was never shown: it did not read the list
        raise MalformedResponse(words.judge_only_unshown(shown - 1))
    return listed


def _numbers(array: str) -> list[int]:
    # A memory number has a few digits; a longer one is none of them (and int() refuses
    # more than 4,300 digits with a ValueError, outside the typed errors).
    return [int(n) if len(n.lstrip("-")) <= 9 else -1 for n in _INTEGER.findall(array)]


def _without_thinking(answer: str) -> str:
    """``answer`` with each <think>...</think> block replaced by a space, and an unclosed one
    cut off with all after it (a reasoning model stopped mid-thought has not answered). One
    pass: a lazy ``<think>.*?</think>`` pattern is quadratic on an answer of many opening
    tags (224 KB of them held the event loop 49 s)."""
    out, pos = [], 0
    while opened := _THINK_OPEN.search(answer, pos):
        out.append(answer[pos : opened.start()])
        closed = _THINK_CLOSE.search(answer, opened.end())
        if closed is None:
            return " ".join(out)
        out.append(" ")
        pos = closed.end()
    out.append(answer[pos:])
    return "".join(out)


def scores(listed: Sequence[int], count: int) -> list[float]:
    """One score per document, in input order: listed ones descending by position, above
    every unlisted one; unlisted (or not shown) ones equal, so their pool order stands.
    Listed ones are spaced evenly as logits, the scale the standout rule reads them on:
    spaced evenly as probabilities, the first of a judge that lists the whole pool stood
    out (logit 4.6 against 2.2..3.7) and led, though listing everything says nothing."""
    out = [UNLISTED] * count
    top, floor = log_odds.logit(LISTED_FIRST), log_odds.logit(LISTED_FLOOR)
    for position, number in enumerate(listed):
        out[number] = log_odds.sigmoid(top - (top - floor) * position / len(listed))
    return out
