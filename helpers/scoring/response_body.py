"""Reading a server's answer with a ceiling: the body is streamed, decompressed here a bounded
piece at a time, and counted AFTER decompression, so neither a huge body nor a gzip bomb
(a megabyte on the wire, a gigabyte inflated) can fill memory or stall the event loop.

The client asks only for ``gzip`` and ``deflate`` (``ACCEPT_ENCODING``) and decodes them
itself from the raw stream: httpx's own decoder inflates each network chunk whole, up to
~1000 times its size, before anyone can count it.
"""

from __future__ import annotations

import asyncio
import zlib

import httpx

from ..errors import MalformedResponse, ResponseTooLarge
from ..vocabulary import transport as words

ACCEPT_ENCODING = "gzip, deflate"

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS
# The most one inflate step produces: a fraction of a millisecond of work on the loop.
_PIECE = 256 << 10


def _size(n: int) -> str:
    return f"{n / (1 << 20):.3g} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


class _Inflater:
    """One content coding, decoded incrementally with at most ``budget`` bytes out per step."""

    def __init__(self, coding: str):
        self.coding = coding
        self._wbits = _GZIP_WBITS if coding in ("gzip", "x-gzip") else _ZLIB_WBITS
        self._inflate = zlib.decompressobj(self._wbits)
        self._started = False

    def feed(self, data: bytes, budget: int):
        """Yield decompressed pieces of ``data``, each at most ``budget`` bytes (the caller
        stops pulling once its ceiling is passed, so no more is ever inflated)."""
        try:
            yield from self._pieces(data, budget)
        except zlib.error:
            if self.coding == "deflate" and not self._started:
                # "deflate" is sent both zlib-wrapped (as the RFC says) and raw (as many servers do).
                self._wbits, self._inflate = _RAW_DEFLATE_WBITS, zlib.decompressobj(_RAW_DEFLATE_WBITS)
                yield from self._guarded(data, budget)
                return
            raise MalformedResponse(words.corrupt_compressed(self.coding)) from None

    def _guarded(self, data: bytes, budget: int):
        try:
            yield from self._pieces(data, budget)
        except zlib.error:
            raise MalformedResponse(words.corrupt_compressed(self.coding)) from None

    def _pieces(self, data: bytes, budget: int):
        while data and not self._inflate.eof:
            piece = self._inflate.decompress(data, max(1, budget))
            self._started = True
            data = self._inflate.unconsumed_tail
            if piece:
                yield piece


# The content codings IANA registers: a header of these alone is named in the error; any
# other text in it is not repeated anywhere (a server may echo the Authorization header).
_REGISTERED_CODINGS = frozenset(
    ("aes128gcm", "br", "compress", "dcb", "dcz", "deflate", "exi", "gzip", "identity", "pack200-gzip")
    + ("x-compress", "x-gzip", "zstd")
)
# Chunks read between two turns of the event loop: the transport hands over every chunk
# it has buffered without awaiting, and a body sent a byte a chunk is thousands of them.
_CHUNKS_PER_TURN = 256


def _named(coding: str) -> str | None:
    codings = [c.strip() for c in coding.split(",")]
    return ", ".join(codings) if len(codings) <= 4 and all(c in _REGISTERED_CODINGS for c in codings) else None


async def read_capped(response: httpx.Response, limit: int, *, cut: bool = False) -> bytes:
    """The decoded body of a streamed ``response``, or ``ResponseTooLarge`` once it passes
    ``limit`` bytes (with ``cut``: its first ``limit`` bytes). Stops reading there: the
    rest is never received nor inflated."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding in ("", "identity"):
        inflater = None
    elif coding in ("gzip", "x-gzip", "deflate"):
        inflater = _Inflater(coding)
    else:  # we asked for gzip or deflate only; "br", "zstd" or a chain of codings was not asked for
        raise MalformedResponse(words.coding_not_asked_for(_named(coding)))
    parts: list[bytes] = []
    size = 0
    chunks = 0
    async for raw in response.aiter_raw():
        chunks += 1
        if inflater is None and chunks % _CHUNKS_PER_TURN == 0:
            await asyncio.sleep(0)
        pieces = [raw] if inflater is None else inflater.feed(raw, min(limit - size + 1, _PIECE))
        for piece in pieces:
            if inflater is not None:
                await asyncio.sleep(0)  # one network chunk can inflate to megabytes: let others run between pieces
            size += len(piece)
            if size > limit:
                if cut:
                    parts.append(piece[: len(piece) - (size - limit)])
                    return b"".join(parts)
                raise ResponseTooLarge(words.answer_too_large(_size(limit)))
            parts.append(piece)
    return b"".join(parts)
