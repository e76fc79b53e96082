"""A loopback HTTP server that speaks the OpenAI chat-completions API (streaming and not).

Used to test the real-provider path without a network: it answers every
request with a scripted reply, records the requests it received, and binds to
127.0.0.1 on a free port.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ChatServerState:
    reply: str = "Hello from the loopback server."
    prompt_tokens: int = 1234
    requests: list[dict[str, Any]] = field(default_factory=list)
    reply_chunks: list[str] | None = None
    """Stream exactly these content chunks (instead of ``reply`` split at spaces)."""
    chunks_per_second: float | None = None
    """Pace the streamed chunks at this rate (``None``: as fast as the socket takes them)."""


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _make_handler(state: ChatServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            return

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            if not self.path.endswith("/chat/completions"):
                self.send_error(404, "only /chat/completions is served here")
                return
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(payload)
            model = payload.get("model", "loopback")
            usage = {"prompt_tokens": state.prompt_tokens, "completion_tokens": 7,
                     "total_tokens": state.prompt_tokens + 7}
            if payload.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(_chunk(model, {"role": "assistant", "content": ""}))
                chunks = state.reply_chunks if state.reply_chunks is not None \
                    else [word + " " for word in state.reply.split(" ")]
                start = time.perf_counter()
                for number, content in enumerate(chunks):
                    if state.chunks_per_second:
                        ahead = start + number / state.chunks_per_second - time.perf_counter()
                        if ahead > 0.002:
                            time.sleep(ahead)
                    self.wfile.write(_chunk(model, {"content": content}))
                    self.wfile.flush()
                self.wfile.write(_chunk(model, {}, finish="stop"))
                tail = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk",
                        "created": int(time.time()), "model": model, "choices": [], "usage": usage}
                self.wfile.write(f"data: {json.dumps(tail)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                return
            body = {
                "id": "chatcmpl-loopback", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": state.reply}}],
                "usage": usage,
            }
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def openai_chat_server(state: ChatServerState | None = None) -> Iterator[tuple[str, ChatServerState]]:
    """Run the server on 127.0.0.1; yields ``(base_url, state)``."""
    server_state = state or ChatServerState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(server_state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server_state
    finally:
        server.shutdown()
        server.server_close()
