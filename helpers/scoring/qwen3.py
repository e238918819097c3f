"""The Qwen3-Reranker judge prompt, rendered on the client for servers that do not apply it.

vLLM up to 0.13 scores the bare string ``query + document``. Sending the query half and the
document half of the official prompt makes that concatenation the exact prompt Qwen trained
with. Documents are cut *before* rendering, so no truncation can ever remove the suffix.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

import jinja2


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    # No autoescape: this is a model prompt, not HTML. Keep every newline as written.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def render_query(query: str, instruction: str) -> str:
    return _environment().get_template("qwen3_query.j2").render(query=query, instruction=instruction)


def render_document(document: str, max_chars: int) -> str:
    return _environment().get_template("qwen3_document.j2").render(document=document[:max_chars])


def render(query: str, documents: Sequence[str], instruction: str, max_doc_chars: int) -> tuple[str, list[str]]:
    return render_query(query, instruction), [render_document(d, max_doc_chars) for d in documents]
