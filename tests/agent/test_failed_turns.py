"""Failed and cancelled turns record each prompt once, and never leave a session that cannot go on.

Issue 8, items 3 and 5: consecutive failed turns used to re-record every earlier failed prompt
(pydantic-ai merges two requests in a row into a new object the recording ledger did not know),
and a turn stopped while its tools ran left unanswered tool calls that made every later prompt fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TurnEvent, TurnFailed, TurnFinished
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.store.messages_file import MessagesFile, encode_message

FAILURES = 8


class ScriptedModel:
    """A FunctionModel whose behaviour the test switches between turns; it keeps what it was sent."""

    def __init__(self) -> None:
        self.mode = "fail"
        self.sent: list[list[ModelMessage]] = []
        self.called = asyncio.Event()
        self.model = FunctionModel(self._whole, stream_function=self._stream, model_name="scripted")

    def _whole(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("the app streams")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        self.sent.append(list(messages))
        self.called.set()
        if self.mode == "fail":
            raise ModelHTTPError(500, "scripted", body="internal server error")
        if self.mode == "hang":
            await asyncio.Event().wait()
        if self.mode == "tool" and not any(isinstance(m, ModelResponse) and m.model_name == "scripted"
                                           and any(isinstance(p, ToolCallPart) for p in m.parts)
                                           for m in messages[-2:]):
            yield {0: DeltaToolCall(name="read_file", json_args='{"path": "notes.txt"}', tool_call_id="call-1")}
            return
        yield "fine"


def prompt_copies(messages: list[ModelMessage]) -> dict[str, int]:
    copies: dict[str, int] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    copies[part.content] = copies.get(part.content, 0) + 1
    return copies


def on_disk(data: DataDir, runtime: SessionRuntime) -> list[ModelMessage]:
    path = data.root / "sessions" / runtime.info.session_id / "messages.json"
    return list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))


async def events_of(runtime: SessionRuntime, prompt: str) -> list[TurnEvent]:
    return [event async for event in runtime.run_turn(prompt)]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[DataDir, Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\n", encoding="utf-8")
    return DataDir(tmp_path / "data"), work


def factory_for(data: DataDir, work: Path, model: FunctionModel) -> RuntimeFactory:
    return RuntimeFactory(settings=Settings(), data_dir=data, workdir=work, choice=choose_model("offline", None),
                          chat_model=model)


async def test_eight_http_500_turns_record_each_prompt_once_and_send_it_once(setup: tuple[DataDir, Path]) -> None:
    data, work = setup
    scripted = ScriptedModel()
    runtime = await factory_for(data, work, scripted.model).open_request(SessionRequest())
    for number in range(FAILURES):
        events = await events_of(runtime, f"prompt {number}")
        assert isinstance(events[-1], TurnFailed) and "500" in events[-1].message
        assert set(prompt_copies(on_disk(data, runtime)).values()) == {1}, f"after failure {number + 1}"
    scripted.mode = "answer"
    events = await events_of(runtime, "prompt after")
    assert isinstance(events[-1], TurnFinished)

    expected = {f"prompt {number}": 1 for number in range(FAILURES)} | {"prompt after": 1}
    assert prompt_copies(on_disk(data, runtime)) == expected
    assert prompt_copies(scripted.sent[-1]) == expected, "each earlier prompt is sent once, not once per failure"
    notes = [m for m in on_disk(data, runtime) if isinstance(m, ModelResponse) and m.model_name is None]
    assert len(notes) == FAILURES and all("no answer: ModelHTTPError" in n.parts[0].content for n in notes)
    assert runtime.history_count() == len(runtime.messages) == 2 * FAILURES + 2
    await runtime.aclose()


async def test_eight_cancelled_hangs_record_each_prompt_once(setup: tuple[DataDir, Path]) -> None:
    data, work = setup
    scripted = ScriptedModel()
    scripted.mode = "hang"
    runtime = await factory_for(data, work, scripted.model).open_request(SessionRequest())
    for number in range(FAILURES):
        scripted.called.clear()
        task = asyncio.create_task(events_of(runtime, f"prompt {number}"))
        await scripted.called.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert not runtime.busy
    scripted.mode = "answer"
    assert isinstance((await events_of(runtime, "prompt after"))[-1], TurnFinished)

    expected = {f"prompt {number}": 1 for number in range(FAILURES)} | {"prompt after": 1}
    assert prompt_copies(on_disk(data, runtime)) == expected
    assert prompt_copies(scripted.sent[-1]) == expected
    await runtime.aclose()


def failing_appends(monkeypatch: pytest.MonkeyPatch, fail_from_call: int) -> list[int]:
    """Make messages.json appends raise ENOSPC from the ``fail_from_call``-th one on (a full disk)."""
    calls: list[int] = []
    real_append = MessagesFile.append

    def append(self: MessagesFile, messages: list[ModelMessage]) -> int:
        calls.append(len(messages))
        if len(calls) >= fail_from_call:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        return real_append(self, messages)

    monkeypatch.setattr(MessagesFile, "append", append)
    return calls


async def test_a_full_disk_mid_turn_fails_in_one_line_and_the_next_open_continues(
        setup: tuple[DataDir, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    data, work = setup
    scripted = ScriptedModel()
    scripted.mode = "tool"
    with monkeypatch.context() as patch:
        failing_appends(patch, fail_from_call=2)  # the prompt is saved; the tool call and its result are not
        runtime = await factory_for(data, work, scripted.model).open_request(SessionRequest())
        events = await events_of(runtime, "read notes.txt")
        failure = events[-1]
        assert isinstance(failure, TurnFailed)
        assert failure.message.startswith("cannot save the session: No space left on device")
        assert "\n" not in failure.message
        await runtime.aclose()
    session_id = runtime.info.session_id
    assert len(on_disk(data, runtime)) == 1  # only the prompt reached the disk

    # the disk is free again; the unfinished state is on disk as a crash would leave it: a response
    # with a tool call and no result
    path = data.root / "sessions" / session_id / "messages.json"
    call = ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes.txt"}, "call-1")], model_name="scripted")
    MessagesFile(path).append([call])
    scripted.mode = "answer"
    reopened = await factory_for(data, work, scripted.model).open_request(SessionRequest(resume=session_id))
    events = await events_of(reopened, "go on")
    assert isinstance(events[-1], TurnFinished), events[-1]
    history = on_disk(data, reopened)
    returns = [p for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(r.tool_call_id, r.outcome) for r in returns] == [("call-1", "interrupted")]
    assert prompt_copies(history) == {"read notes.txt": 1, "go on": 1}
    await reopened.aclose()


async def test_a_torn_write_after_a_tool_call_does_not_wedge_the_session(setup: tuple[DataDir, Path]) -> None:
    data, work = setup
    scripted = ScriptedModel()
    scripted.mode = "answer"
    factory = factory_for(data, work, scripted.model)
    runtime = await factory.open_request(SessionRequest())
    await events_of(runtime, "first")
    await runtime.aclose()
    path = data.root / "sessions" / runtime.info.session_id / "messages.json"
    call = ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes.txt"}, "call-9")], model_name="scripted")
    returned = ModelRequest(parts=[ToolReturnPart("read_file", "alpha\n", "call-9")])
    MessagesFile(path).append([ModelRequest(parts=[UserPromptPart("second")]), call])
    whole = path.read_bytes()
    path.write_bytes(whole[:-3] + b",\n" + encode_message(returned)[:40])  # the return's append was torn

    reopened = await factory.open_request(SessionRequest(resume=runtime.info.session_id))
    assert any("unfinished write" in warning for warning in reopened.info.warnings)
    events = await events_of(reopened, "third")
    assert isinstance(events[-1], TurnFinished), events[-1]
    history = on_disk(data, reopened)
    assert [p.outcome for m in history for p in m.parts if isinstance(p, ToolReturnPart)] == ["interrupted"]
    assert list((path.parent).glob("messages.json.torn-*")), "the torn bytes are kept"
    await reopened.aclose()


def test_run_on_a_full_disk_prints_one_line_and_exits_1(
        setup: tuple[DataDir, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli.main import main

    data, work = setup
    monkeypatch.chdir(work)
    failing_appends(monkeypatch, fail_from_call=1)
    assert main(["run", "--data-dir", str(data.root), "read notes.txt"]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("deep-tui: error: cannot save the session: No space left")
    assert "Traceback" not in err


async def test_a_failed_turn_leaves_no_response_without_parts(setup: tuple[DataDir, Path]) -> None:
    data, work = setup
    scripted = ScriptedModel()
    runtime = await factory_for(data, work, scripted.model).open_request(SessionRequest())
    await events_of(runtime, "only")
    history = on_disk(data, runtime)
    assert [type(m) for m in history] == [ModelRequest, ModelResponse]
    assert isinstance(history[1].parts[0], TextPart) and history[1].parts[0].content.startswith("(no answer:")
    await runtime.aclose()


async def test_what_a_full_disk_kept_from_the_history_is_saved_by_the_next_turn(
        setup: tuple[DataDir, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    data, work = setup
    scripted = ScriptedModel()
    scripted.mode = "tool"
    runtime = await factory_for(data, work, scripted.model).open_request(SessionRequest())
    with monkeypatch.context() as patch:
        failing_appends(patch, fail_from_call=2)
        events = await events_of(runtime, "read notes.txt")
        assert isinstance(events[-1], TurnFailed) and "No space left on device" in events[-1].message
    assert len(on_disk(data, runtime)) == 1
    scripted.mode = "answer"
    events = await events_of(runtime, "and now")  # the disk has room again
    assert isinstance(events[-1], TurnFinished)
    history = on_disk(data, runtime)
    assert [type(m).__name__ for m in history] == [type(m).__name__ for m in runtime.messages]
    assert prompt_copies(history) == {"read notes.txt": 1, "and now": 1}
    calls = [p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    returns = [p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert calls == returns == ["call-1"], "the tool call and its result, saved once each"
    await runtime.aclose()


async def test_the_app_shows_a_full_disk_as_one_notice_and_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.app.app_support import make_app, make_factory, wait_idle
    from tui.app.widgets.chat_blocks import NoticeBlock

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        with monkeypatch.context() as patch:
            failing_appends(patch, fail_from_call=1)
            await pilot.press(*"read notes.txt", "enter")
            await wait_idle(app, pilot)
        [notice] = [str(block.render()) for block in app.query(NoticeBlock)]
        assert notice.startswith("turn failed: cannot save the session: No space left on device")
        await pilot.press(*"help", "enter")  # room again: the next turn saves both prompts, once each
        await wait_idle(app, pilot)
        assert app.is_running and app.runtime.history_count() == len(app.runtime.messages)
        history = list(ModelMessagesTypeAdapter.validate_json(
            (tmp_path / "data" / "sessions" / app.runtime.info.session_id / "messages.json").read_bytes()))
        assert prompt_copies(history) == {"read notes.txt": 1, "help": 1}
    await app.runtime.aclose()
