"""Token estimates (a token per four characters), cached per message object."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

PART_OVERHEAD_TOKENS = 4
BINARY_TOKENS = 1_000
"""Images, audio and documents: a flat guess (providers bill them differently)."""


def text_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _part_tokens(part: object) -> int:
    if isinstance(part, (TextPart, ThinkingPart, SystemPromptPart)):
        return text_tokens(part.content)
    if isinstance(part, CompactionPart):
        return text_tokens(part.content or "")
    if isinstance(part, ToolCallPart):
        return text_tokens(part.tool_name) + text_tokens(part.args_as_json_str())
    if isinstance(part, ToolReturnPart):
        return text_tokens(part.model_response_str())
    if isinstance(part, RetryPromptPart):
        return text_tokens(part.model_response())
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return text_tokens(part.content)
        return sum(BINARY_TOKENS if isinstance(item, BinaryContent) else text_tokens(str(item))
                   for item in part.content)
    return 0


def message_tokens_uncached(message: ModelMessage) -> int:
    return sum(_part_tokens(part) + PART_OVERHEAD_TOKENS for part in message.parts)


class TokenEstimator:
    """chars/4 per message, computed once per message object (messages are immutable in practice)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[ModelMessage, int]] = {}

    @staticmethod
    def text_tokens(text: str) -> int:
        return text_tokens(text)

    def message_tokens(self, message: ModelMessage) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = message_tokens_uncached(message)
        self._cache[id(message)] = (message, tokens)
        return tokens

    def total(self, messages: Sequence[ModelMessage]) -> int:
        return sum(self.message_tokens(message) for message in messages)

    def forget(self, message: ModelMessage) -> None:
        self._cache.pop(id(message), None)


def is_request(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest)
