"""Keeping the API key out of text that came back from a server: the second line of defence.

The first is never to quote a server value that could hold request data where a message can
say the shape instead (``wire/_parse.py``). What must be quoted (a server's own error message,
the model names it lists, a transport error) passes through ``scrub`` before it is stored,
logged or shown. A server that echoes the Authorization header may send the key back in
any form, so exact matching is not enough:

1. the key's usual encodings are masked wherever they stand: as typed, in any letter case,
   JSON-escaped, repr-escaped, URL-encoded (either hex case, ``+`` for spaces), HTML-escaped,
   as hex bytes;
2. then, if a piece of the key (8 characters; a message may be cut mid-key) can still be
   found in the text, read as it is or another way (URL- or JSON-decoded, its base64 and hex runs
   decoded, without the quotes, spaces and commas that split a repr apart), the whole text
   is withheld and a fixed sentence stands in its place.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from ..vocabulary import transport as words

MASK = "***"
WITHHELD = words.KEY_WITHHELD
# A piece of the key this long left in a text counts as the key: shorter ones also occur
# in ordinary words, and a few characters do not give a key away.
_PIECE = 8
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{16,}")  # 8 bytes: a piece of the key
_SPLITTERS = re.compile(r"""["'\s,+\\|\[\]]""")  # what a repr, a list or a table puts between parts


def scrub(text: str, key: str) -> str:
    """``text`` with every form of ``key`` masked, or withheld if one cannot be masked."""
    if not key or not text:
        return text
    for form in sorted(_forms(key), key=len, reverse=True):
        text = re.sub(re.escape(form), MASK, text, flags=re.IGNORECASE)
    return WITHHELD if _still_holds(text, key) else text


def _forms(key: str) -> set[str]:
    forms = {
        key,
        json.dumps(key)[1:-1],
        json.dumps(key, ensure_ascii=True)[1:-1],
        repr(key)[1:-1],
        quote(key, safe=""),
        quote_plus(key, safe=""),
        quote(key),
        html.escape(key),
        key.encode("utf-8").hex(),  # a server that dumps the header's bytes (either case: IGNORECASE)
    }
    forms |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in list(forms)}
    return {f for f in forms if f}


def _still_holds(text: str, key: str) -> bool:
    pieces = _pieces(key.lower()) | _pieces(_SPLITTERS.sub("", key.lower()))
    readings = [text, unquote(text), unquote_plus(text), _json_unescaped(text), html.unescape(text)]
    readings += _base64_decoded(text) + _hex_decoded(text)
    for reading in readings:
        lowered = reading.lower()
        for candidate in (lowered, _SPLITTERS.sub("", lowered)):
            if any(piece in candidate for piece in pieces):
                return True
    return False


def _pieces(key: str) -> set[str]:
    """Every run of ``_PIECE`` characters of the key (the key itself when shorter)."""
    if len(key) <= _PIECE:
        return {key} if key else set()
    return {key[i : i + _PIECE] for i in range(len(key) - _PIECE + 1)}


def _json_unescaped(text: str) -> str:
    try:
        return json.loads(f'"{text}"')
    except ValueError:
        return (
            re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
            .replace("\\\\", "\\")
            .replace('\\"', '"')
        )


def _hex_decoded(text: str) -> list[str]:
    """Each run of hex digits decoded as bytes from both alignments (a dump of the header's
    bytes may be cut anywhere)."""
    out = []
    for run in _HEX_RUN.findall(text):
        for start in range(2):
            piece = run[start:][: (len(run) - start) // 2 * 2]
            out.append(bytes.fromhex(piece).decode("latin-1"))
    return out


def _base64_decoded(text: str) -> list[str]:
    """Each base64 run decoded from each of its four possible alignments (the key may start
    anywhere inside a longer encoded text, e.g. ``Authorization: Bearer <key>``)."""
    out = []
    for run in _BASE64_RUN.findall(text):
        run = run.rstrip("=").replace("-", "+").replace("_", "/")
        for start in range(4):
            piece = run[start:]
            if len(piece) % 4 == 1:  # one character past a whole group encodes nothing
                piece = piece[:-1]
            piece += "=" * (-len(piece) % 4)
            try:
                out.append(base64.b64decode(piece).decode("latin-1"))
            except (binascii.Error, ValueError):
                continue
    return out
