"""A stdio MCP server: its process, and its messages read in linear time and bounded in size.

The MCP SDK's own stdio client joins what it has buffered with each new chunk of the server's stdout and splits
the whole again, so one 50 MB line costs time quadratic in its size, on the event loop: pings time out
meanwhile and the server is declared dead. Here (:class:`LineReader`) each chunk is scanned once, a line's
pieces are joined once, and a line longer than :data:`MAX_MESSAGE_BYTES` is skipped as it streams, keeping
only its first and last bytes to find which request it answers: that request gets a short error result saying
how large the answer was, and the server stays up. A large message is parsed in a worker thread, so the event
loop (the app's frames, the pings) keeps running meanwhile.

Imported through :mod:`tui.agent.mcp.client`, which prepares fastmcp's settings before fastmcp loads.

The process starts in a session of its own; closing the transport closes its stdin, waits
:data:`STOP_GRACE` seconds, then terminates and at last kills its process group: no server outlives deep-tui.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types
from fastmcp.client.transports.base import ClientTransport, SessionKwargs, TransportOptions
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from typing_extensions import Unpack

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 32_000_000
"""The largest message read from a server (a tool's result with its JSON envelope); a larger one is skipped."""
THREAD_PARSE_BYTES = 1_000_000
"""A message at least this large is parsed in a worker thread, off the event loop."""
EDGE_BYTES = 4096
"""How much of a skipped message's start and end is kept, to find the id of the request it answers."""
STOP_GRACE = 2.0
"""Seconds a server has to exit once its stdin is closed, then again after SIGTERM, before SIGKILL."""
_POLL = 0.02

_ID_FIRST = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
"""A response whose id comes first (after ``jsonrpc``), as every SDK writes it."""
_ID_LAST = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')
"""… or last."""


@dataclass(frozen=True)
class Oversized:
    """A line longer than the cap: its size, and its first and last :data:`EDGE_BYTES` bytes."""

    size: int
    head: bytes
    tail: bytes


class LineReader:
    """Splits a byte stream into lines (``\\n``-separated) in time linear in its size; a line over ``cap`` bytes is
    dropped as it streams and comes out as :class:`Oversized`."""

    def __init__(self, cap: int = MAX_MESSAGE_BYTES) -> None:
        self.cap = cap
        self._parts: list[bytes] = []
        self._size = 0
        self._over: Oversized | None = None

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines ``chunk`` completes (without their newline)."""
        lines: list[bytes | Oversized] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            lines.append(self._take())
            start = end + 1
        self._add(chunk[start:])
        return lines

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._over is not None:
            self._over = Oversized(self._size, self._over.head, (self._over.tail + piece)[-EDGE_BYTES:])
        elif self._size > self.cap:
            joined = b"".join(self._parts) + piece  # once per oversized line: never more than the cap
            self._over = Oversized(self._size, joined[:EDGE_BYTES], joined[-EDGE_BYTES:])
            self._parts = []
        else:
            self._parts.append(piece)

    def _take(self) -> bytes | Oversized:
        line: bytes | Oversized = self._over if self._over is not None else b"".join(self._parts)
        self._parts, self._size, self._over = [], 0, None
        return line


def answered_id(line: Oversized) -> int | str | None:
    """The id of the request a skipped message answers, when its start or its end names it."""
    for pattern, edge in ((_ID_FIRST, line.head), (_ID_LAST, line.tail)):
        if (match := pattern.search(edge)) is not None:
            with contextlib.suppress(ValueError):
                value = json.loads(match.group(1))
                if isinstance(value, (int, str)):
                    return value
    return None


def too_large_answer(line: Oversized, cap: int) -> SessionMessage | None:
    """In place of a skipped message: an error result for the request it answers (``None``: no id found)."""
    request_id = answered_id(line)
    if request_id is None:
        logger.warning("an MCP server sent a %s message that answers no request deep-tui can find: skipped",
                       _megabytes(line.size))
        return None
    text = (f"The MCP server's answer was {_megabytes(line.size)}, more than the {_megabytes(cap)} deep-tui reads "
            "from an MCP server, so it was not read. Ask the tool for less (a narrower query, a page, a limit).")
    result = {"content": [{"type": "text", "text": text}], "isError": True, "resultType": "complete"}
    return SessionMessage(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _parse(line: bytes) -> mcp_types.JSONRPCMessage:
    return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)


async def read_message(line: bytes | Oversized, cap: int) -> SessionMessage | Exception | None:
    """The message one line carries (an ``Exception`` for one that is not JSON-RPC: the session reports it)."""
    if isinstance(line, Oversized):
        return too_large_answer(line, cap)
    if not line.strip():
        return None
    try:
        if len(line) >= THREAD_PARSE_BYTES:
            message = await anyio.to_thread.run_sync(_parse, line)
        else:
            message = _parse(line)
    except ValueError as error:  # pydantic's ValidationError, invalid JSON or UTF-8
        logger.warning("an MCP server sent a message that is not JSON-RPC (%d bytes): skipped", len(line))
        return error
    return SessionMessage(message)


class BoundedStdioTransport(ClientTransport):
    """fastmcp's transport contract for a server on stdin/stdout, read by :class:`LineReader` (see the module)."""

    def __init__(self, command: str, args: Sequence[str], *, env: dict[str, str], cwd: str, stderr: TextIO | int,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        """``env``: the server's whole environment; ``stderr``: where its stderr goes (a file or
        ``subprocess.DEVNULL``, never the terminal)."""
        self.command = command
        self.args = list(args)
        self.env = env
        self.cwd = cwd
        self.stderr = stderr
        self.max_message_bytes = max_message_bytes

    @contextlib.asynccontextmanager
    async def connect_session(self, *, transport_options: TransportOptions | None = None,
                              **session_kwargs: Unpack[SessionKwargs]) -> AsyncGenerator[ClientSession, None]:
        options = transport_options or TransportOptions()
        async with server_streams(self) as (incoming, outgoing), \
                options.session_class(incoming, outgoing, **session_kwargs) as session:
            yield session

    def __repr__(self) -> str:
        return f"<BoundedStdioTransport {self.command!r}>"


@contextlib.asynccontextmanager
async def server_streams(transport: BoundedStdioTransport) -> AsyncGenerator[tuple[Any, Any], None]:
    """Start the server; yield the session's two streams (messages in, messages out); stop it on exit."""
    process = await anyio.open_process([transport.command, *transport.args], env=transport.env, cwd=transport.cwd,
                                       stderr=transport.stderr, start_new_session=True)
    incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        reader = LineReader(transport.max_message_bytes)
        delivering = True
        async with incoming_writer:  # closed when stdout ends: the session sees the server gone
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                                     OSError):
                async for chunk in process.stdout:
                    for line in reader.feed(chunk):
                        message = await read_message(line, transport.max_message_bytes)
                        if message is None or not delivering:
                            continue  # after the session closed, still read: a server blocked on a full pipe
                        try:  # could not exit
                            await incoming_writer.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            delivering = False

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with outgoing_reader:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for message in outgoing_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):  # even when cancelled: no server process is left behind
                outgoing.close()
                incoming.close()
                await stop_process(process)
            tasks.cancel_scope.cancel()


async def stop_process(process: anyio.abc.Process) -> None:
    """Close the server's stdin, then SIGTERM and SIGKILL its process group, each after :data:`STOP_GRACE`."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for sent in (None, signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        if sent is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                _signal_group(process, sent)
        with anyio.move_on_after(STOP_GRACE):
            while process.returncode is None:  # not process.wait(): it also waits for the pipes a child may hold
                await anyio.sleep(_POLL)
        if process.returncode is not None:
            break
    else:
        logger.warning("MCP server process %d is still alive after SIGKILL: abandoned", process.pid)
    with anyio.move_on_after(STOP_GRACE), contextlib.suppress(OSError, anyio.BrokenResourceError,
                                                             anyio.ClosedResourceError):
        await process.aclose()  # its pipes and transport (bounded: a child may still hold a pipe)


def _signal_group(process: anyio.abc.Process, sent: signal.Signals) -> None:
    """``sent`` to the server's process group (its own session: the server and what it started)."""
    if hasattr(os, "killpg"):
        os.killpg(process.pid, sent)
    elif sent == signal.SIGTERM:  # Windows: no process groups to signal
        process.terminate()
    else:
        process.kill()
