"""Where a history may be cut: never between a tool call and its return; the in-flight request stays."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

from tui.chain.estimate import TokenEstimator
from tui.chain.summary_message import summary_info


def _answers_tool_calls(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name)
        for part in message.parts
    )


def is_safe_cut(messages: Sequence[ModelMessage], index: int) -> bool:
    """True when ``messages[index:]`` can follow a summary on its own.

    A cut may fall before a model response, or before a request that does
    not carry tool returns; at least one message is always kept.
    """
    if not 1 <= index < len(messages):
        return False
    head = messages[index]
    if isinstance(head, ModelResponse):
        return True
    return not _answers_tool_calls(head)


def find_cut_index(messages: Sequence[ModelMessage], keep_tokens: int, estimator: TokenEstimator, *,
                   min_keep: int = 1) -> int | None:
    """``i`` such that ``messages[:i]`` is summarized and ``messages[i:]`` (≈ ``keep_tokens``) is kept.

    Prefers keeping at least ``keep_tokens``; if no safe cut exists there, it
    keeps less. ``None`` when nothing but earlier summaries could be cut.
    """
    last_allowed = len(messages) - max(1, min_keep)
    kept = 0
    boundary = last_allowed
    for index in range(len(messages) - 1, 0, -1):
        kept += estimator.message_tokens(messages[index])
        if kept >= keep_tokens:
            boundary = min(index, last_allowed)
            break
    first_real = next((i for i, message in enumerate(messages) if summary_info(message) is None), len(messages))
    candidates: list[int] = [*range(boundary, 0, -1), *range(boundary + 1, last_allowed + 1)]
    for cut in candidates:
        if cut > first_real and is_safe_cut(messages, cut):
            return cut
    return None


def tool_pairs_intact(messages: Sequence[ModelMessage]) -> bool:
    """Every tool call has its return and every return its call (what providers require)."""
    calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                calls.add(part.tool_call_id)
            elif isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name):
                if part.tool_call_id not in calls:
                    return False
                answered.add(part.tool_call_id)
    last = messages[-1] if messages else None
    pending = {p.tool_call_id for p in last.parts if isinstance(p, ToolCallPart)} if isinstance(last, ModelResponse) else set()
    return calls - answered <= pending
