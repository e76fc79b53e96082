"""A span of history as plain text for the summarizer: all of it, long tool outputs as dense extracts.

A long output is not cut blindly to its head: the summarizer gets its first and last lines plus the
lines that carry identifiers (paths, names, errors, values), so what the summary must keep reaches it.
"""

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

from tui.chain.retention import identifier_counts
from tui.text.message_text import prompt_text as content_text

HEAD_SHARE = 0.3
TAIL_SHARE = 0.15


def cap(text: str, limit: int) -> str:
    """Head and tail of ``text`` with a note of how much was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters cut …]\n{tail}"


def dense_extract(text: str, limit: int) -> str:
    """At most about ``limit`` characters of ``text``: its first and last lines and, between them, the lines
    richest in identifiers, in their original order, with a note where lines were left out."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    if len(lines) < 8:
        return cap(text, limit)
    chosen: set[int] = set()
    used = 0

    def take(index: int) -> bool:
        nonlocal used
        cost = min(len(lines[index]), 300) + 1
        if used + cost > limit:
            return False
        chosen.add(index)
        used += cost
        return True

    head_budget, tail_budget = limit * HEAD_SHARE, limit * TAIL_SHARE
    index = 0
    while index < len(lines) and used < head_budget and take(index):
        index += 1
    tail_start = len(lines) - 1
    tail_used = 0
    while tail_start > index and tail_used < tail_budget:
        before = used
        if not take(tail_start):
            break
        tail_used += used - before
        tail_start -= 1
    middle = range(index, tail_start + 1)
    richness = dict(zip(middle, identifier_counts([lines[i] for i in middle]), strict=True))
    for candidate in sorted(middle, key=lambda i: (-richness[i], i)):
        if not richness[candidate]:
            break
        take(candidate)
    out: list[str] = []
    skipped = 0
    for number, line in enumerate(lines):
        if number in chosen:
            if skipped:
                out.append(f"[… {skipped} lines cut …]")
                skipped = 0
            out.append(line if len(line) <= 300 else line[:300] + "…")
        else:
            skipped += 1
    if skipped:
        out.append(f"[… {skipped} lines cut …]")
    return "\n".join(out)


def prompt_text(part: UserPromptPart) -> str:
    """A user prompt's text, whatever its content holds (see :mod:`tui.text.message_text`)."""
    return content_text(part.content)


def render_message(message: ModelMessage, *, tool_output_cap: int) -> list[str]:
    lines: list[str] = []
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                lines.append(f"User: {prompt_text(part)}")
            elif isinstance(part, ToolReturnPart):
                lines.append(f"Tool result {part.tool_name}: {dense_extract(part.model_response_str(), tool_output_cap)}")
            elif isinstance(part, RetryPromptPart):
                lines.append(f"Tool error {part.tool_name or ''}: {dense_extract(part.model_response(), tool_output_cap)}")
            elif isinstance(part, CompactionPart) and part.content:
                lines.append(f"Earlier summary:\n{part.content}")
    else:
        for part in message.parts:
            if isinstance(part, TextPart) and part.content.strip():
                lines.append(f"Assistant: {part.content}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"Tool call {part.tool_name}({dense_extract(part.args_as_json_str(), tool_output_cap)})")
            elif isinstance(part, ThinkingPart) and part.content.strip():
                lines.append(f"Assistant (thinking): {cap(part.content, tool_output_cap)}")
    return lines


def render_transcript(messages: Sequence[ModelMessage], *, tool_output_cap: int = 6000) -> str:
    """Every message of the span, in order."""
    return "\n".join(line for message in messages for line in render_message(message, tool_output_cap=tool_output_cap))
