"""What fills the context window, for ``/context`` (estimates: chars / 4)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from tui.agent.runtime_api import ContextBreakdown, ContextSlice
from tui.config import ContextSettings


def estimate_tokens(text: str) -> int:
    """The chain's estimate: a token per four characters, rounded up."""
    return (len(text) + 3) // 4


def _user_prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    return " ".join(item if isinstance(item, str) else f"<{type(item).__name__}>" for item in part.content)


def message_slices(messages: Iterable[ModelMessage]) -> dict[str, int]:
    """Tokens per category: user, assistant, tool calls, tool results by tool, summaries."""
    totals: dict[str, int] = defaultdict(int)
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, CompactionPart):
                    totals["summaries"] += estimate_tokens(part.content or "")
                elif isinstance(part, UserPromptPart):
                    totals["user messages"] += estimate_tokens(_user_prompt_text(part))
                elif isinstance(part, ToolReturnPart):
                    totals[f"tool results: {part.tool_name}"] += estimate_tokens(part.model_response_str())
                elif isinstance(part, RetryPromptPart):
                    totals["tool errors and retries"] += estimate_tokens(part.model_response())
                elif isinstance(part, SystemPromptPart):
                    totals["instructions and memory"] += estimate_tokens(part.content)
        elif isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, TextPart):
                    totals["assistant messages"] += estimate_tokens(part.content)
                elif isinstance(part, ThinkingPart):
                    totals["assistant thinking"] += estimate_tokens(part.content)
                elif isinstance(part, ToolCallPart):
                    totals["tool calls"] += estimate_tokens(part.tool_name + part.args_as_json_str())
    return totals


def tool_definition_tokens(tool_defs: Sequence[ToolDefinition]) -> int:
    """What the tool schemas cost in every request."""
    return sum(
        estimate_tokens(tool.name + (tool.description or "") + json.dumps(tool.parameters_json_schema))
        for tool in tool_defs
    )


def build_breakdown(
    *,
    messages: Sequence[ModelMessage],
    instructions: Sequence[str],
    tool_defs: Sequence[ToolDefinition],
    window: int,
    window_source: str,
    settings: ContextSettings,
    message_count: int,
    compressions: int,
    history_file: Path | None,
) -> ContextBreakdown:
    """The /context report: fixed costs first, then the conversation by category, largest first."""
    fixed = [
        ContextSlice("instructions and memory", sum(estimate_tokens(text) for text in instructions)),
        ContextSlice("tool definitions", tool_definition_tokens(tool_defs)),
    ]
    by_category = message_slices(messages)
    extra_instructions = by_category.pop("instructions and memory", 0)
    if extra_instructions:
        fixed[0] = ContextSlice(fixed[0].label, fixed[0].tokens + extra_instructions)
    conversation = sorted(
        (ContextSlice(label, tokens) for label, tokens in by_category.items() if tokens),
        key=lambda row: row.tokens,
        reverse=True,
    )
    history_bytes = 0
    if history_file is not None and history_file.is_file():
        history_bytes = history_file.stat().st_size
    return ContextBreakdown(
        window=window,
        window_source=window_source,
        slices=(*fixed, *conversation),
        compaction_threshold=settings.compaction_threshold,
        summarize_threshold=settings.summarize_threshold,
        message_count=message_count,
        compressions=compressions,
        history_file=history_file,
        history_bytes=history_bytes,
    )
