"""Facts about a model request the chain needs: the calibration key of its model, its ``max_tokens``, the
instruction texts it carries."""

from __future__ import annotations

from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.settings import ModelSettings

from tui.chain.accounting import request_instructions


def model_key(model: Model | None) -> str:
    """The name calibration is kept under: ``provider:model``."""
    if model is None:
        return "unknown"
    return f"{model.system}:{model.model_name}"


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
