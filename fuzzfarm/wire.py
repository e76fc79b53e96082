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


def payload(messages: Sequence[ModelMessage], instructions: str | None,
            tools: Sequence[ToolDefinition]) -> dict[str, Any]:
    """The request as an OpenAI-compatible server would receive it."""
    wire: list[dict[str, Any]] = []
    if instructions:
        wire.append({"role": "system", "content": instructions})
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    wire.append({"role": "system", "content": part.content})
                elif isinstance(part, UserPromptPart):
                    wire.append({"role": "user", "content": _user_text(part)})
                elif isinstance(part, CompactionPart):
                    wire.append({"role": "user", "content": part.content or ""})
                elif isinstance(part, ToolReturnPart):
                    wire.append({"role": "tool", "tool_call_id": part.tool_call_id,
                                 "content": part.model_response_str()})
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
    tool_defs = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.parameters_json_schema}} for t in tools]
    return {"messages": wire, "tools": tool_defs}


def request_size(messages: Sequence[ModelMessage], instructions: str | None, tools: Sequence[ToolDefinition],
                 disagreement: float) -> int:
    """Tokens the provider counts for this request: characters / 4 of the payload × ``disagreement``."""
    body = payload(messages, instructions, tools)
    chars = len(json.dumps(body["messages"])) + len(json.dumps(body["tools"]))
    return math.ceil(chars / 4 * disagreement)
