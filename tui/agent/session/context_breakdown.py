"""What fills the context window, for ``/context``: the chain's own estimates (serialized sizes, calibrated
to the provider), so the report and the gauge agree."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic_ai.messages import (
    BinaryContent,
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
from tui.base.config import ContextSettings
from tui.chain.budget import WindowBudget
from tui.chain.estimate import binary_tokens, instructions_tokens, part_tokens, tool_definition_tokens
from tui.chain.image_tokens import FALLBACK_RULE, ImageTokens

PROJECT_INSTRUCTIONS_LABEL = "project instructions"
TASK_STATE_LABEL = "task state (todos, /keep)"
IMAGES_LABEL = "images"


def _category(part: object) -> str | None:
    if isinstance(part, CompactionPart):
        return "summaries"
    if isinstance(part, UserPromptPart):
        return "user messages"
    if isinstance(part, ToolReturnPart):
        return f"tool results: {part.tool_name}"
    if isinstance(part, RetryPromptPart):
        return "tool errors and retries"
    if isinstance(part, SystemPromptPart):
        return "instructions and memory"
    if isinstance(part, TextPart):
        return "assistant messages"
    if isinstance(part, ThinkingPart):
        return "assistant thinking"
    if isinstance(part, ToolCallPart):
        return "tool calls"
    return None


def message_slices(messages: Iterable[ModelMessage], ratio: float = 1.0,
                   image_tokens: ImageTokens = FALLBACK_RULE.tokens) -> dict[str, int]:
    """Tokens per category: user, assistant, tool calls, tool results by tool, summaries; a prompt's images
    apart (by ``image_tokens``, the model's rule)."""
    totals: dict[str, float] = defaultdict(float)
    for message in messages:
        if isinstance(message, (ModelRequest, ModelResponse)):
            for part in message.parts:
                category = _category(part)
                if category is None:
                    continue
                tokens = part_tokens(part, image_tokens)
                if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                    images = sum(binary_tokens(item, image_tokens) for item in part.content
                                 if isinstance(item, BinaryContent) and item.is_image)
                    totals[IMAGES_LABEL] += images * ratio
                    tokens -= images
                totals[category] += tokens * ratio
    return {label: math.ceil(tokens) for label, tokens in totals.items()}


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
    budget: WindowBudget | None = None,
    ratio: float = 1.0,
    project_instructions: str = "",
    project_files: Sequence[Path] = (),
    task_state: str = "",
    image_tokens: ImageTokens = FALLBACK_RULE.tokens,
) -> ContextBreakdown:
    """The /context report: fixed costs first, then the conversation by category, largest first.
    ``project_instructions``: the text the project's AGENTS.md / CLAUDE.md files add (its own row), read from
    ``project_files``; ``task_state``: the todo list and standing instructions section (its own row)."""
    fixed = [
        ContextSlice("instructions and memory", math.ceil(instructions_tokens(instructions) * ratio)),
        ContextSlice("tool definitions", math.ceil(tool_definition_tokens(tool_defs) * ratio)),
    ]
    if project_instructions:
        fixed.insert(1, ContextSlice(PROJECT_INSTRUCTIONS_LABEL,
                                     math.ceil(instructions_tokens([project_instructions]) * ratio)))
    if task_state:
        fixed.insert(1, ContextSlice(TASK_STATE_LABEL, math.ceil(instructions_tokens([task_state]) * ratio)))
    by_category = message_slices(messages, ratio, image_tokens)
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
    budget = budget or WindowBudget.for_window(window, settings)
    return ContextBreakdown(
        window=window,
        window_source=window_source,
        slices=(*fixed, *conversation),
        compaction_threshold=settings.compaction_threshold,
        summarize_threshold=settings.summarize_threshold,
        auto_compact=settings.auto_compact,
        message_count=message_count,
        compressions=compressions,
        history_file=history_file,
        history_bytes=history_bytes,
        reserve=budget.reserve,
        margin=budget.margin,
        calibration=ratio,
        project_files=tuple(project_files),
    )
