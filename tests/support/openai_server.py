"""A loopback HTTP server that speaks the OpenAI chat-completions API (streaming and not).

Used to test the real-provider path without a network: it answers every
request with a scripted reply, records the requests it received, and binds to
127.0.0.1 on a free port.
"""

from __future__ import annotations

import io
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """How the server fails one request (see :func:`fail_with`); fields combine as documented."""

    status: int | None = None
    """Answer with this HTTP status and a JSON error body (e.g. 500, 429)."""
    retry_after: str | None = None
    """A ``Retry-After`` header to send with ``status``."""
    hang: bool = False
    """Send nothing until the server shuts down (or ``ChatServerState.hang_cap`` passes)."""
    chunks_before: int | None = None
    """Stream this many chunks of the reply first, then ``hang`` or ``reset`` (mid-answer), or just stop."""
    reset: bool = False
    """Drop the connection with a TCP reset (before anything, or after ``chunks_before`` chunks)."""


@dataclass(frozen=True)
class Reply:
    """One streamed answer decided by ``ChatServerState.responder``: text, or tool calls (several in one response)."""

    text: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    """``(id, name, JSON arguments)`` each."""


@dataclass
class ChatServerState:
    reply: str = "Hello from the loopback server."
    prompt_tokens: int = 1234
    requests: list[dict[str, Any]] = field(default_factory=list)
    chunks_per_second: float | None = None
    """Pace the streamed chunks at this rate (``None``: as fast as the socket takes them)."""
    content_chunks: list[str] | None = None
    """Streamed verbatim, one content delta each, instead of ``reply`` split on spaces (control
    characters, lone surrogates: ``json.dumps`` escapes them, the client decodes them back)."""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    """Scripted tool calls ``(id, name, JSON arguments)``: each streamed request takes the next one
    (answered with that call instead of text) until none are left."""
    faults: list[Fault] = field(default_factory=list)
    """Faults for the next requests, oldest first: each request takes one; when empty, requests succeed."""
    request_times: list[float] = field(default_factory=list)
    """``time.monotonic()`` at the arrival of each request (including failed ones), in order."""
    hang_cap: float = 30.0
    """The longest a hanging request hangs, so no test can hang forever."""
    released: threading.Event = field(default_factory=threading.Event)
    """Set when the server shuts down: every hang ends."""
    authorizations: list[str] = field(default_factory=list)
    """The ``Authorization`` header of every POST, to any path, in order (where a key went)."""
    paths: list[str] = field(default_factory=list)
    """The path of every POST received, served or not, in order."""
    responses_as_chat: bool = False
    """Quirk of many chat-only proxies: answer ``/responses`` (OpenAI's Responses API) as if it were
    ``/chat/completions``. Otherwise ``/responses`` gets a 404 page."""
    usage_prompt_tokens: int | None = None
    """Report this many prompt tokens instead of ``prompt_tokens`` (a provider's usage beyond reason)."""
    count_prompt: Callable[[dict[str, Any]], int] | None = None
    """Report what this returns for each request body as its prompt tokens (a provider's own count), instead of
    ``prompt_tokens``."""
    responder: Callable[[dict[str, Any]], Reply | None] | None = None
    """Decides each streamed reply from its request (called in the server's thread for that request, so several
    requests can be answered at once): a :class:`Reply`, or ``None`` for the usual script."""
    error_body: str | None = None
    """With a ``Fault.status``: the error message to send instead of "loopback fault <status>" (a 401 that
    echoes the key it was sent: ``"{key}"`` is replaced with the request's bearer token)."""
    keep_alive: bool = False
    """Answer in HTTP/1.1 and keep the connection open for the next request, as real providers do (a streamed
    answer is then sent whole, with its length): the client's pool holds a live connection until it closes."""


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _stream_scripted_reply(out: Any, state: ChatServerState, model: str, payload: dict[str, Any]) -> str:
    """Write the reply's deltas: the responder's reply, the next scripted tool call, else the content; returns the
    finish reason."""
    reply = state.responder(payload) if state.responder is not None else None
    if reply is not None:
        if reply.tool_calls:
            calls = [{"index": index, "id": call_id, "type": "function",
                      "function": {"name": name, "arguments": arguments}}
                     for index, (call_id, name, arguments) in enumerate(reply.tool_calls)]
            out.write(_chunk(model, {"tool_calls": calls}))
            return "tool_calls"
        out.write(_chunk(model, {"content": reply.text}))
        return "stop"
    if state.tool_calls:
        call_id, name, arguments = state.tool_calls.pop(0)
        call = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        out.write(_chunk(model, {"tool_calls": [call]}))
        return "tool_calls"
    pieces = state.content_chunks if state.content_chunks is not None else [w + " " for w in state.reply.split(" ")]
    start = time.perf_counter()
    for number, piece in enumerate(pieces):
        if state.chunks_per_second:
            ahead = start + number / state.chunks_per_second - time.perf_counter()
            if ahead > 0.002:
                time.sleep(ahead)
        out.write(_chunk(model, {"content": piece}))
        out.flush()
    return "stop"


def _make_handler(state: ChatServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        protocol_version = "HTTP/1.1" if state.keep_alive else "HTTP/1.0"

        def _stream(self, state: ChatServerState, model: str, usage: dict[str, int], payload: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            out: Any = io.BytesIO() if state.keep_alive else self.wfile
            if not state.keep_alive:
                self.end_headers()
            out.write(_chunk(model, {"role": "assistant", "content": ""}))
            finish = _stream_scripted_reply(out, state, model, payload)
            out.write(_chunk(model, {}, finish=finish))
            tail = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": model, "choices": [], "usage": usage}
            out.write(f"data: {json.dumps(tail)}\n\n".encode())
            out.write(b"data: [DONE]\n\n")
            if state.keep_alive:
                self.send_header("Content-Length", str(len(out.getvalue())))
                self.end_headers()
                self.wfile.write(out.getvalue())

        def do_POST(self) -> None:
            state.authorizations.append(self.headers.get("Authorization", ""))
            state.paths.append(self.path)
            if state.responses_as_chat and self.path.endswith("/responses"):
                self.path = self.path.removesuffix("/responses") + "/chat/completions"
            if not self.path.endswith("/chat/completions"):
                self.send_error(404, "only /chat/completions is served here")
                return
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(payload)
            state.request_times.append(time.monotonic())
            model = payload.get("model", "loopback")
            if state.faults and _apply_fault(self, state, state.faults.pop(0), model):
                return
            prompt_tokens = state.prompt_tokens if state.usage_prompt_tokens is None else state.usage_prompt_tokens
            if state.count_prompt is not None:
                prompt_tokens = state.count_prompt(payload)
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7}
            if payload.get("stream"):
                try:
                    self._stream(state, model, usage, payload)
                except (BrokenPipeError, ConnectionResetError):  # the client went away mid-answer (a test's kill)
                    self.close_connection = True
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
        server_state.released.set()
        server.shutdown()
        server.server_close()


def fail_with(state: ChatServerState, *faults: Fault) -> None:
    """Queue ``faults`` for the next requests (one each); later requests are answered normally."""
    state.faults.extend(faults)


def _apply_fault(handler: BaseHTTPRequestHandler, state: ChatServerState, fault: Fault, model: str) -> bool:
    """Fail this request as ``fault`` says; False when the fault leaves the normal answer to follow."""
    if fault.status is not None:
        message = f"loopback fault {fault.status}"
        if state.error_body is not None:
            key = handler.headers.get("Authorization", "").removeprefix("Bearer ")
            message = state.error_body.replace("{key}", key)
        body = json.dumps({"error": {"message": message, "type": "server_error", "code": None}}).encode()
        handler.send_response(fault.status)
        if fault.retry_after is not None:
            handler.send_header("Retry-After", fault.retry_after)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True
    if fault.chunks_before is not None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(_chunk(model, {"role": "assistant", "content": ""}))
        for word in state.reply.split(" ")[: fault.chunks_before]:
            handler.wfile.write(_chunk(model, {"content": word + " "}))
        handler.wfile.flush()
    if fault.reset:
        _reset(handler)
        return True
    if fault.hang:
        state.released.wait(state.hang_cap)
        handler.close_connection = True
        return True
    return fault.chunks_before is not None  # chunks, then a clean end without the rest


def _reset(handler: BaseHTTPRequestHandler) -> None:
    """Close the socket with SO_LINGER 0: the client sees a connection reset, not a clean end."""
    connection = handler.connection
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
    handler.close_connection = True
