"""Shared pieces for chain tests: a list recorder, history builders, scripted models."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tui.agent.tools.file_tools import file_toolset
from tui.agent.tools.kinds import ToolKinds
from tui.agent.tools.path_policy import PathPolicy
from tui.base.config import ContextSettings
from tui.chain.events import ChainEvent
from tui.chain.manager import ContextManager


def _file_writing_tools() -> frozenset[str]:
    """The file-writing tools' names as a session derives them from its tools' marks."""
    root = Path(tempfile.gettempdir())
    return ToolKinds.of(tool.tool_def for tool in file_toolset(PathPolicy(workdir=root, data_root=root / "data")).tools.values()
                        ).file_writing


FILE_WRITING_TOOLS = _file_writing_tools()


@dataclass
class ListRecorder:
    """Stands in for messages.json: appends only."""

    messages: list[ModelMessage] = field(default_factory=list)

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        start = len(self.messages)
        self.messages.extend(messages)
        return start


def tool_turn(number: int, output_chars: int, *, tool: str = "read_file") -> list[ModelMessage]:
    call_id = f"call-{number}"
    return [
        ModelRequest(parts=[UserPromptPart(f"turn {number}: look at src/module_{number}.py")]),
        ModelResponse(parts=[ToolCallPart(tool, {"path": f"src/module_{number}.py"}, call_id)]),
        ModelRequest(parts=[ToolReturnPart(tool, _output(number, output_chars), call_id)]),
        ModelResponse(parts=[TextPart(f"module {number} looks fine")]),
    ]


def _output(number: int, chars: int) -> str:
    line = f"line of module {number}\n"
    return line * max(1, chars // len(line))


def history(turns: int, output_chars: int) -> list[ModelMessage]:
    return [message for number in range(turns) for message in tool_turn(number, output_chars)]


@dataclass
class SummarizerScript:
    """A FunctionModel summarizer that records its prompts and answers with ``reply``."""

    reply: str = "## Session intent\nsummary of the earlier turns"
    error: Exception | None = None
    prompts: list[str] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[-1].parts[-1]
        assert isinstance(prompt, UserPromptPart)
        self.prompts.append(str(prompt.content))
        if self.error is not None:
            raise self.error
        return ModelResponse(parts=[TextPart(self.reply)])

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="summarizer")


@dataclass
class Harness:
    manager: ContextManager
    recorder: ListRecorder
    events: list[ChainEvent]
    received: list[list[ModelMessage]]
    """What the chat model was sent, per request."""

    def agent(self) -> Agent[None, str]:
        def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.received.append(list(messages))
            return ModelResponse(parts=[TextPart("ok")])

        return Agent(FunctionModel(chat), capabilities=self.manager.capabilities())

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]


def make_harness(tmp_path: Path, *, window: int = 10_000, summarizer: SummarizerScript | None = None,
                 **settings: float | int) -> Harness:
    recorder = ListRecorder()
    events: list[ChainEvent] = []
    defaults: dict[str, float | int] = {"large_result_tokens": 100_000, "protect_recent_tokens": 200,
                                        "min_savings_tokens": 100}
    defaults.update(settings)
    manager = ContextManager(
        settings=ContextSettings(**defaults),  # type: ignore[arg-type]
        large_results_dir=tmp_path / "large_tool_results",
        recorder=recorder,
        event_sink=events.append,
        summarizer_model=summarizer.model() if summarizer else None,
        config_window=window,
        chat_model=None,
        file_writing_tools=FILE_WRITING_TOOLS,
    )
    return Harness(manager, recorder, events, [])


def seed(harness: Harness, messages: list[ModelMessage]) -> list[ModelMessage]:
    """Put ``messages`` on record as if resumed from disk."""
    harness.recorder.messages.extend(messages)
    harness.manager.mark_recorded(messages, list(range(len(messages))))
    return messages
