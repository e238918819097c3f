"""A server on 127.0.0.1 that answers the way a test scripts it: bodies larger than any
reranker answer, gzip bombs, broken gzip, redirect loops, slow drips, odd headers.

Paths that are not scripted go to a wire-faithful backend (tests/servers/kinds.py), so a
probe can pass on one route and meet the hostile answer on another:

    with hostile.serve("tei19", {"/info": hostile.drip(b'{"max_client_batch_size": 8}', every=0.5)}) as srv:
        ...srv.url..., srv.finished("/info"), srv.sent["/info"]

A script is ``callable(request) -> Answer``; an ``Answer`` streams its body chunk by chunk
(chunked transfer encoding unless it names a length), pausing ``every`` seconds before each
chunk, and stops as soon as the client goes away, so a client that gives up early shows in
``sent`` and ``finished``.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterable

from .base import Request
from .kinds import make_backend

__all__ = ["Answer", "serve", "drip", "gzip_bomb", "padded_json", "redirect_loop", "unanswered", "HostileServer"]


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] = ()
    every: float = 0.0  # seconds slept before each chunk (a slow drip)
    length: int | None = None  # a Content-Length to announce; None = chunked


Script = Callable[[Request], "Answer | None"]  # None: the connection is closed, nothing said


def drip(body: bytes, every: float, content_type: str = "application/json") -> Script:
    """``body`` one byte at a time, ``every`` seconds apart: each read succeeds just in time."""
    return lambda request: Answer(
        200, {"Content-Type": content_type}, (body[i : i + 1] for i in range(len(body))), every, len(body)
    )


def padded_json(payload: bytes, padding: int, chunk: int = 1 << 20) -> Iterable[bytes]:
    """Valid JSON followed by ``padding`` bytes of whitespace, streamed."""
    yield payload
    left = padding
    while left > 0:
        yield b" " * min(chunk, left)
        left -= chunk


def gzip_bomb(payload: bytes, padding: int) -> bytes:
    """Valid JSON and ``padding`` spaces, gzipped: a few hundred KB that inflate ~1000-fold."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip wrapper
    out = [squeeze.compress(payload)]
    block = b" " * (1 << 20)
    for _ in range(padding // len(block)):
        out.append(squeeze.compress(block))
    out.append(squeeze.flush())
    return b"".join(out)


def gzipped(payload: bytes) -> bytes:
    return gzip.compress(payload)


def unanswered(request: Request) -> None:
    """What nginx's ``return 444`` does to a path it does not proxy: close, say nothing."""
    return None


def redirect_loop(request: Request) -> Answer:
    """Every request is sent back to the same path: httpx gives up after 20 hops."""
    return Answer(307, {"Location": request.path, "Content-Length": "0"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: "HostileServer") -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:
        pass  # clients that give up mid-answer are the point of these tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _Server

    def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        path = self.path.split("?", 1)[0]
        request = Request(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
        owner = self.server.owner
        owner.record(request)
        script = owner.scripts.get(path)
        if script is None:
            self._send_reply(owner.backend.handle(request))
            return
        answer = script(request)
        if answer is None:
            self.close_connection = True
        else:
            self._stream(path, answer)

    do_POST = do_GET

    def _send_reply(self, reply) -> None:
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def _stream(self, path: str, answer: Answer) -> None:
        owner = self.server.owner
        chunked = answer.length is None and answer.status not in (204, 304) and "Content-Length" not in answer.headers
        try:
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if answer.length is not None:
                self.send_header("Content-Length", str(answer.length))
            elif chunked:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for chunk in answer.chunks:
                if answer.every:
                    time.sleep(answer.every)
                if not chunk:
                    continue
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                self.wfile.flush()
                owner.count(path, len(chunk))
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            owner.done(path)
        except OSError:  # the client went away: exactly what a capped client does
            self.close_connection = True


class HostileServer:
    def __init__(self, kind: str, scripts: dict[str, Script], **options) -> None:
        self.backend = make_backend(kind, **options)
        self.scripts = dict(scripts)
        self.sent: Counter[str] = Counter()  # body bytes written per scripted path
        self.requests: list[Request] = []
        self._finished: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd = _Server(self)
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def count(self, path: str, n: int) -> None:
        with self._lock:
            self.sent[path] += n

    def done(self, path: str) -> None:
        with self._lock:
            self._finished[path] += 1

    def finished(self, path: str) -> int:
        """How many answers on ``path`` were written to their end (the client read them whole)."""
        with self._lock:
            return self._finished[path]

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "HostileServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def serve(kind: str, scripts: dict[str, Script], **options) -> HostileServer:
    return HostileServer(kind, scripts, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
