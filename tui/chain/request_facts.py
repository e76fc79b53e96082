"""Facts about a model request the chain needs: the calibration key of its model, whether it reads images, its ``max_tokens``, the
instruction texts it carries, its tools' vocabulary."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from tui.chain.accounting import request_instructions
from tui.chain.estimate import tool_definitions_key
from tui.chain.image_tokens import known_image_rule


def model_key(model: Model | None) -> str:
    """The name calibration is kept under: ``provider:model``."""
    if model is None:
        return "unknown"
    return f"{model.system}:{model.model_name}"


def takes_images(model: Model | None) -> bool:
    """Whether ``model`` is sent a prompt's images as image content: when deep-tui knows its family's rule for
    image tokens (:func:`~tui.chain.image_tokens.known_image_rule`: OpenAI's vision models, Claude, Gemini) and
    its pydantic-ai profile does not say it takes none (``supports_image_input``). The offline model and any
    model deep-tui does not know (a local model behind ``--base-url``) are told in text that there was an image,
    rather than sent bytes a provider may refuse and fail the turn over."""
    if model is None or known_image_rule(model_key(model)) is None:
        return False
    return bool(model.profile.get("supports_image_input", True))


def max_tokens_setting(settings: ModelSettings | None) -> int | None:
    """The request's ``max_tokens`` setting, when it sets a positive one."""
    value = (settings or {}).get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None


def instruction_texts(request_context: ModelRequestContext) -> list[str]:
    """The instruction texts a request carries (its instruction parts, else its history's instructions)."""
    parts = request_context.model_request_parameters.instruction_parts
    if parts:
        return [part.content for part in parts if part.content]
    instructions = request_instructions(request_context.messages)
    return [instructions] if instructions else []


def tool_vocabulary(tools: Sequence[ToolDefinition]) -> frozenset[str]:
    """The tools' names and their arguments' names, lower-cased (the retention check leaves them out)."""
    names: set[str] = set()
    for tool in tools:
        names.add(tool.name.lower())
        properties = tool.parameters_json_schema.get("properties")
        if isinstance(properties, dict):
            names.update(str(name).lower() for name in properties)
    return frozenset(names)


class ToolVocabularyCache:
    """:func:`tool_vocabulary` of a request's tools, worked out again only when the tools changed (by value: a
    request brings new definitions of the same tools)."""

    def __init__(self) -> None:
        self._last: tuple[list[tuple[str, str | None, dict[str, Any]]], frozenset[str]] | None = None

    def __call__(self, tools: Sequence[ToolDefinition]) -> frozenset[str]:
        key = tool_definitions_key(tools)
        if self._last is None or self._last[0] != key:
            self._last = (copy.deepcopy(key), tool_vocabulary(tools))  # a schema edited in place is a new one
        return self._last[1]
