"""The chain as a pydantic-ai capability: a request's two hooks, given by whoever runs the chain.

The capability knows only :class:`RequestHooks` (the manager is one), so this module and
:mod:`tui.chain.manager` do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext


class RequestHooks(Protocol):
    """What the chain does around one model request (:class:`~tui.chain.manager.ContextManager`)."""

    async def before_request(self, ctx: RunContext[Any], request_context: ModelRequestContext
                             ) -> ModelRequestContext:
        """Record, count and compact the history; returns the request to send."""
        ...

    async def after_response(self, request_context: ModelRequestContext, response: ModelResponse) -> None:
        """Learn from the provider's count of the request and report the usage."""
        ...


@dataclass
class ContextCapability(AbstractCapability[Any]):
    """Runs the chain before every model request and learns from every response."""

    hooks: RequestHooks

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext
                                   ) -> ModelRequestContext:
        return await self.hooks.before_request(ctx, request_context)

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                  response: ModelResponse) -> ModelResponse:
        await self.hooks.after_response(request_context, response)
        return response
