"""A FunctionModel that calls the same tools each turn, then answers with what they returned (MCP tests)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


class ScriptedModel:
    """Each turn: calls ``calls`` (name, args) in one response, then answers with what the tools returned.
    Keeps the tool names it was offered and every tool return it read."""

    def __init__(self, *calls: tuple[str, dict[str, object]]) -> None:
        self.calls = list(calls)
        self.offered: list[set[str]] = []
        self.returns: list[ToolReturnPart] = []
        self.model = FunctionModel(stream_function=self._stream, model_name="scripted")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        self.offered.append({tool.name for tool in info.function_tools})
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        if returns or not self.calls:
            self.returns.extend(returns)
            yield "done: " + " | ".join(f"{p.tool_name} {p.outcome}" for p in returns)
            return
        turn = sum(1 for m in messages if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart)
                                                                               for p in m.parts))
        yield {index: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call-{turn}-{index}")
               for index, (name, args) in enumerate(self.calls)}

    def returned(self, tool_name: str) -> ToolReturnPart:
        return next(p for p in self.returns if p.tool_name == tool_name)
