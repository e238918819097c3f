"""Setting or removing one variable in a dotenv file (the host's ``usr/.env``) and nothing else.

Agent Zero's ``helpers/dotenv.py`` can save a variable but not remove one, and it writes
the value raw (a line break in it adds variables, ``#`` cuts it, ``${X}`` expands) and
rewrites the file in text mode (CRLF becomes LF); python-dotenv's own ``unset_key`` does
too and drops the blank lines before the binding. Here every byte outside the variable's
own lines stays as it was: comments, blank lines, order, other variables, CRLF, a missing
final newline, bytes that are not UTF-8; and a value reads back exactly (``quoted``).

Which lines are the variable's is decided the way python-dotenv (what the host loads the
file with) reads the file: ``KEY=value``, ``export KEY=value``, ``'KEY'=value``, spaces
around ``=``, quoted values spanning several lines, inline comments. A line that only
looks like the variable inside another variable's multi-line quoted value is left alone,
and so is a line python-dotenv cannot parse (the host never loaded it).
"""

from __future__ import annotations

import os
import re
from typing import Callable, Iterator, NamedTuple

from .vocabulary.setting_words import DOTENV_LINE_BREAK

_BOM = "\ufeff"
_SPACE = r"[^\S\r\n]"  # whitespace that does not end a line

_LEADING = re.compile(r"\s*")  # blank lines and indentation before a binding
_EXPORT = re.compile(rf"(?:export{_SPACE}+)?")
_QUOTED_KEY = re.compile(r"'([^']+)'")
_BARE_KEY = re.compile(r"([^=#\s]+)")
_SPACES = re.compile(rf"{_SPACE}*")
_EQUALS = re.compile(rf"={_SPACE}*")
# A quoted value may span lines; in it only an escaped quote does not close it.
_QUOTED_VALUE = {"'": re.compile(r"'(?:\\'|[^'])*'"), '"': re.compile(r'"(?:\\"|[^"])*"')}
_BARE_VALUE = re.compile(r"[^\r\n]*")
_COMMENT = re.compile(rf"(?:{_SPACE}*#[^\r\n]*)?")
_LINE_END = re.compile(rf"{_SPACE}*(?:\r\n|\n|\r|\Z)")
_REST_OF_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")


class Binding(NamedTuple):
    """One parsed entry: ``text[start:end]`` is its own lines (from the start of the line
    its key is on through its line end); ``key`` is None for a comment, a blank tail or a
    line python-dotenv would reject."""

    key: str | None
    start: int
    end: int


class _Unparsable(Exception):
    pass


def _take(pattern: re.Pattern, text: str, pos: int) -> re.Match:
    match = pattern.match(text, pos)
    if match is None:
        raise _Unparsable
    return match


def bindings(text: str) -> Iterator[Binding]:
    """The file's entries in order, as python-dotenv parses them (line ends: CRLF, LF, CR)."""
    first = pos = len(_BOM) if text.startswith(_BOM) else 0  # python-dotenv >= 1.2 skips a BOM
    while pos < len(text):
        pos = _LEADING.match(text, pos).end()
        if pos >= len(text):
            return
        line_start = max(text.rfind("\n", 0, pos) + 1, text.rfind("\r", 0, pos) + 1, first)
        try:
            cursor = _EXPORT.match(text, pos).end()
            if text.startswith("#", cursor):
                key = None
            else:
                found = _take(_QUOTED_KEY if text.startswith("'", cursor) else _BARE_KEY, text, cursor)
                key, cursor = found.group(1), found.end()
            cursor = _SPACES.match(text, cursor).end()
            if text.startswith("=", cursor):
                cursor = _EQUALS.match(text, cursor).end()
                quote = text[cursor : cursor + 1]
                cursor = _take(_QUOTED_VALUE.get(quote, _BARE_VALUE), text, cursor).end()
            cursor = _COMMENT.match(text, cursor).end()
            pos = _take(_LINE_END, text, cursor).end()
        except _Unparsable:
            # python-dotenv skips the rest of the line it stopped in, and reads on from there
            pos = _REST_OF_LINE.match(text, cursor).end()
            key = None
        yield Binding(key, line_start, pos)


def without(text: str, name: str) -> str:
    """``text`` with every binding of ``name`` removed, each with all of its lines. A file
    that did not end with a line end still does not."""
    pieces, pos = [], 0
    for binding in bindings(text):
        if binding.key == name:
            pieces.append(text[pos : binding.start])
            pos = binding.end
    if not pieces:
        return text
    kept = "".join(pieces) + text[pos:]
    if not text.endswith(("\n", "\r")) and kept.endswith(("\n", "\r")):
        # the removed binding was the unterminated last line: its predecessor is now last
        kept = kept[:-2] if kept.endswith("\r\n") else kept[:-1]
    return kept


# Characters that need no quoting: python-dotenv reads an unquoted value of these as is.
_PLAIN = re.compile(r"[A-Za-z0-9_.,:;@%+=/~^*?!|-]*")
# python-dotenv expands ${NAME} in every value, quoted or not, and has no escape for it.
# ${:-$} is a reference to the empty name, which no environment can define (the parser
# wants at least one character, putenv refuses ""), so it always becomes its default: "$".
_DOLLAR = "${:-$}"


def quoted(value: str) -> str:
    """``value`` written so python-dotenv (with interpolation, as the host loads usr/.env)
    reads it back exactly. Line breaks cannot be written: callers refuse them first."""
    if "\n" in value or "\r" in value:
        raise ValueError(DOTENV_LINE_BREAK)
    if _PLAIN.fullmatch(value):
        return value
    # Single quotes: only \\ and \' are escapes in them; "#" and '"' are plain text.
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("${", _DOLLAR + "{")
    return f"'{escaped}'"


def _line_end(text: str) -> str:
    """The file's own line end (its first one), LF for a file without one."""
    match = re.search(r"\r\n|\n|\r", text)
    return match.group(0) if match else "\n"


def with_value(text: str, name: str, value: str) -> str:
    """``text`` with ``name`` bound to ``value``: its first binding replaced in place (the
    others removed), or a new line at the end; in the file's own line ends."""
    end = _line_end(text)
    line = f"{name}={quoted(value)}{end}"
    found = [b for b in bindings(text) if b.key == name]
    if not found:
        if text and not text.endswith(("\n", "\r")):
            text += end
        return text + line
    first = found[0]
    rest = without(text[first.end :], name)
    own = text[first.start : first.end]
    if not own.endswith(("\n", "\r")):  # the unterminated last line stays unterminated
        line = line[: -len(end)]
    return text[: first.start] + line + rest


def set_variable(path: str, name: str, value: str) -> bool:
    """Bind ``name`` to ``value`` in the dotenv file at ``path`` (created if missing), in
    place. True when the file changed. Raises ``OSError`` when it cannot be written."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raw = b""
    text = raw.decode("utf-8", "surrogateescape")
    updated = with_value(text, name, value)
    if updated == text:
        return False
    _write_in_place(path, updated)
    return True


def remove_variable(path: str, name: str) -> bool:
    """Remove ``name`` from the dotenv file at ``path``, in place (same inode and mode: the
    file may be a bind mount). True when the file changed; a missing file is no change.
    Raises ``OSError`` when the file exists but cannot be read or written."""
    return remove_variables(path, lambda key: key == name)


def remove_variables(path: str, is_removed: Callable[[str], bool]) -> bool:
    """``remove_variable`` for every variable whose name ``is_removed``, in one rewrite."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return False
    # surrogateescape: bytes that are not UTF-8 pass through unchanged
    text = raw.decode("utf-8", "surrogateescape")
    kept = text
    for name in {b.key for b in bindings(text) if b.key is not None and is_removed(b.key)}:
        kept = without(kept, name)
    if kept == text:
        return False
    _write_in_place(path, kept)
    return True


def _write_in_place(path: str, text: str) -> None:
    """Same inode and mode (the file may be a bind mount); created if it does not exist."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+b") as fh:
        fh.write(text.encode("utf-8", "surrogateescape"))
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())
