"""The chain as a pydantic-ai capability: the per-request hooks of :class:`~tui.chain.manager.ContextManager`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext

if TYPE_CHECKING:
    from tui.chain.manager import ContextManager


@dataclass
class ContextCapability(AbstractCapability[Any]):
    """Runs the chain before every model request and learns from every response (see :class:`ContextManager`)."""

    manager: ContextManager

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext
                                   ) -> ModelRequestContext:
        return await self.manager.before_request(ctx, request_context)

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                  response: ModelResponse) -> ModelResponse:
        await self.manager.after_response(request_context, response)
        return response
