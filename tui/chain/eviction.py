"""Tier 1 (reversible): a tool output over ``large_result_tokens`` is saved whole and replaced by a preview."""

from __future__ import annotations

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

from tui.chain.estimate import text_tokens
from tui.chain.events import ChainEvent, EvictedEvent
from tui.chain.safe_names import write_output
from tui.metadata_keys import EVICTED_PATH_KEY, EVICTION_ERROR_KEY, SAVED_CHARS_KEY

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
    lines = text.splitlines()
    if len(lines) > HEAD_LINES + TAIL_LINES:
        omitted = len(lines) - HEAD_LINES - TAIL_LINES
        body = "\n".join([*lines[:HEAD_LINES], f"[… {omitted} lines omitted …]", *lines[-TAIL_LINES:]])
    else:
        body = text
    if len(body) > PREVIEW_CHAR_CAP:
        body = body[: PREVIEW_CHAR_CAP * 2 // 3] + "\n[…]\n" + body[-PREVIEW_CHAR_CAP // 3:]
    size = f"{len(text):,} characters, {len(lines):,} lines, about {text_tokens(text):,} tokens"
    if path is not None:
        where = (f"The whole output of {tool_name} ({size}) was saved to {path}. Read it with "
                 f"read_file(path={path!r}, offset=0, limit=400) and page on with a higher offset.")
    else:
        where = f"The output of {tool_name} ({size}) was too large for the context and could not be saved: {error}."
    return f"[{where}]\n{body}"


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
        try:
            path = str(write_output(self.large_results_dir, call.tool_call_id, serialized.data, serialized.suffix))
        except (OSError, ValueError) as failure:
            error = f"{type(failure).__name__}: {failure}"
        size = len(serialized.data.encode("utf-8")) if isinstance(serialized.data, str) else len(serialized.data)
        self.emit(EvictedEvent(tool_name=call.tool_name, tool_call_id=call.tool_call_id, path=path or "",
                               tokens=tokens, size_bytes=size, error=error, args=call.args_as_json_str()))
        preview = build_preview(serialized.text, path=path, tool_name=call.tool_name, error=error)
        metadata: dict[str, Any] = ({EVICTED_PATH_KEY: path, SAVED_CHARS_KEY: len(serialized.text)} if path
                                    else {EVICTION_ERROR_KEY: error})
        return ToolReturn(return_value=preview, metadata=metadata)
