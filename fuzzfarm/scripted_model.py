"""The scripted chat model: plays a turn's planned tool batches then its answer, measures every request it
receives (the truth, see :mod:`fuzzfarm.wire`) and reports that count as usage, like a provider does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel, FunctionStreamedResponse
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from fuzzfarm.spec import Action
from fuzzfarm.wire import RequestMeter
from tui.agent.subagents.subagent_run import SUBAGENT_INSTRUCTIONS
from tui.agent.tasks.render import todo_line
from tui.store.task_state import todo_list

PROVIDER_NAME = "fuzz-provider"
MASKED_KEY = "deep_tui_masked"
"""The chain's mark on a tier-2 rewritten output (metadata the model sees, never the wire)."""


@dataclass
class RequestRecord:
    """One request as the model received it."""

    turn: int
    """Index of the user turn (``-1``: outside a turn)."""
    size: int
    subagent: str = ""
    """The subagent's prompt when a subagent sent it (checked against the subagent's own window)."""


@dataclass
class ChatScript:
    """State shared by the scripted model across a session's runtimes (resumes and forks included)."""

    disagreement: float
    counts: bool
    requests: list[RequestRecord] = field(default_factory=list)
    produced: list[ModelResponse] = field(default_factory=list)
    first_seen: dict[str, ToolReturnPart] = field(default_factory=dict)
    """Each tool output as it first reached the model (before any tier-2 rewrite)."""
    masked: dict[str, ToolReturnPart] = field(default_factory=dict)
    """Each tier-2 rewritten output as the model saw it."""
    turn: int = -1
    subtasks: dict[str, Action] = field(default_factory=dict)
    """The running turn's subagents' plans, by their prompt."""
    subagent_produced: list[ModelResponse] = field(default_factory=list)
    keep_lines: list[str] = field(default_factory=list)
    """The /keep lines the user added (each must be in every later request's instructions)."""
    todo_lines: list[str] = field(default_factory=list)
    """The todo list the model last wrote, as the instructions show it (likewise)."""
    task_misses: list[str] = field(default_factory=list)
    """Requests whose instructions lacked part of the task state: what was missing, in which turn."""
    _meter: RequestMeter | None = None
    _observed: dict[int, ModelMessage] = field(default_factory=dict)
    """Requests already looked at (kept alive, so an id is never reused)."""
    _plan: tuple[Action, int] | None = None
    _calls: int = 0

    def begin_turn(self, turn: int, action: Action) -> None:
        self.turn = turn
        self._plan = (action, 0)
        self.subtasks = {subtask.prompt: subtask for subtask in action.subtasks}

    def measure(self, messages: Sequence[ModelMessage], parameters: ModelRequestParameters) -> int:
        instructions = "\n\n".join(p.content for p in parameters.instruction_parts or () if p.content) or None
        if instructions is None:
            last = messages[-1] if messages else None
            instructions = last.instructions if isinstance(last, ModelRequest) else None
        tools = [*parameters.function_tools, *parameters.output_tools]
        if self._meter is None:
            self._meter = RequestMeter(self.disagreement)
        return self._meter.size(messages, instructions, tools)

    def _observe(self, messages: Sequence[ModelMessage]) -> None:
        for message in messages:
            if not isinstance(message, ModelRequest) or self._observed.get(id(message)) is message:
                continue
            self._observed[id(message)] = message
            for part in message.parts:
                if not isinstance(part, ToolReturnPart):
                    continue
                if isinstance(part.metadata, dict) and part.metadata.get(MASKED_KEY):
                    self.masked.setdefault(part.tool_call_id, part)
                else:
                    self.first_seen.setdefault(part.tool_call_id, part)

    def _check_task_state(self, parameters: ModelRequestParameters) -> None:
        """Every request carries the current todo list and every /keep line, verbatim, in its instructions."""
        expected = [*self.todo_lines, *(f"- {line}" for line in self.keep_lines)]
        if not expected:
            return
        instructions = "\n\n".join(p.content for p in parameters.instruction_parts or () if p.content)
        missing = next((line for line in expected if line not in instructions), None)
        if missing is not None:
            self.task_misses.append(f"turn {self.turn}: {missing!r}")

    def respond(self, messages: Sequence[ModelMessage], parameters: ModelRequestParameters) -> tuple[int, ModelResponse]:
        """Record the request; the next planned response and the size to report."""
        size = self.measure(messages, parameters)
        if _is_subagent(parameters, messages):
            return size, self._respond_as_subagent(messages, size)
        self.requests.append(RequestRecord(self.turn, size))
        self._check_task_state(parameters)
        self._observe(messages)
        parts: list[TextPart | ToolCallPart]
        if self._plan is None:
            parts = [TextPart("(no turn planned)")]
        else:
            action, step = self._plan
            self._plan = (action, step + 1)
            if step < len(action.batches):
                parts = []
                for call in action.batches[step]:
                    self._calls += 1
                    parts.append(ToolCallPart(call.tool, dict(call.args), f"fz{self._calls:05d}"))
                    if call.tool == "write_todos":
                        self.todo_lines = [todo_line(item) for item in todo_list(call.args["todos"])]
            else:
                parts = [TextPart(action.answer)]
        response = ModelResponse(parts=parts, usage=RequestUsage(input_tokens=size, output_tokens=20),
                                 model_name="scripted-chat", provider_name=PROVIDER_NAME)
        self.produced.append(response)
        return size, response


    def _respond_as_subagent(self, messages: Sequence[ModelMessage], size: int) -> ModelResponse:
        """A subagent's request: its plan's next step, found from the request alone (several subagents run at
        once; its chain may have summarized its first messages away): the step from the newest call id
        (``fzs<step>-<key>-<n>``), the plan from the prompt. Never observed as the session's traffic."""
        key, step, index = _subagent_position(messages)
        plans = list(self.subtasks)
        if key not in self.subtasks and index is not None and index < len(plans):
            key = plans[index]  # its first request was summarized away: the call ids still say which it is
        plan = self.subtasks.get(key) if key else None
        self.requests.append(RequestRecord(self.turn, size, subagent=key or "(unknown)"))
        parts: list[TextPart | ToolCallPart]
        if plan is None:
            parts = [TextPart("(the subagent's plan was lost with its prompt)")]
        elif step < len(plan.batches):
            position = plans.index(key)
            parts = [ToolCallPart(call.tool, dict(call.args), f"fzs{step}-{self.turn}x{position}-{number}")
                     for number, call in enumerate(plan.batches[step])]
        else:
            parts = [TextPart(plan.answer)]
        response = ModelResponse(parts=parts, usage=RequestUsage(input_tokens=size, output_tokens=20),
                                 model_name="scripted-chat", provider_name=PROVIDER_NAME)
        self.subagent_produced.append(response)
        return response


SUBAGENT_MARK = SUBAGENT_INSTRUCTIONS[:60]


def _is_subagent(parameters: ModelRequestParameters, messages: Sequence[ModelMessage]) -> bool:
    texts = [part.content for part in parameters.instruction_parts or () if part.content]
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest) and last.instructions:
        texts.append(last.instructions)
    return any(SUBAGENT_MARK in text for text in texts)


def _subagent_position(messages: Sequence[ModelMessage]) -> tuple[str, int, int | None]:
    """(the subagent's prompt, the step of its plan this request is for, its plan's place in the turn's)."""
    prompt = ""
    step = 0
    index: int | None = None
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str) and not prompt:
                    prompt = part.content
        elif isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart) and part.tool_call_id.startswith("fzs"):
                    step_text, where, _number = part.tool_call_id[3:].split("-", 2)
                    step, index = int(step_text) + 1, int(where.split("x", 1)[1])
    return prompt, step, index


@dataclass
class _ProviderLikeStream(FunctionStreamedResponse):
    """A function stream that reports the request's size and a provider name, like a real provider."""

    _input_tokens: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self._usage += RequestUsage(input_tokens=self._input_tokens)

    @property
    def provider_name(self) -> str:  # type: ignore[override]
        return PROVIDER_NAME


async def _items(response: ModelResponse) -> AsyncIterator[Any]:
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    if calls:
        yield {index: DeltaToolCall(name=p.tool_name, json_args=json.dumps(p.args), tool_call_id=p.tool_call_id)
               for index, p in enumerate(calls)}
    for part in response.parts:
        if isinstance(part, TextPart):
            yield part.content


class ScriptedChatModel(FunctionModel):
    """A FunctionModel driven by a :class:`ChatScript`; offers ``count_tokens`` when the script says so."""

    def __init__(self, script: ChatScript) -> None:
        super().__init__(self._function, model_name="scripted-chat")
        self.script = script

    async def _function(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self.script.respond(messages, info.model_request_parameters)[1]

    async def count_tokens(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                           model_request_parameters: ModelRequestParameters) -> RequestUsage:
        if not self.script.counts:
            raise NotImplementedError("this scripted provider has no token counter")
        _, parameters = self.prepare_request(model_settings, model_request_parameters)
        return RequestUsage(input_tokens=self.script.measure(messages, parameters))

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: RunContext[Any] | None = None) -> AsyncIterator[StreamedResponse]:
        _, parameters = self.prepare_request(model_settings, model_request_parameters)
        size, response = self.script.respond(messages, parameters)
        yield _ProviderLikeStream(model_request_parameters=parameters, _model_name=self.model_name,
                                  _iter=_items(response), _input_tokens=size)
