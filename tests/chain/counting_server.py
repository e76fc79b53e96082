"""A loopback OpenAI chat-completions server that plays a coding agent and measures every request.

It counts each request the way the over-window reports measured them — characters / 4 of the
messages plus the tool definitions as sent — reports that figure as the provider's ``prompt_tokens``,
and answers like an agent: a prompt ``read PATH`` or ``grep PATTERN`` gets that tool call, a tool
result gets a short answer quoting what it saw, anything else a short chat answer.
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


def request_tokens(payload: dict[str, Any]) -> int:
    """What a request carries: characters / 4 of its messages and tool definitions as sent."""
    return (len(json.dumps(payload.get("messages", []))) + len(json.dumps(payload.get("tools", [])))) // 4


@dataclass
class CountingState:
    sizes: list[int] = field(default_factory=list)
    """``request_tokens`` of every request received, in order."""
    calls: int = 0


def _reply(payload: dict[str, Any], state: CountingState) -> dict[str, Any]:
    messages = payload.get("messages", [])
    last = messages[-1] if messages else {}
    state.calls += 1
    if last.get("role") == "tool":
        content = str(last.get("content", ""))
        first = next((line for line in content.splitlines() if line.strip()), "")[:120]
        return {"role": "assistant", "content": f"I read it; it starts with: {first}"}
    text = str(last.get("content", "")) if last.get("role") == "user" else ""
    verb, _, argument = text.strip().partition(" ")
    if verb in ("read", "grep") and argument:
        name, args = ("read_file", {"path": argument}) if verb == "read" else ("grep", {"pattern": argument})
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{state.calls:04d}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}]}
    return {"role": "assistant", "content": f"Noted: {text[:200]}"}


def _handler(state: CountingState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            size = request_tokens(payload)
            state.sizes.append(size)
            message = _reply(payload, state)
            body = {
                "id": f"chatcmpl-{state.calls}", "object": "chat.completion", "created": int(time.time()),
                "model": payload.get("model", "counting"),
                "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                             "message": message}],
                "usage": {"prompt_tokens": size, "completion_tokens": 20, "total_tokens": size + 20},
            }
            if payload.get("stream"):
                self._stream(body, message)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta: dict[str, Any] = {"role": "assistant"}
            if message.get("tool_calls"):
                delta["tool_calls"] = [{"index": 0, **call} for call in message["tool_calls"]]
            else:
                delta["content"] = message["content"]
            chunk = {**body, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": body["choices"][0]["finish_reason"]}]}
            del chunk["usage"]
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            tail = {**body, "object": "chat.completion.chunk", "choices": []}
            self.wfile.write(f"data: {json.dumps(tail)}\n\ndata: [DONE]\n\n".encode())

    return Handler


@contextmanager
def counting_server() -> Iterator[tuple[str, CountingState]]:
    """Run the server on 127.0.0.1; yields ``(base_url, state)``."""
    state = CountingState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
