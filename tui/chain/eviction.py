"""Tier 1 (reversible): a tool output over ``large_result_tokens`` is saved whole and replaced by a preview."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import RunContext, ToolReturn
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import BinaryContent, ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.base.metadata_keys import EVICTED_PATH_KEY, EVICTION_ERROR_KEY, SAVED_CHARS_KEY
from tui.chain.estimate import text_tokens
from tui.chain.events import ChainEvent, EvictedEvent
from tui.chain.safe_names import write_output

HEAD_LINES = 20
TAIL_LINES = 10
PREVIEW_CHAR_CAP = 3_000


@dataclass(frozen=True)
class SerializedOutput:
    text: str
    data: bytes | str
    suffix: str


def serialize_output(result: Any) -> SerializedOutput | None:
    """How a tool result is saved: text as is, structured data as JSON; ``None`` for binary content
    (never stringified; it stays as the tool returned it)."""
    if isinstance(result, str):
        return SerializedOutput(result, result, ".txt")
    if isinstance(result, (BinaryContent, bytes, bytearray, ToolReturn)):
        return None
    if isinstance(result, BaseModel):
        text = result.model_dump_json(indent=2)
        return SerializedOutput(text, text, ".json")
    try:
        text = json.dumps(result, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        text = str(result)
        return SerializedOutput(text, text, ".txt")
    return SerializedOutput(text, text, ".json")


def build_preview(text: str, *, path: str | None, tool_name: str, error: str | None = None) -> str:
    """Head and tail lines (capped in characters), the size, and how to read the rest back."""
    head, tail, line_count = _head_and_tail(text)
    if line_count > HEAD_LINES + TAIL_LINES:
        omitted = line_count - HEAD_LINES - TAIL_LINES
        body = "\n".join([*head, f"[… {omitted} lines omitted …]", *tail])
    else:
        body = text
    if len(body) > PREVIEW_CHAR_CAP:
        body = body[: PREVIEW_CHAR_CAP * 2 // 3] + "\n[…]\n" + body[-PREVIEW_CHAR_CAP // 3:]
    size = f"{len(text):,} characters, {line_count:,} lines, about {text_tokens(text):,} tokens"
    if path is not None:
        where = (f"The whole output of {tool_name} ({size}) was saved to {path}. Read it with "
                 f"read_file(path={path!r}, offset=0, limit=400) and page on with a higher offset.")
    else:
        where = f"The output of {tool_name} ({size}) was too large for the context and could not be saved: {error}."
    return f"[{where}]\n{body}"


_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Line breaks ``str.splitlines`` knows besides ``\n`` (looked for one by one: ``in`` is a fast scan, a regex
character class is not)."""


def _head_and_tail(text: str) -> tuple[list[str], list[str], int]:
    """``text.splitlines()``'s first :data:`HEAD_LINES`, last :data:`TAIL_LINES` and count — without splitting all of
    a large output (megabytes of command output): only ``\n`` ends its lines in the common case."""
    if any(brk in text for brk in _OTHER_LINE_BREAKS):
        lines = text.splitlines()
        return lines[:HEAD_LINES], lines[-TAIL_LINES:], len(lines)
    count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    head_end = -1  # the newline ending the last head line (found from the start: nothing else is split or copied)
    for _ in range(HEAD_LINES):
        head_end = text.find("\n", head_end + 1)
        if head_end < 0:
            break
    head = (text[:head_end] if head_end >= 0 else text).split("\n")[:HEAD_LINES]
    stop = len(text) - 1 if text.endswith("\n") else len(text)
    start, end = 0, stop
    for _ in range(TAIL_LINES):  # the tail's first line starts after the TAIL_LINES-th newline from the end
        found = text.rfind("\n", 0, end)
        if found < 0:
            start = 0
            break
        start, end = found + 1, found
    tail = text[start:stop].split("\n")
    return head, tail, count


ENCODE_SLICE_CHARS = 1_000_000
"""A large output is encoded this many characters at a time: the thread saving it lets go of the GIL between
slices, so the app's thread (drawing the command's last lines) never waits for the whole encoding."""


def _save(directory: Path, tool_call_id: str, serialized: SerializedOutput) -> tuple[str, int]:
    """Write the output whole (encoded once: it can be megabytes); its path and size in bytes."""
    data = serialized.data
    payload = _utf8(data) if isinstance(data, str) else data
    return str(write_output(directory, tool_call_id, payload, serialized.suffix)), len(payload)


def _utf8(text: str) -> bytes:
    """``text.encode("utf-8")`` (the same bytes: UTF-8 encodes each character on its own), slice by slice."""
    if len(text) <= ENCODE_SLICE_CHARS:
        return text.encode("utf-8")
    return b"".join(text[start:start + ENCODE_SLICE_CHARS].encode("utf-8")
                    for start in range(0, len(text), ENCODE_SLICE_CHARS))


@dataclass
class EvictionCapability(AbstractCapability[Any]):
    """Runs after each tool: large outputs go to ``large_results_dir`` before they enter the history."""

    large_results_dir: Path
    large_result_tokens: int
    emit: Callable[[ChainEvent], None]

    async def after_tool_execute(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                 args: Any, result: Any) -> Any:
        serialized = serialize_output(result)
        if serialized is None:
            return result
        tokens = text_tokens(serialized.text)
        if tokens <= self.large_result_tokens:
            return result
        path: str | None = None
        error: str | None = None
        try:  # in a thread: the app keeps drawing (a command's last lines) while megabytes are written
            path, size = await asyncio.to_thread(_save, self.large_results_dir, call.tool_call_id, serialized)
        except (OSError, ValueError) as failure:  # a lone surrogate cannot be encoded: a ValueError too
            error = f"{type(failure).__name__}: {failure}"
            size = len(str(serialized.data).encode("utf-8", "surrogatepass"))
        self.emit(EvictedEvent(tool_name=call.tool_name, tool_call_id=call.tool_call_id, path=path or "",
                               tokens=tokens, size_bytes=size, error=error, args=call.args_as_json_str()))
        preview = build_preview(serialized.text, path=path, tool_name=call.tool_name, error=error)
        metadata: dict[str, Any] = ({EVICTED_PATH_KEY: path, SAVED_CHARS_KEY: len(serialized.text)} if path
                                    else {EVICTION_ERROR_KEY: error})
        return ToolReturn(return_value=preview, metadata=metadata)
