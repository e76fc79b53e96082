"""A loopback HTTP server that speaks enough of Anthropic's Messages API for deep-tui's real provider path.

``POST /v1/messages`` (streamed or not) answers with the next scripted reply — a list of content blocks
(text, tool_use) — and ``POST /v1/messages/count_tokens`` with a count. Like the real API, a request
carrying a text block that is empty or whitespace only is refused with HTTP 400 ("text content blocks
must contain non-whitespace text"); a request whose ``x-api-key`` is not :attr:`AnthropicServerState.api_key`
gets a 401 whose body echoes the key it was sent (as some gateways do). Every request body is recorded.
Point ``ANTHROPIC_BASE_URL`` at the URL :func:`anthropic_server` yields.
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

Block = dict[str, Any]


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def tool_use_block(call_id: str, name: str, arguments: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


@dataclass
class AnthropicServerState:
    replies: list[list[Block]] = field(default_factory=list)
    """Scripted replies, oldest first; when none are left, :attr:`default_reply` is sent."""
    default_reply: str = "Hello from the loopback Claude."
    api_key: str | None = None
    """When set, any other ``x-api-key`` gets the 401 that echoes it."""
    input_tokens: int | None = None
    """The usage reported for each answer (default: a quarter of the request body's bytes)."""
    messages_requests: list[dict[str, Any]] = field(default_factory=list)
    count_requests: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """The error message of every request answered with a 4xx."""


def _whitespace_text_blocks(payload: dict[str, Any]) -> bool:
    for message in payload.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text" and not str(block.get("text", "")).strip():
                    return True
    system = payload.get("system")
    return isinstance(system, list) and any(
        isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text", "")).strip() for b in system)


def _sse(handler: BaseHTTPRequestHandler, event: str, data: dict[str, Any]) -> None:
    handler.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())


def _make_handler(state: AnthropicServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, kind: str, message: str) -> None:
            state.refused.append(message)
            self._json(status, {"type": "error", "error": {"type": kind, "message": message}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length) or b"{}"
            payload = json.loads(raw)
            bearer = self.headers.get("Authorization", "")
            key = self.headers.get("x-api-key") or bearer.removeprefix("Bearer ")
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                state.count_requests.append(payload)
            elif path.endswith("/messages"):
                state.messages_requests.append(payload)
            else:
                self._error(404, "not_found_error", f"no route {path}")
                return
            if state.api_key is not None and key != state.api_key:
                self._error(401, "authentication_error", f"invalid x-api-key: {key}")
                return
            if _whitespace_text_blocks(payload):
                self._error(400, "invalid_request_error", "messages: text content blocks must contain non-whitespace text")
                return
            input_tokens = state.input_tokens if state.input_tokens is not None else max(1, len(raw) // 4)
            if path.endswith("/count_tokens"):
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            blocks = state.replies.pop(0) if state.replies else [text_block(state.default_reply)]
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            usage = {"input_tokens": input_tokens, "output_tokens": 7}
            model = payload.get("model", "claude-loopback")
            if not payload.get("stream"):
                self._json(200, {"id": "msg_loopback", "type": "message", "role": "assistant", "model": model,
                                 "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            _sse(self, "message_start", {"type": "message_start", "message": {
                "id": "msg_loopback", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})
            for index, block in enumerate(blocks):
                if block["type"] == "text":
                    _sse(self, "content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}})
                    _sse(self, "content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": block["text"]}})
                else:
                    _sse(self, "content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {**block, "input": {}}})
                    _sse(self, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
                _sse(self, "content_block_stop", {"type": "content_block_stop", "index": index})
            _sse(self, "message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 7}})
            _sse(self, "message_stop", {"type": "message_stop"})
            self.wfile.flush()

    return Handler


@contextmanager
def anthropic_server(state: AnthropicServerState | None = None) -> Iterator[tuple[str, AnthropicServerState]]:
    """Run the server on 127.0.0.1; yields ``(base_url, state)`` (``ANTHROPIC_BASE_URL`` takes the URL)."""
    server_state = state or AnthropicServerState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(server_state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server_state
    finally:
        server.shutdown()
        server.server_close()
        time.sleep(0)
