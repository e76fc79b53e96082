"""A span of history as plain text for the summarizer: all of it, tool outputs capped."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)


def cap(text: str, limit: int) -> str:
    """Head and tail of ``text`` with a note of how much was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters cut …]\n{tail}"


def prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    return " ".join(item if isinstance(item, str) else f"<{type(item).__name__}>" for item in part.content)


def render_message(message: ModelMessage, *, tool_output_cap: int) -> list[str]:
    lines: list[str] = []
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                lines.append(f"User: {prompt_text(part)}")
            elif isinstance(part, ToolReturnPart):
                lines.append(f"Tool result {part.tool_name}: {cap(part.model_response_str(), tool_output_cap)}")
            elif isinstance(part, RetryPromptPart):
                lines.append(f"Tool error {part.tool_name or ''}: {cap(part.model_response(), tool_output_cap)}")
            elif isinstance(part, CompactionPart) and part.content:
                lines.append(f"Earlier summary:\n{part.content}")
    else:
        for part in message.parts:
            if isinstance(part, TextPart) and part.content.strip():
                lines.append(f"Assistant: {part.content}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"Tool call {part.tool_name}({cap(part.args_as_json_str(), tool_output_cap)})")
            elif isinstance(part, ThinkingPart) and part.content.strip():
                lines.append(f"Assistant (thinking): {cap(part.content, tool_output_cap)}")
    return lines


def render_transcript(messages: Sequence[ModelMessage], *, tool_output_cap: int = 2000) -> str:
    """Every message of the span, in order."""
    return "\n".join(line for message in messages for line in render_message(message, tool_output_cap=tool_output_cap))
