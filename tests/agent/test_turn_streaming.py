"""A turn's stream is produced in the task that consumes it: no hand-off to a background task per delta.

Issue 9: ``run_stream_events`` ran the agent in a background task and passed every event over a
zero-buffer stream (a task switch per delta: the runtime alone was ~20% slower than a bare
``run_stream`` per delta). The runtime now drives the run in the consumer's task; what the turn streams
and records must stay the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.turn_events import TextDelta, ThinkingDelta, ToolCallFinished, ToolCallStarted, TurnEvent, TurnFinished
from tui.base.config import Settings
from tui.base.paths import DataDir

DELTAS = 50


class TaskRecordingModel:
    """Streams thinking, a tool call, then an answer of :data:`DELTAS` deltas; notes the task of each delta."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[object] | None] = set()
        self.model = FunctionModel(stream_function=self._stream, model_name="recording")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo
                      ) -> AsyncIterator[str | DeltaToolCalls | DeltaThinkingCalls]:
        answered_tool = any(isinstance(part, ToolReturnPart) for message in messages[-1:] for part in message.parts)
        if not answered_tool:
            self.tasks.add(asyncio.current_task())
            yield {0: DeltaThinkingPart(content="looking first")}
            yield {1: DeltaToolCall(name="ls", json_args="{}", tool_call_id="call-1")}
            return
        for number in range(DELTAS):
            self.tasks.add(asyncio.current_task())
            yield f"w{number} "


async def test_the_turn_streams_in_the_consumers_task_with_every_event_in_order(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("alpha\n", encoding="utf-8")
    recording = TaskRecordingModel()
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=tmp_path / "work",
                             choice=choose_model("offline", None), chat_model=recording.model)
    runtime = await factory.open_request(SessionRequest())
    consumer_tasks: set[asyncio.Task[object] | None] = set()

    async def consume() -> list[TurnEvent]:
        consumer_tasks.add(asyncio.current_task())
        return [event async for event in runtime.run_turn("list the files")]

    events = await asyncio.create_task(consume())

    assert recording.tasks == consumer_tasks  # the model's stream ran in the consumer's task, every delta
    kinds = [type(event) for event in events]
    assert kinds == [ThinkingDelta, ToolCallStarted, ToolCallFinished, *[TextDelta] * DELTAS, TurnFinished]
    started, finished = events[1], events[2]
    assert isinstance(started, ToolCallStarted) and started.tool_name == "ls"
    assert isinstance(finished, ToolCallFinished) and "notes.txt" in finished.preview
    answer = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert answer == "".join(f"w{number} " for number in range(DELTAS))
    last = events[-1]
    assert isinstance(last, TurnFinished) and last.output == answer

    recorded = runtime.load_history(0, runtime.history_count())
    assert [part.content for message in recorded if isinstance(message, ModelResponse)
            for part in message.parts if isinstance(part, TextPart)] == [answer]
    assert not runtime.busy
    await runtime.aclose()
