"""What to tell the user when even the fallback cannot fit a request: which part is too big."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from tui.chain.budget import WindowBudget
from tui.chain.cut_points import is_safe_cut
from tui.chain.estimate import message_tokens_uncached


def _smallest_tail(messages: Sequence[ModelMessage]) -> Sequence[ModelMessage]:
    for cut in range(len(messages) - 1, 0, -1):
        if is_safe_cut(messages, cut):
            return messages[cut:]
    return messages


def describe_overflow(messages: Sequence[ModelMessage], *, tokens: int, fixed_tokens: int, budget: WindowBudget,
                      ratio: float) -> str:
    """One sentence: the request's size, the limit, and the largest thing that must stay in it."""
    head = (f"the request needs about {tokens:,} tokens but at most {budget.limit:,} fit (window {budget.window:,}, "
            f"{budget.reserve:,} kept for the answer), even after removing every earlier message")
    culprits: list[tuple[int, str]] = [
        (fixed_tokens, f"the instructions, MEMORY.md and tool definitions take about {fixed_tokens:,} tokens — "
                       "shorten MEMORY.md or use a model with a larger window"),
    ]
    for message in _smallest_tail(messages):
        if isinstance(message, ModelResponse):
            for call in message.parts:
                if isinstance(call, ToolCallPart):
                    size = math.ceil(ratio * message_tokens_uncached(ModelResponse(parts=[call])))
                    culprits.append((size, f"the arguments of a {call.tool_name} call take about {size:,} tokens"))
            continue
        for part in message.parts:
            size = math.ceil(ratio * message_tokens_uncached(ModelRequest(parts=[part])))
            if isinstance(part, ToolReturnPart):
                culprits.append((size, f"the output of {part.tool_name} takes about {size:,} tokens — ask for a "
                                       "smaller part of it (a narrower read or search)"))
            elif isinstance(part, UserPromptPart):
                culprits.append((size, f"the prompt takes about {size:,} tokens — shorten the prompt"))
    size, why = max(culprits, key=lambda culprit: culprit[0])
    return f"{head}: {why}"
