"""The README as Agent Zero's plugin list shows it.

The host renders a plugin's README.md in its own page (api/plugins.py ``get_doc``), where a
link or image relative to the repository (``docs/relevance.md``, ``docs/screenshots/x.png``)
resolves against the web UI's root: the host serves only a plugin's ``webui/`` folder, so
every such image is broken and every such link opens "Not Found". In that view they become
plain text naming the file in the plugin's folder; on a Git host the README is read as
written. Links to a place in the page (``#choosing-a-judge``) and absolute URLs are kept."""

from __future__ import annotations

import re

# ![alt](target) and [text](target): no nested brackets, no spaces in the target (the
# README's own form; anything else is left as it is).
_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
_KEPT = re.compile(r"^(#|[a-z][a-z0-9+.-]*:|/)", re.IGNORECASE)


def for_agent_zero(markdown: str) -> str:
    """``markdown`` with its repository-relative links and images as text."""
    return _LINK.sub(_as_text, markdown)


def _as_text(match: re.Match) -> str:
    image, text, target = match.groups()
    if _KEPT.match(target):
        return match.group(0)
    path = target.split("#", 1)[0]
    if not text or text.strip("`") in (path, target):  # the link says its file already
        return f"`{path}`"
    if image:
        return f"_{text}_ (`{path}`)"
    return f"{text} (`{path}`)"
