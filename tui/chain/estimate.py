"""Token estimates of a request as it is serialized: a token per four characters of the JSON a provider
receives (quotes, escapes, roles, tool-call framing and doubly encoded arguments included), cached per
message object.

Plain text is cheaper than its serialized form — ``"a\\nb"`` travels as six characters, a tool call's
arguments are a JSON string inside JSON, every message carries a role and ids — so counting message text
alone runs about a tenth below what a provider counts. :class:`~tui.chain.calibration.TokenCalibration`
then scales these estimates to the provider's own figures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    ModelMessage,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from tui.base.image_header import read_image_header
from tui.chain.image_tokens import FALLBACK_RULE, ImageTokens

CHARS_PER_TOKEN = 4
MESSAGE_FRAMING_CHARS = 32
"""``{"role": "assistant", "content": …}``: what each part adds around its text."""
TOOL_CALL_FRAMING_CHARS = 130
"""``{"role": "assistant", "content": null, "tool_calls": [{"id": …, "type": "function", "function": {"name": …,
"arguments": …}}]}`` (the message around a call is counted with each call: conservative for parallel calls)."""
TOOL_RETURN_FRAMING_CHARS = 52
"""``{"role": "tool", "tool_call_id": …, "content": …}``."""
TOOL_DEFINITION_FRAMING_CHARS = 80
BINARY_TOKENS = 1_000
"""Audio, documents and an image whose header cannot be read: a flat guess (providers bill them differently).
An image is counted by the provider's rule from its size in pixels (:mod:`tui.chain.image_tokens`)."""


def text_tokens(text: str) -> int:
    """Raw text at four characters a token (for sizes shown to people and the agent)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _quoted(text: str) -> int:
    """Characters ``text`` takes as a JSON string (quotes and escapes; non-ASCII as ``\\uXXXX``): what
    ``json.dumps(text)`` returns, from the C encoder it calls, without its two Python calls around it."""
    return len(encode_basestring_ascii(text))


def _chars_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def binary_tokens(item: BinaryContent, image_tokens: ImageTokens = FALLBACK_RULE.tokens) -> int:
    """An image by ``image_tokens`` (the model's rule) from the size its header states; anything else a flat
    guess."""
    if item.is_image and (header := read_image_header(item.data)) is not None:
        return image_tokens(header.width, header.height)
    return BINARY_TOKENS


def part_tokens(part: object, image_tokens: ImageTokens = FALLBACK_RULE.tokens) -> int:
    """Serialized-size estimate of one message part (its images by ``image_tokens``, the model's rule)."""
    if isinstance(part, (TextPart, ThinkingPart, SystemPromptPart)):
        return _chars_tokens(_quoted(part.content) + MESSAGE_FRAMING_CHARS)
    if isinstance(part, CompactionPart):
        return _chars_tokens(_quoted(part.content or "") + MESSAGE_FRAMING_CHARS)
    if isinstance(part, ToolCallPart):
        chars = _quoted(part.args_as_json_str()) + len(part.tool_name) + len(part.tool_call_id)
        return _chars_tokens(chars + TOOL_CALL_FRAMING_CHARS)
    if isinstance(part, ToolReturnPart):
        chars = _quoted(part.model_response_str()) + len(part.tool_call_id)
        return _chars_tokens(chars + TOOL_RETURN_FRAMING_CHARS)
    if isinstance(part, RetryPromptPart):
        chars = _quoted(part.model_response()) + len(part.tool_call_id)
        return _chars_tokens(chars + TOOL_RETURN_FRAMING_CHARS)
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return _chars_tokens(_quoted(part.content) + MESSAGE_FRAMING_CHARS)
        tokens = _chars_tokens(MESSAGE_FRAMING_CHARS)
        for item in part.content:
            if isinstance(item, BinaryContent):
                tokens += binary_tokens(item, image_tokens)
            elif isinstance(item, str):
                tokens += _chars_tokens(_quoted(item) + 16)
            else:
                content = getattr(item, "content", None)
                tokens += _chars_tokens(_quoted(content if isinstance(content, str) else str(item)) + 16)
        return tokens
    return 0


def message_tokens_uncached(message: ModelMessage, image_tokens: ImageTokens = FALLBACK_RULE.tokens) -> int:
    """Serialized-size estimate of one message."""
    return sum(part_tokens(part, image_tokens) for part in message.parts)


def instructions_tokens(instructions: Sequence[str]) -> int:
    """System instructions as sent: one system message per part."""
    return sum(_chars_tokens(_quoted(text) + MESSAGE_FRAMING_CHARS) for text in instructions if text)


def tool_definitions_key(tools: Sequence[ToolDefinition]) -> list[tuple[str, str | None, dict[str, Any]]]:
    """What a request's tool definitions are to a cache of their cost or vocabulary: each one's name, description
    and JSON schema, compared by value (pydantic-ai builds new definitions, and may copy the schemas, for every
    request); a cache keeps a deep copy of the key it computed for, so a schema edited in place is a change."""
    return [(tool.name, tool.description, tool.parameters_json_schema) for tool in tools]


def tool_definition_tokens(tools: Sequence[ToolDefinition]) -> int:
    """Tool schemas as sent with every request: name, description and the JSON schema."""
    chars = 0
    for tool in tools:
        chars += (_quoted(tool.name) + _quoted(tool.description or "")
                  + len(json.dumps(tool.parameters_json_schema)) + TOOL_DEFINITION_FRAMING_CHARS)
    return _chars_tokens(chars)


class TokenEstimator:
    """Serialized-size estimate per message, computed once per message object (messages are immutable
    in practice)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[ModelMessage, int]] = {}
        self.image_tokens: ImageTokens = FALLBACK_RULE.tokens
        """How the model in use counts an image (see :meth:`use_image_rule`)."""

    def use_image_rule(self, image_tokens: ImageTokens) -> None:
        """Count images by ``image_tokens`` from now on (another model); the cached figures are dropped."""
        if image_tokens is not self.image_tokens:
            self.image_tokens = image_tokens
            self._cache.clear()

    @staticmethod
    def text_tokens(text: str) -> int:
        return text_tokens(text)

    def message_tokens(self, message: ModelMessage) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = message_tokens_uncached(message, self.image_tokens)
        self._cache[id(message)] = (message, tokens)
        return tokens

    def total(self, messages: Sequence[ModelMessage]) -> int:
        return sum(self.message_tokens(message) for message in messages)

    def forget(self, message: ModelMessage) -> None:
        self._cache.pop(id(message), None)
