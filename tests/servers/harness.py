"""Serving a backend over real HTTP on 127.0.0.1, with recording and faults.

HTTP/1.1 with Content-Length on every answer, so clients can keep connections
alive; one daemon thread per connection; port 0, so parallel test runs never
collide.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import echo
from .base import Backend, Recorded, Reply, Request, parse_json
from .faults import Faults, corrupt
from .kinds import make_backend

__all__ = ["ServerHandle", "start"]

_RETRY_AFTER_STATUSES = (429, 503)
_NO_BODY_STATUSES = (204, 304)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    # Keep-alive handler threads may sit in a read; stopping must not wait for them.
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, handle: "ServerHandle") -> None:
        self.handle_ref = handle
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:
        # Clients that time out or reset mid-answer are expected in fault tests.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60  # an idle keep-alive connection frees its thread after this

    server: _HttpServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.sockets_lock:
            self.server.open_sockets.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        with self.server.sockets_lock:
            self.server.open_sockets.discard(self.connection)

    def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
        pass

    def send_response(self, code, message=None) -> None:
        # Like send_response, but the Server header is the real server's (or none).
        self.log_request(code)
        self.send_response_only(code, message)
        header = self.server.handle_ref.backend.server_header
        if header:
            self.send_header("Server", header)
        self.send_header("Date", self.date_time_string())

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    # -- one request ---------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _serve(self) -> None:
        handle = self.server.handle_ref
        body = self._read_body()
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            decoded = parse_json(body) if body else None
        except ValueError:
            decoded = None
        handle._record(Recorded(self.command, path, headers, decoded, body))

        plan = handle.faults.plan(path)
        if plan.delay > 0:
            time.sleep(plan.delay)
        if plan.reset:
            self._reset()
            return
        request = Request(self.command, path, headers, body)
        if plan.status is not None:
            reply = handle.backend.error_reply(plan.status)
            if plan.retry_after is not None and plan.status in _RETRY_AFTER_STATUSES:
                reply.headers["retry-after"] = _retry_after_value(plan.retry_after)
        else:
            try:
                reply = handle.backend.handle(request)
            except Exception:  # a bug in a fake: answer 500 and keep it for the test
                handle.errors.append(traceback.format_exc())
                reply = Reply(500, b"fake server error", "text/plain; charset=utf-8")
            if plan.echo is not None:
                reply = echo.reply(plan.echo, self.path, headers, reply, handle.backend)
        if plan.body is not None and 200 <= reply.status < 300:
            payload = reply.payload if reply.has_payload else None
            reply.body, reply.content_type = corrupt(plan.body, payload, reply.n_inputs)
            reply.status = 200
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        body = b"" if reply.status in _NO_BODY_STATUSES else reply.body
        try:
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            # Headers and body in one write: two small writes meet the client's
            # delayed ACK (Nagle) and cost ~40 ms per request.
            self._headers_buffer.append(b"\r\n")
            if self.command != "HEAD":
                self._headers_buffer.append(body)
            self.flush_headers()
        except OSError:  # the client gave up (timeout, reset): nothing to answer
            self.close_connection = True

    def _reset(self) -> None:
        """Drop the connection with a TCP RST and no response at all."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass


def _retry_after_value(value) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else str(value)
    return str(value)


class ServerHandle:
    """A running fake server. Use as a context manager, or call `stop()`."""

    def __init__(self, kind: str, backend: Backend) -> None:
        self.kind = kind
        self.backend = backend
        self.faults = Faults()
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # tracebacks from bugs in the fake itself
        self._lock = threading.Lock()
        self._httpd = _HttpServer(self)
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"fake-{kind}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    def _record(self, entry: Recorded) -> None:
        with self._lock:
            self.requests.append(entry)

    def set_faults(
        self,
        delay: float = 0.0,
        statuses=(),
        retry_after=None,
        body: str | None = None,
        reset: bool | int = False,
        fault_paths=None,
        **more,
    ) -> None:
        """Replace the fault configuration (see `Faults.configure` for `more`:
        delay_jitter, fail_rate, seed, fail_delay)."""
        self.faults.configure(delay, statuses, retry_after, body, reset, fault_paths, **more)

    def recover(self) -> None:
        """Clear every fault."""
        self.faults.recover()

    def clear(self) -> None:
        """Empty the request log and zero the counters."""
        with self._lock:
            del self.requests[:]
        self.faults.reset_stats()

    @property
    def stats(self) -> dict[str, int]:
        return self.faults.stats()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        # Like a real server going away: open keep-alive connections are closed too.
        with self._httpd.sockets_lock:
            sockets = list(self._httpd.open_sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    def __enter__(self) -> "ServerHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ServerHandle {self.kind} {self.url}>"


def start(kind: str, **options) -> ServerHandle:
    """Start a fake server of `kind` (see SERVER_KINDS) and return its handle.

    Common options: api_key, model, scorer (callable(query, doc) -> relevance in
    logit units, replacing the lexical model), latency (seconds per scoring call).
    Kind-specific: max_client_batch_size, max_concurrent_texts, max_input_length,
    payload_limit (TEI); max_model_len (vLLM); url_prefix, max_client_batch_size,
    models (several model ids), max_length (tokens per pair) (Infinity).
    """
    return ServerHandle(kind, make_backend(kind, **options))
