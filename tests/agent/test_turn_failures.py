"""A turn that fails mid-way ends cleanly: what happened before the error is recorded, the session goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.turn_events import ToolCallFinished, TurnFailed, TurnFinished
from tui.base.config import Settings
from tui.base.paths import DataDir


def failing_after_tools(failures: int) -> FunctionModel:
    """Calls ``read_file`` on missing files ``failures`` times, then raises like a buggy provider SDK would."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        prompts = [m for m in messages if isinstance(m, ModelRequest) and any(p.part_kind == "user-prompt" for p in m.parts)]
        made = sum(1 for m in messages if isinstance(m, ModelResponse))
        if len(prompts) > 1:
            yield "second turn fine"
            return
        if made < failures:
            yield {0: DeltaToolCall(name="read_file", json_args=f'{{"path": "missing-{made}.txt"}}',
                                    tool_call_id=f"call-{made}")}
            return
        raise RuntimeError("socket closed by peer")

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("unused")])

    return FunctionModel(whole, stream_function=stream, model_name="flaky")


async def test_many_refusals_and_then_a_crash_are_recorded_and_the_session_continues(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(tmp_path / "data")
    factory = RuntimeFactory(settings=Settings(), data_dir=data, workdir=work,
                             choice=choose_model("offline", None), chat_model=failing_after_tools(4))
    runtime = await factory.open_request(SessionRequest())
    events = [event async for event in runtime.run_turn("look around")]

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 4 and all(e.is_error for e in finished), "four failed tool calls, none aborted the turn"
    assert isinstance(events[-1], TurnFailed) and "RuntimeError: socket closed by peer" in events[-1].message

    on_disk = ModelMessagesTypeAdapter.validate_json((data.root / "sessions" / runtime.info.session_id
                                                      / "messages.json").read_bytes())
    assert len(on_disk) == 10  # prompt + 4 × (call, failed return) + the note that no answer came
    assert [type(m) for m in runtime.messages] == [type(m) for m in on_disk]
    calls = [p for m in on_disk for p in m.parts if isinstance(p, ToolCallPart)]
    assert [c.tool_call_id for c in calls] == [f"call-{n}" for n in range(4)]
    note = on_disk[-1]
    assert isinstance(note, ModelResponse) and isinstance(note.parts[0], TextPart)
    assert note.parts[0].content == "(no answer: unexpected RuntimeError: socket closed by peer)"

    after = [event async for event in runtime.run_turn("again")]
    assert isinstance(after[-1], TurnFinished) and after[-1].output == "second turn fine"
    assert runtime.history_count() == len(runtime.messages) == 12
    on_disk = ModelMessagesTypeAdapter.validate_json((data.root / "sessions" / runtime.info.session_id
                                                      / "messages.json").read_bytes())
    returns = [p.tool_call_id for m in on_disk for p in m.parts if p.part_kind in ("tool-return", "retry-prompt")]
    assert sorted(returns) == [f"call-{n}" for n in range(4)], "each tool result recorded once"
    await runtime.aclose()
