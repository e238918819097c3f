"""An OpenAI-compatible chat-completions server on loopback, answering like a chat model.

What LiteLLM's ``openai`` provider (Agent Zero's utility model, models.py) sends and reads:
``POST /v1/chat/completions`` with ``{"model", "messages", "stream"?}``; a non-streaming
answer is one ``chat.completion`` object, a streaming one Server-Sent Events of
``chat.completion.chunk`` deltas ending in ``data: [DONE]`` (the host streams when it has a
callback). ``answer(system, user) -> str`` decides the text; every request is recorded.
``refuse=401`` (or any status) answers every chat request with OpenAI's error object instead,
its message quoting the Authorization header back, as providers' errors quote what was sent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Answer = Callable[[str, str], str]


class ChatServer:
    def __init__(self, answer: Answer, model: str = "judge-model", refuse: int | None = None):
        self.answer = answer
        self.model = model
        self.refuse = refuse
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - stdlib signature
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                with server._lock:
                    server.requests.append(body)
                if server.refuse is not None:
                    sent = self.headers.get("authorization") or ""
                    message = f"Incorrect API key provided: {sent.removeprefix('Bearer ')}"
                    error = {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}
                    return self._send(server.refuse, {"error": error})
                messages = body.get("messages") or []
                system = "".join(_text(m) for m in messages if m.get("role") == "system")
                user = "".join(_text(m) for m in messages if m.get("role") == "user")
                text = server.answer(system, user)
                if body.get("stream"):
                    return self._stream(text, body.get("model") or server.model)
                return self._send(
                    200,
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model") or server.model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {
                            "prompt_tokens": (len(system) + len(user)) // 4,
                            "completion_tokens": len(text) // 4,
                            "total_tokens": (len(system) + len(user) + len(text)) // 4,
                        },
                    },
                )

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str, model: str) -> None:
                pieces = [text[i : i + 7] for i in range(0, len(text), 7)] or [""]
                events = []
                for n, piece in enumerate(pieces):
                    delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
                    events.append(
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion.chunk",
                            "created": int(time.time()),
                            "model": model,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                        }
                    )
                events.append(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    }
                )
                data = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.api_base = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-chat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ChatServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):  # [{"type": "text", "text": ...}]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
