"""Tokens a request will carry: the provider's count for the last response plus calibrated estimates of
what came after, or a calibrated estimate of the whole request as it will be serialized."""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.tools import ToolDefinition

from tui.chain.calibration import TokenCalibration
from tui.chain.estimate import TokenEstimator, instructions_tokens, tool_definition_tokens, tool_definitions_key
from tui.chain.usage_sanity import unbelievable_usage

TokenCounter = Callable[[Sequence[ModelMessage]], int | Awaitable[int]]
"""A replacement for the estimate: counts the tokens of a message list (sync or async)."""


class TokenAccountant:
    """Counts what a request will carry, in O(messages since the last response).

    Anchored on the input tokens a provider reported for the newest response (when no compaction
    changed the context since), plus estimates of that response and everything after it; without an
    anchor, an estimate of every message plus the instructions and tool definitions. Estimates are
    serialized sizes (see :mod:`tui.chain.estimate`) scaled by the model's calibration ratio.
    """

    def __init__(self, estimator: TokenEstimator, token_counter: TokenCounter | None = None, *,
                 calibration: TokenCalibration | None = None, model_name: str = "", window: int | None = None) -> None:
        """``window``: the context window, beyond which a provider's count is not believed (see
        :mod:`tui.chain.usage_sanity`)."""
        self.estimator = estimator
        self.window = window
        self.token_counter = token_counter
        self.calibration = calibration or TokenCalibration(None)
        self.model_name = model_name
        self._stale: dict[int, ModelResponse] = {}
        self._instruction_cost: tuple[list[str], int] | None = None
        """The last instruction texts counted and their cost (the same texts come, as new strings, every request)."""
        self._tool_cost: tuple[list[tuple[str, str | None, dict[str, Any]]], int] | None = None
        """The last tool definitions counted (:func:`~tui.chain.estimate.tool_definitions_key`) and their cost."""
        self._prefix: tuple[int, ModelMessage, int] | None = None
        """(length, last message, estimated total) of the last list summed, to extend in O(new)."""

    @property
    def ratio(self) -> float:
        """Provider-counted tokens per estimated token for this model (1.0 until measured)."""
        return self.calibration.ratio(self.model_name)

    def scaled(self, raw_tokens: int) -> int:
        """A raw estimate in the provider's tokens."""
        return math.ceil(raw_tokens * self.ratio)

    def invalidate(self, messages: Sequence[ModelMessage]) -> None:
        """After a compaction, responses seen so far no longer describe the context size."""
        self._prefix = None
        for message in messages:
            if isinstance(message, ModelResponse):
                self._stale[id(message)] = message

    def fixed_tokens(self, instructions: Sequence[str], tools: Sequence[ToolDefinition]) -> int:
        """Instructions (incl. memory) and tool definitions as sent with every request (raw estimate).

        Each is counted again only when it changed: the texts and the definitions are compared by value with
        the last ones counted (equal strings compare at memory speed; encoding them again costs far more)."""
        texts = list(instructions)
        if self._instruction_cost is None or self._instruction_cost[0] != texts:
            self._instruction_cost = (texts, instructions_tokens(texts))
        key = tool_definitions_key(tools)
        if self._tool_cost is None or self._tool_cost[0] != key:
            self._tool_cost = (copy.deepcopy(key), tool_definition_tokens(tools))  # a schema edited in place is new
        return self._instruction_cost[1] + self._tool_cost[1]

    def _anchor(self, messages: Sequence[ModelMessage]) -> int | None:
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, ModelResponse):
                fresh = id(message) not in self._stale or self._stale[id(message)] is not message
                # Only a real provider's count is an anchor; local/function models report guesses.
                reported = (bool(message.provider_name) and message.usage.input_tokens > 0
                            and unbelievable_usage(message.usage, self.window) is None)
                return index if fresh and reported else None
        return None

    async def count(self, messages: Sequence[ModelMessage], fixed_tokens: int) -> int:
        """Tokens the next request will carry, in the provider's tokens."""
        if self.token_counter is not None:
            counted = self.token_counter(messages)
            if inspect.isawaitable(counted):
                counted = await counted
            return int(counted) + self.scaled(fixed_tokens)
        anchor = self._anchor(messages)
        if anchor is None:
            return self.scaled(self.running_total(messages) + fixed_tokens)
        response = messages[anchor]
        assert isinstance(response, ModelResponse)
        return response.usage.input_tokens + self.scaled(self.estimator.total(messages[anchor:]))

    def running_total(self, messages: Sequence[ModelMessage]) -> int:
        """Raw estimated total, extending the previous sum when ``messages`` only grew since."""
        prefix = self._prefix
        if prefix is not None and len(messages) >= prefix[0] > 0 and messages[prefix[0] - 1] is prefix[1]:
            total = prefix[2] + self.estimator.total(messages[prefix[0]:])
        else:
            total = self.estimator.total(messages)
        if messages:
            self._prefix = (len(messages), messages[-1], total)
        return total

    def raw(self, messages: Sequence[ModelMessage], fixed_tokens: int) -> int:
        """Uncalibrated estimate of a request (what calibration compares the provider's count with)."""
        return self.running_total(messages) + fixed_tokens

    def estimate(self, messages: Sequence[ModelMessage], fixed_tokens: int) -> int:
        """Calibrated estimate of a request with no anchor (compares before/after a compaction on one
        footing)."""
        return self.scaled(self.estimator.total(messages) + fixed_tokens)

    def observe(self, raw_request_tokens: int, reported_input_tokens: int) -> None:
        """Learn the calibration ratio from a provider's count of a request estimated at ``raw_request_tokens``."""
        self.calibration.observe(self.model_name, raw_request_tokens, reported_input_tokens)


def request_instructions(messages: Sequence[ModelMessage]) -> str | None:
    last = messages[-1] if messages else None
    return last.instructions if isinstance(last, ModelRequest) else None
