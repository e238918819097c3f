"""Stand-in for helpers/api.py: the ApiHandler base class and the request handling the
host wraps around it. The real module exposes flask's Request/Response; Flask is not
installed in the test venv, so small compatible classes are used when it is missing."""
import json
import threading
from abc import abstractmethod
from typing import Any, Dict, Union

from helpers import cache, files
from helpers.errors import format_error
from helpers.print_style import PrintStyle

try:  # pragma: no cover - depends on the environment
    from flask import Flask, Request, Response

    _HAVE_FLASK = True
except ImportError:  # the stand-in's minimal replacements
    _HAVE_FLASK = False

    class Flask:  # type: ignore[no-redef]
        """Placeholder for the app object handlers receive (unused by handlers)."""

    class Request:  # type: ignore[no-redef]
        """The attributes of flask.Request that handlers and the host read."""

        def __init__(self, json_body: Any = None, *, data: bytes | None = None,
                     method: str = "POST", headers: dict | None = None,
                     remote_addr: str = "127.0.0.1", content_type: str | None = None,
                     form: dict | None = None, files: dict | None = None,
                     cookies: dict | None = None, args: dict | None = None):
            if data is None and json_body is not None:
                data = json.dumps(json_body).encode()
            self.data = data or b""
            self.method = method
            self.headers = dict(headers or {})
            self.content_type = content_type or ("application/json" if json_body is not None else "")
            self.remote_addr = remote_addr
            self.form = dict(form or {})
            self.files = dict(files or {})
            self.cookies = dict(cookies or {})
            self.args = dict(args or {})

        @property
        def is_json(self) -> bool:
            ct = (self.content_type or "").split(";")[0].strip().lower()
            return ct == "application/json" or (ct.startswith("application/") and ct.endswith("+json"))

        def get_json(self, silent: bool = False):
            try:
                return json.loads(self.data.decode() or "null")
            except Exception:
                if silent:
                    return None
                raise

        @property
        def json(self):
            return self.get_json()

    class Response:  # type: ignore[no-redef]
        """The parts of flask.Response a handler builds and a test reads."""

        def __init__(self, response: Any = None, status: int | None = None,
                     headers: dict | None = None, mimetype: str | None = None,
                     content_type: str | None = None):
            if isinstance(response, str):
                response = response.encode()
            self.response = response if response is not None else b""
            self.status_code = int(status or 200)
            self.headers = dict(headers or {})
            self.mimetype = mimetype or (content_type or "text/html").split(";")[0]

        @property
        def status(self) -> str:
            return str(self.status_code)

        def get_data(self, as_text: bool = False):
            body = self.response if isinstance(self.response, bytes) else b"".join(self.response)
            return body.decode() if as_text else body

        @property
        def data(self) -> bytes:
            return self.get_data()

        def get_json(self):
            return json.loads(self.get_data(as_text=True))

        @property
        def json(self):
            return self.get_json()


def make_request(json_body: Any = None, *, method: str = "POST", remote_addr: str = "127.0.0.1",
                 headers: dict | None = None) -> Request:
    """Stand-in only: a JSON request as a browser would send it (flask's when installed)."""
    if _HAVE_FLASK:  # pragma: no cover
        from werkzeug.test import EnvironBuilder

        environ = EnvironBuilder(method=method, json=json_body, headers=headers,
                                 environ_base={"REMOTE_ADDR": remote_addr}).get_environ()
        return Request(environ)
    return Request(json_body, method=method, remote_addr=remote_addr, headers=headers)


ThreadLockType = Union[threading.Lock, threading.RLock]

CACHE_AREA = "api_handlers(api)"

Input = dict
Output = Union[Dict[str, Any], Response]


class ApiHandler:
    def __init__(self, app: Flask, thread_lock: ThreadLockType):
        self.app = app
        self.thread_lock = thread_lock

    @classmethod
    def requires_loopback(cls) -> bool:
        return False

    @classmethod
    def requires_api_key(cls) -> bool:
        return False

    @classmethod
    def requires_auth(cls) -> bool:
        return True

    @classmethod
    def get_methods(cls) -> list[str]:
        return ["POST"]

    @classmethod
    def requires_csrf(cls) -> bool:
        return cls.requires_auth()

    @abstractmethod
    async def process(self, input: Input, request: Request) -> Output:
        pass

    async def handle_request(self, request: Request) -> Response:
        """JSON body -> input (else {}); dict output -> 200 JSON; any exception -> 500
        text/plain with the formatted error."""
        try:
            payload: Input = {}
            if request.is_json:
                try:
                    if request.data:
                        payload = request.get_json()
                except Exception as e:
                    PrintStyle().print(f"Error parsing JSON: {e}")
                    payload = {}
            output = await self.process(payload, request)
            if isinstance(output, Response):
                return output
            return Response(response=json.dumps(output), status=200, mimetype="application/json")
        except Exception as e:
            error = format_error(e)
            PrintStyle.error(f"API error: {error}")
            return Response(response=error, status=500, mimetype="text/plain")

    def use_context(self, ctxid: str, create_if_not_exists: bool = True):
        from agent import AgentContext

        context = AgentContext.use(ctxid) if ctxid else None
        if context is None and create_if_not_exists:
            import initialize

            context = AgentContext(config=initialize.initialize_agent(), id=ctxid or None,
                                   set_current=True)
        return context


def resolve_handler(path: str) -> type[ApiHandler] | None:
    """The lookup of register_api_route: api/<path>.py first, then
    plugins/<plugin>/<handler> -> <plugin dir>/api/<handler>.py."""
    from pathlib import Path

    from helpers import plugins
    from helpers.modules import load_classes_from_file

    cached = cache.get(CACHE_AREA, path)
    if cached is not None:
        return cached
    handler_cls = None
    builtin = files.get_abs_path(f"api/{path}.py")
    if files.is_in_dir(builtin, files.get_abs_path("api")) and files.exists(builtin):
        classes = load_classes_from_file(builtin, ApiHandler)
        handler_cls = classes[0] if classes else None
    if handler_cls is None and path.startswith("plugins/"):
        parts = path.split("/", 2)
        if len(parts) == 3:
            plugin_dir = plugins.find_plugin_dir(parts[1])
            if plugin_dir:
                candidate = Path(plugin_dir) / "api" / f"{parts[2]}.py"
                if candidate.is_file():
                    classes = load_classes_from_file(str(candidate), ApiHandler)
                    handler_cls = classes[0] if classes else None
    if handler_cls is not None:
        cache.add(CACHE_AREA, path, handler_cls)
    return handler_cls


async def dispatch(path: str, request: Request, app: Any = None,
                   lock: ThreadLockType | None = None) -> Response:
    """What /api/<path> does in the host, minus Flask: 404 for an unknown path, 405 for a
    wrong method, 403 for a non-loopback caller when requires_loopback(). Login and CSRF
    checks pass as for a logged-in browser session with no credentials configured;
    requires_api_key() handlers need X-API-KEY (or api_key) equal to mcp_server_token."""
    handler_cls = resolve_handler(path)
    if handler_cls is None:
        return Response(f"API endpoint not found: {path}", 404)
    if request.method not in handler_cls.get_methods():
        return Response(f"Method {request.method} not allowed for: {path}", 405)
    if handler_cls.requires_loopback() and request.remote_addr not in ("127.0.0.1", "::1", "localhost"):
        return Response("Access denied.", 403, {})
    if handler_cls.requires_api_key():
        from helpers.settings import get_settings

        token = get_settings()["mcp_server_token"]
        sent = request.headers.get("X-API-KEY") or ((request.get_json(silent=True) or {}).get("api_key")
                                                    if request.is_json else None)
        if not sent:
            return Response("API key required", 401)
        if sent != token:
            return Response("Invalid API key", 401)
    handler = handler_cls(app, lock or threading.RLock())
    return await handler.handle_request(request=request)
