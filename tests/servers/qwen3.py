"""The official Qwen3-Reranker judge prompt (protocols doc §8.1).

The fake vLLM servers use it to decide whether a pair was templated correctly,
and tests pin the client's own copy (a jinja template) to these strings.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "PREFIX",
    "SUFFIX",
    "DEFAULT_INSTRUCTION",
    "render_query",
    "render_document",
    "render_prompt",
    "parse_prompt",
    "Prompt",
]

PREFIX = (
    "<|im_start|>system\n"
    "Judge whether the Document meets the requirements based on the Query and the "
    'Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n'
    "<|im_start|>user\n"
)
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
DEFAULT_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"

_BODY = re.compile(r"<Instruct>: (.*?)\n<Query>: (.*?)\n<Document>: (.*)", re.DOTALL)


class Prompt(NamedTuple):
    instruction: str
    query: str
    document: str


def render_query(query: str, instruction: str = DEFAULT_INSTRUCTION) -> str:
    """The query half a client sends to an untemplated vLLM (<= 0.13)."""
    return f"{PREFIX}<Instruct>: {instruction}\n<Query>: {query}\n"


def render_document(document: str) -> str:
    """The document half; concatenated after `render_query` it is the full prompt."""
    return f"<Document>: {document}{SUFFIX}"


def render_prompt(query: str, document: str, instruction: str = DEFAULT_INSTRUCTION) -> str:
    return render_query(query, instruction) + render_document(document)


def parse_prompt(text: str) -> Prompt | None:
    """Split a full judge prompt back into its parts; None unless it is exact.

    Exact means: the prefix and the suffix each occur once, at the very start and
    end, and the body has the README's single-newline layout. Anything else is what
    the model would see as a malformed prompt.
    """
    if text.count(PREFIX) != 1 or text.count(SUFFIX) != 1:
        return None
    if not (text.startswith(PREFIX) and text.endswith(SUFFIX)):
        return None
    match = _BODY.fullmatch(text[len(PREFIX) : len(text) - len(SUFFIX)])
    if match is None:
        return None
    return Prompt(*match.groups())
