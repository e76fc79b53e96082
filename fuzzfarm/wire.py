"""The farm's truth: how big a request is, as a provider would count it.

A request is rendered as an OpenAI chat-completions payload (system instructions, user, assistant with
tool calls, tool results) plus the tool definitions; its size is characters / 4 of that JSON, scaled by the
session's disagreement factor (a provider's tokenizer is not the chain's estimate). Written independently
of ``tui.chain.estimate`` on purpose: it is what the chain is measured against.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition


def _user_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    return " ".join(item if isinstance(item, str) else str(item) for item in part.content)


def _message_entries(message: ModelMessage) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                wire.append({"role": "system", "content": part.content})
            elif isinstance(part, UserPromptPart):
                wire.append({"role": "user", "content": _user_text(part)})
            elif isinstance(part, CompactionPart):
                wire.append({"role": "user", "content": part.content or ""})
            elif isinstance(part, ToolReturnPart):
                wire.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response_str()})
            elif isinstance(part, RetryPromptPart):
                wire.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()})
    elif isinstance(message, ModelResponse):
        text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
        calls = [{"id": p.tool_call_id, "type": "function",
                  "function": {"name": p.tool_name, "arguments": p.args_as_json_str()}}
                 for p in message.parts if isinstance(p, ToolCallPart)]
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            entry["tool_calls"] = calls
        wire.append(entry)
    return wire


def payload(messages: Sequence[ModelMessage], instructions: str | None,
            tools: Sequence[ToolDefinition]) -> dict[str, Any]:
    """The request as an OpenAI-compatible server would receive it."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for message in messages:
        wire.extend(_message_entries(message))
    tool_defs = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.parameters_json_schema}} for t in tools]
    return {"messages": wire, "tools": tool_defs}


class RequestMeter:
    """Counts requests like :func:`request_size`, remembering each message's serialized length (a message
    object is not changed once sent; a compaction makes new ones), so a request costs O(new messages)."""

    def __init__(self, disagreement: float) -> None:
        self.disagreement = disagreement
        self._entries: dict[int, tuple[ModelMessage, int, int]] = {}
        self._tools: tuple[tuple[str, ...], int] | None = None

    def _message(self, message: ModelMessage) -> tuple[int, int]:
        """(entries, characters of their JSON) of one message."""
        hit = self._entries.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1], hit[2]
        entries = _message_entries(message)
        chars = sum(len(json.dumps(entry)) for entry in entries)
        self._entries[id(message)] = (message, len(entries), chars)
        return len(entries), chars

    def size(self, messages: Sequence[ModelMessage], instructions: str | None,
             tools: Sequence[ToolDefinition]) -> int:
        count, chars = 0, 0
        if instructions:
            count, chars = 1, len(json.dumps({"role": "system", "content": instructions}))
        for message in messages:
            entries, length = self._message(message)
            count += entries
            chars += length
        chars += 2 + 2 * max(0, count - 1)  # "[", "]" and ", " between entries, as json.dumps writes a list
        names = tuple(t.name for t in tools)
        if self._tools is None or self._tools[0] != names:
            self._tools = (names, len(json.dumps(payload([], None, tools)["tools"])))
        return math.ceil((chars + self._tools[1]) / 4 * self.disagreement)


def request_size(messages: Sequence[ModelMessage], instructions: str | None, tools: Sequence[ToolDefinition],
                 disagreement: float) -> int:
    """Tokens the provider counts for this request: characters / 4 of the payload × ``disagreement``."""
    body = payload(messages, instructions, tools)
    chars = len(json.dumps(body["messages"])) + len(json.dumps(body["tools"]))
    return math.ceil(chars / 4 * disagreement)
