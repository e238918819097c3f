"""A loopback web server that hosts the plugin's settings panel the way Agent Zero does.

What it serves (127.0.0.1, a free port):

- ``/``: the settings-modal page (static/index.html + harness.js): an outer Alpine scope
  with ``context`` (``settings`` = the saved config, loaded like the host's
  ``get_config``) and a ``config`` getter; the plugin's ``webui/config.html`` injected
  through ``x-html`` as ``<x-component path=...>``; Save / Default buttons.
  ``?theme=light`` switches to the light theme, ``?toast_scale=N`` keeps toasts N times
  longer.
- ``/js/AlpineStore.js``, ``/js/api.js``, ``/js/components.js``,
  ``/components/notifications/notification-store.js``: small stand-ins written for the
  harness with the host's module paths and exports (createStore; callJsonApi/fetchApi
  with the CSRF token; toastFrontendSuccess/Error/Warning/Info rendering
  ``div.toast.<type>``).
- ``/vendor/alpine/alpine.min.js``: Alpine at the host's version (tests/browser/alpine.py).
- ``/plugins/a0_reranker/webui/*``: the plugin's own files, from the mounted plugin folder.
- ``GET /api/csrf_token``; every ``POST /api/...`` without the matching ``X-CSRF-Token``
  answers 403.
- ``POST /api/plugins`` (``get_config``, ``save_config``, ``get_default_config``): the
  stand-in host's ``api/plugins.py``, routed like every other call below: the host's
  settings actions, ``@extensible`` as there (save runs the plugin's ``save_plugin_config``
  hook, then the plugin's end extension of ``Plugins._save_config``).
- ``POST /api/<anything else>``: routed by the stand-in host (``helpers.api.dispatch``)
  to the REAL handler classes, e.g. ``plugins/a0_reranker/test_connection`` ->
  ``usr/plugins/a0_reranker/api/test_connection.py``. Each request runs its handler
  coroutine on a fresh event loop in the request's thread, as Flask's async_to_sync does.

The stand-in Agent Zero root (tests/host/harness.py) is created and activated in THIS
process, so the server runs as a child process (``start()``, or ``python -m
tests.browser.harness``) and never disturbs the sys.path, working directory or
environment of the test process. The child's environment is the place for
``A0_RERANKER_API_KEY`` (the "stored" key).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import secrets
import select
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

from tests.browser import alpine

PLUGIN_NAME = "a0_reranker"
HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
REPO_ROOT = HERE.parents[1]
READY_PREFIX = "HARNESS_READY "
START_TIMEOUT_S = 60.0

mimetypes.add_type("text/javascript", ".js")


def _inside(base: Path, rel: str) -> Path | None:
    """base/rel when it stays inside base (no ../ escapes), else None."""
    target = (base / rel).resolve()
    try:
        target.relative_to(base.resolve())
    except ValueError:
        return None
    return target


class HarnessServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, plugin_dir: Path, alpine_js: Path, port: int = 0):
        self.plugin_dir = plugin_dir
        self.alpine_js = alpine_js
        self.csrf_token = secrets.token_urlsafe(24)
        self.api_log: list[tuple[str, int]] = []
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: HarnessServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
        pass

    # --- answers ------------------------------------------------------------------------
    def _send(self, status: int, body: bytes | str, content_type: str = "text/plain; charset=utf-8") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload), "application/json")

    def _file(self, path: Path | None) -> None:
        if path is None or not path.is_file():
            self._send(404, "not found")
            return
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript",):
            kind += "; charset=utf-8"
        self._send(200, path.read_bytes(), kind)

    # --- routes -------------------------------------------------------------------------
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._file(STATIC / "index.html")
        elif path == "/api/csrf_token":
            self._json(200, {"ok": True, "token": self.server.csrf_token, "runtime_id": "harness"})
        elif path == "/favicon.ico":
            self._send(204, b"")
        elif path == "/vendor/alpine/alpine.min.js":
            self._file(self.server.alpine_js)
        elif path.startswith(f"/plugins/{PLUGIN_NAME}/webui/"):
            self._file(_inside(self.server.plugin_dir / "webui", path.split("/webui/", 1)[1]))
        elif path.startswith("/api/"):
            self._send(405, "use POST")
        else:
            self._file(_inside(STATIC, path.lstrip("/")))

    do_HEAD = do_GET

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        if not path.startswith("/api/"):
            self._send(404, "not found")
            return
        api_path = path[len("/api/") :]
        if self.headers.get("X-CSRF-Token") != self.server.csrf_token:
            self.server.api_log.append((api_path, 403))
            self._send(403, "CSRF token missing or invalid")
            return
        content_type = self.headers.get("Content-Type", "")
        try:
            status, body, kind = _dispatch(api_path, raw, content_type, dict(self.headers), self.client_address[0])
        except Exception as exc:  # a harness bug: show it, like the host's 500 text
            status, body, kind = 500, f"harness error: {type(exc).__name__}: {exc}", "text/plain; charset=utf-8"
        self.server.api_log.append((api_path, status))
        self._send(status, body, kind)


def _dispatch(api_path: str, raw: bytes, content_type: str, headers: dict, remote: str) -> tuple[int, bytes, str]:
    """The stand-in host's /api/<path> routing, on a per-request event loop."""
    from helpers.api import Request, dispatch

    request = Request(
        data=raw, method="POST", headers=headers, remote_addr=remote, content_type=content_type or "application/json"
    )
    response = asyncio.run(dispatch(api_path, request))
    mimetype = getattr(response, "mimetype", None) or "application/json"
    return response.status_code, response.get_data(), mimetype


# --- the child process ---------------------------------------------------------------------


def _warm_up() -> None:
    """Import the handlers and the plugin modules behind them before the first page asks,
    so the page's own timeouts measure the panel, not cold imports on a busy machine."""
    from helpers.api import Request, dispatch

    for handler in ("status", "test_connection"):
        asyncio.run(
            dispatch(f"plugins/{PLUGIN_NAME}/{handler}", Request({"config": {}} if handler != "status" else {}))
        )


def serve(root_dir: Path, saved_config: dict | None, alpine_js: Path, port: int = 0) -> None:
    """Create the stand-in host under root_dir, save `saved_config` as the plugin's
    config.json (raw, as if saved earlier), serve until stdin closes."""
    from tests.host.harness import host_root

    host = host_root(root_dir)
    try:
        if saved_config is not None:
            host.set_config(saved_config)
        _warm_up()
        server = HarnessServer(host.plugin_dir, alpine_js, port)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        print(READY_PREFIX + server.url, flush=True)
        try:
            while sys.stdin.read(1024):  # the parent closes stdin (or dies) to stop us
                pass
        except (KeyboardInterrupt, OSError):
            pass
        server.shutdown()
        server.server_close()
    finally:
        host.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=Path, help="folder for the temporary Agent Zero root")
    parser.add_argument("--saved-config", type=Path, help="JSON file saved as the plugin's config.json")
    parser.add_argument("--alpine", type=Path, help="alpine.min.js (default: fetched into tests/browser/.cache)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    saved = json.loads(args.saved_config.read_text()) if args.saved_config else None
    serve(args.root, saved, args.alpine or alpine.ensure(), args.port)
    return 0


# --- the parent's handle ---------------------------------------------------------------------


@dataclass
class Harness:
    url: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


@contextmanager
def start(
    work_dir: Path, saved_config: dict | None = None, env: dict[str, str] | None = None, alpine_js: Path | None = None
) -> Iterator[Harness]:
    """Run the harness in a child process; yields its URL. `env` adds to the child's
    environment (e.g. {"A0_RERANKER_API_KEY": ...}); the child's output goes to
    work_dir/harness.log."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    args = [
        sys.executable,
        "-m",
        "tests.browser.harness",
        "--root",
        str(work_dir / "root"),
        "--alpine",
        str(alpine_js or alpine.ensure()),
    ]
    if saved_config is not None:
        config_file = work_dir / "saved-config.json"
        config_file.write_text(json.dumps(saved_config))
        args += ["--saved-config", str(config_file)]
    child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    log_path = work_dir / "harness.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            args, cwd=REPO_ROOT, env=child_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
        )
    try:
        url = _wait_ready(process, log_path)
        yield Harness(url, process, log_path)
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen, log_path: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            buffer += chunk
            for line in buffer.decode(errors="replace").splitlines():
                if line.startswith(READY_PREFIX):
                    return line[len(READY_PREFIX) :].strip()
        elif process.poll() is not None:
            break
    _stop(process)
    raise RuntimeError(
        f"the browser harness did not start:\n{buffer.decode(errors='replace')}\n"
        f"{log_path.read_text(errors='replace')[-4000:]}"
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
    for stream in (process.stdin, process.stdout):
        try:
            if stream:
                stream.close()
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
