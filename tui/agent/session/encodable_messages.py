"""A model's response made writable: lone surrogates replaced before anything records, sends or runs it.

A provider can stream a lone surrogate (``\\ud800``, from a JSON ``\\ud800`` escape). Python holds it
happily, but it cannot be encoded as UTF-8: recording messages.json, the next request to the provider
and printing the answer would all fail, and the partial answer would be lost. The response is
repaired once, as it arrives (``U+FFFD`` in place of each surrogate), so it is recorded and the turn
carries on.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext

from tui.text.terminal_text import encodable

logger = logging.getLogger(__name__)


def encodable_value(value: Any) -> Any:
    """``value`` with every string inside it made encodable; the same object when nothing needed it.

    Walks strings, lists, tuples, dicts and dataclasses (message parts); other values are kept as they are.
    """
    if isinstance(value, str):
        repaired = encodable(value)
        return value if repaired == value else repaired
    if isinstance(value, list):
        items = [encodable_value(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, tuple):
        items = [encodable_value(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else type(value)(items)
    if isinstance(value, dict):
        pairs = {encodable_value(key): encodable_value(item) for key, item in value.items()}
        same = len(pairs) == len(value) and all(pairs.get(key) is item for key, item in value.items())
        return value if same else pairs
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {field.name: new for field in dataclasses.fields(value)
                   if (new := encodable_value(old := getattr(value, field.name))) is not old}
        if not changes:
            return value
        repaired = copy.copy(value)
        for name, new in changes.items():
            object.__setattr__(repaired, name, new)
        return repaired
    return value


@dataclasses.dataclass
class EncodableResponses(AbstractCapability[Any]):
    """Replaces lone surrogates in every model response before the run records it or runs its tool calls."""

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                  response: ModelResponse) -> ModelResponse:
        repaired: object = encodable_value(response)
        if repaired is response:
            return response
        logger.warning("the model's response held lone surrogates (not valid Unicode); replaced with U+FFFD")
        assert isinstance(repaired, ModelResponse)
        return repaired
