"""File writes ask first (issue 8, item 2): pydantic-ai tool approval answered inside the turn.

A real session (store, chain, agent) with a FunctionModel that calls write_file/edit_file; the approver
stands in for the app's dialog and records what it was asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
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

from tui.agent.approval.writes import WriteDecision, WriteRequest
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import ToolCallFinished, TurnEvent, TurnFinished
from tui.base.config import Settings, ToolSettings
from tui.base.paths import DataDir


class WritingModel:
    """Calls the tools in ``calls`` (name, args) in one response, then answers with what the tools returned."""

    def __init__(self, *calls: tuple[str, dict[str, str]]) -> None:
        self.calls = list(calls)
        self.returns: list[ToolReturnPart] = []
        self.model = FunctionModel(stream_function=self._stream, model_name="writer")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        if returns:
            self.returns.extend(returns)
            yield "done: " + " | ".join(f"{p.outcome}: {p.model_response_str()}" for p in returns)
            return
        turn = sum(1 for m in messages if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart)
                                                                               for p in m.parts))
        yield {index: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call-{turn}-{index}")
               for index, (name, args) in enumerate(self.calls)}


class Approver:
    """Answers each request with the next scripted decision and keeps what it was asked."""

    def __init__(self, *decisions: WriteDecision) -> None:
        self.decisions = list(decisions)
        self.asked: list[WriteRequest] = []
        self.waiting = asyncio.Event()
        self.hold = False

    async def __call__(self, request: WriteRequest) -> WriteDecision:
        self.asked.append(request)
        self.waiting.set()
        if self.hold:
            await asyncio.Event().wait()
        return self.decisions.pop(0)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return folder


async def open_runtime(tmp_path: Path, work: Path, model: WritingModel, *, writes: str = "ask") -> SessionRuntime:
    settings = Settings(tools=ToolSettings(writes=writes))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model.model)
    return await factory.open_request(SessionRequest())


async def turn(runtime: SessionRuntime, prompt: str = "change it") -> list[TurnEvent]:
    return [event async for event in runtime.run_turn(prompt)]


def on_disk(tmp_path: Path, runtime: SessionRuntime) -> list[ModelMessage]:
    path = tmp_path / "data" / "sessions" / runtime.info.session_id / "messages.json"
    return list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))


def returns_on_disk(tmp_path: Path, runtime: SessionRuntime) -> list[ToolReturnPart]:
    return [p for m in on_disk(tmp_path, runtime) for p in m.parts if isinstance(p, ToolReturnPart)]


async def test_an_approved_write_runs_and_is_recorded_once(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "sub/new.txt", "content": "one\ntwo\n"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.once())
    runtime.set_write_approver(approver)

    events = await turn(runtime)

    assert isinstance(events[-1], TurnFinished)
    assert (work / "sub" / "new.txt").read_text() == "one\ntwo\n"
    [request] = approver.asked
    assert (request.tool_name, request.path, request.action, request.new_lines) == ("write_file", "sub/new.txt",
                                                                                    "create", 2)
    assert request.body == "one\ntwo"
    history = on_disk(tmp_path, runtime)
    assert len(history) == 4 == len(runtime.messages)  # prompt, call, return, answer: each once
    assert [(r.tool_call_id, r.outcome) for r in returns_on_disk(tmp_path, runtime)] == [("call-1-0", "success")]
    await runtime.aclose()


async def test_a_denied_write_leaves_the_file_and_the_model_reads_why(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "notes.txt", "content": "replaced\n"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.deny("keep the notes as they are"))
    runtime.set_write_approver(approver)

    events = await turn(runtime)

    assert (work / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    [request] = approver.asked
    assert request.action == "overwrite" and (request.added, request.removed) == (1, 3)
    assert "-alpha" in request.body and "+replaced" in request.body
    [seen] = model.returns
    assert seen.outcome == "denied"
    assert "the user denied write_file on notes.txt" in seen.model_response_str()
    assert "keep the notes as they are" in seen.model_response_str()
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.denied, e.is_error) for e in finished] == [(True, False)]
    assert [r.outcome for r in returns_on_disk(tmp_path, runtime)] == ["denied"]
    await runtime.aclose()


async def test_an_edit_shows_its_diff_against_the_file(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("edit_file", {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.once())
    runtime.set_write_approver(approver)

    await turn(runtime)

    [request] = approver.asked
    assert (request.action, request.added, request.removed, request.new_lines) == ("edit", 1, 1, 3)
    assert request.body.splitlines()[:2] == ["--- a/notes.txt", "+++ b/notes.txt"]
    assert "-beta" in request.body.splitlines() and "+BETA" in request.body.splitlines()
    assert (work / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    await runtime.aclose()


async def test_allow_for_this_session_asks_once_then_never_again_in_that_session(tmp_path: Path,
                                                                                 work: Path) -> None:
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}),
                         ("write_file", {"path": "b.txt", "content": "b"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.session())
    runtime.set_write_approver(approver)

    await turn(runtime, "first")
    await turn(runtime, "second")

    assert [(r.path, r.position, r.total) for r in approver.asked] == [("a.txt", 1, 2)]
    assert (work / "a.txt").read_text() == "a" and (work / "b.txt").read_text() == "b"
    await runtime.aclose()

    other = await open_runtime(tmp_path, work, model)  # another session: asked again
    fresh = Approver(WriteDecision.deny(), WriteDecision.deny())
    other.set_write_approver(fresh)
    await turn(other, "third")
    assert len(fresh.asked) == 2
    await other.aclose()


async def test_each_write_of_one_response_is_asked_about(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}),
                         ("write_file", {"path": "b.txt", "content": "b"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.deny(), WriteDecision.once())
    runtime.set_write_approver(approver)

    await turn(runtime)

    assert [(r.path, r.position, r.total) for r in approver.asked] == [("a.txt", 1, 2), ("b.txt", 2, 2)]
    assert not (work / "a.txt").exists() and (work / "b.txt").read_text() == "b"
    assert sorted(r.outcome for r in returns_on_disk(tmp_path, runtime)) == ["denied", "success"]
    await runtime.aclose()


async def test_policy_always_writes_without_asking(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}))
    runtime = await open_runtime(tmp_path, work, model, writes="always")
    approver = Approver()
    runtime.set_write_approver(approver)
    await turn(runtime)
    assert approver.asked == [] and (work / "a.txt").read_text() == "a"
    await runtime.aclose()


async def test_policy_never_refuses_without_asking(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("edit_file", {"path": "notes.txt", "old_text": "beta", "new_text": "X"}))
    runtime = await open_runtime(tmp_path, work, model, writes="never")
    approver = Approver()
    runtime.set_write_approver(approver)
    await turn(runtime)
    assert approver.asked == []
    assert (work / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    [seen] = model.returns
    assert seen.outcome == "denied" and "file writes are turned off" in seen.model_response_str()
    await runtime.aclose()


async def test_ask_with_nobody_to_ask_refuses_and_says_how_to_allow(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}))
    runtime = await open_runtime(tmp_path, work, model)  # no approver: deep-tui run
    events = await turn(runtime)
    assert isinstance(events[-1], TurnFinished) and not (work / "a.txt").exists()
    [seen] = model.returns
    assert seen.outcome == "denied"
    assert "the user has not allowed file writes in this run" in seen.model_response_str()
    assert "--allow-writes" in seen.model_response_str()
    await runtime.aclose()


async def test_reads_and_refused_paths_are_never_asked_about(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("read_file", {"path": "notes.txt"}),
                         ("write_file", {"path": "../outside.txt", "content": "x"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver()
    runtime.set_write_approver(approver)
    await turn(runtime)
    assert approver.asked == []
    assert not (tmp_path / "outside.txt").exists()
    outcomes = {r.tool_name: r.outcome for r in model.returns}
    assert outcomes == {"read_file": "success", "write_file": "failed"}  # the path policy's own refusal
    await runtime.aclose()


async def test_cancelling_while_asked_leaves_a_session_that_goes_on(tmp_path: Path, work: Path) -> None:
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.once())
    approver.hold = True
    runtime.set_write_approver(approver)

    task = asyncio.create_task(turn(runtime, "first"))
    await approver.waiting.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert not runtime.busy and not (work / "a.txt").exists()

    approver.hold = False
    events = await turn(runtime, "second")
    assert isinstance(events[-1], TurnFinished)
    assert (work / "a.txt").read_text() == "a"
    history = on_disk(tmp_path, runtime)
    returns = returns_on_disk(tmp_path, runtime)
    assert [(r.tool_call_id, r.outcome) for r in returns] == [("call-1-0", "denied"), ("call-2-0", "success")]
    assert "the user stopped the turn before answering whether write_file may run, so it was not run" in \
        returns[0].content, "the call asked about when the turn stopped: denied, and the model reads why"
    prompts = [p.content for m in history for p in m.parts if isinstance(p, UserPromptPart)]
    assert prompts == ["first", "second"]
    calls = [p.tool_call_id for m in history if isinstance(m, ModelResponse) for p in m.parts
             if isinstance(p, ToolCallPart)]
    assert calls == ["call-1-0", "call-2-0"]  # each call recorded once
    assert len(history) == len(runtime.messages)
    await runtime.aclose()


async def test_a_turn_stopped_while_asked_records_that_call_and_those_behind_it_as_denied(
        tmp_path: Path, work: Path) -> None:
    """Issue 29 §13: quitting (or Esc) while the dialog asks about the first of two writes: neither ran, both are
    recorded as denied (not "interrupted", which reads as if they may have run part-way); an allowed one before
    them, which had not run yet either, stays interrupted."""
    model = WritingModel(("write_file", {"path": "a.txt", "content": "a"}),
                         ("write_file", {"path": "b.txt", "content": "b"}),
                         ("write_file", {"path": "c.txt", "content": "c"}))
    runtime = await open_runtime(tmp_path, work, model)
    approver = Approver(WriteDecision.once())

    async def hold_from_the_second(request: WriteRequest) -> WriteDecision:
        if approver.asked:
            approver.hold = True
        return await approver(request)

    runtime.set_write_approver(hold_from_the_second)
    task = asyncio.create_task(turn(runtime, "first"))
    await wait_for_event(approver.waiting, lambda: len(approver.asked) == 2)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert not any((work / name).exists() for name in ("a.txt", "b.txt", "c.txt"))
    await runtime.aclose()
    returns = returns_on_disk(tmp_path, runtime)
    assert [(r.tool_call_id, r.outcome) for r in returns] == [
        ("call-1-0", "interrupted"), ("call-1-1", "denied"), ("call-1-2", "denied")]
    assert all("so it was not run" in r.content for r in returns[1:])


async def wait_for_event(event: asyncio.Event, condition: Callable[[], bool]) -> None:
    """Until ``condition()`` holds, checked each time ``event`` is set."""
    while not condition():
        await event.wait()
        event.clear()


@pytest.mark.parametrize("outcome", ["denied", "failed", "interrupted"])
def test_tier2_points_a_write_that_did_not_happen_at_a_saved_copy_of_its_arguments(tmp_path: Path,
                                                                                   outcome: str) -> None:
    """A denied write's arguments are the only copy of what it meant to write: never "the result is on disk",
    but a saved copy of the arguments, byte for byte, that read_file gives back."""
    import re

    from tests.chain.support import FILE_WRITING_TOOLS
    from tui.chain.estimate import TokenEstimator
    from tui.chain.tool_compaction import compact_tool_calls

    content = "x = 1\n" * 500
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("write big.py")]),
        ModelResponse(parts=[ToolCallPart("write_file", {"path": "big.py", "content": content}, "w1"),
                             ToolCallPart("write_file", {"path": "done.py", "content": content}, "w2")]),
        ModelRequest(parts=[ToolReturnPart("write_file", "not run", "w1", outcome=outcome),  # type: ignore[arg-type]
                            ToolReturnPart("write_file", "wrote 3000 bytes", "w2")]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    messages += [m for n in range(6) for m in (ModelRequest(parts=[UserPromptPart(f"more {n} " + "p" * 8000)]),
                                               ModelResponse(parts=[TextPart("r" * 8000)]))]
    result = compact_tool_calls(messages, estimator=TokenEstimator(), large_results_dir=tmp_path,
                                protect_recent_tokens=2_000, file_writing_tools=FILE_WRITING_TOOLS)
    result.save()
    not_done, done = result.messages[1].parts
    assert isinstance(done, ToolCallPart) and "the result is on disk" in done.args_as_dict()["note"]
    assert isinstance(not_done, ToolCallPart) and "content" not in not_done.args_as_dict()
    note = not_done.args_as_dict()["note"]
    assert "did not happen" in note and "the result is on disk" not in note
    found = re.search(r"read_file\(path='([^']+)', offset=(\d+), limit=(\d+)\)", note)
    assert found is not None
    path, offset, limit = found.group(1), int(found.group(2)), int(found.group(3))
    saved = Path(path).read_text().splitlines(keepends=True)[offset: offset + limit]  # offset counts from 0
    assert json.loads("".join(saved)) == {"path": "big.py", "content": content}
    assert result.masked_args == 2


def test_a_request_says_when_an_edit_will_not_apply_and_cuts_a_long_preview(tmp_path: Path) -> None:
    from tui.agent.approval.writes import PREVIEW_LINE_LIMIT, build_write_request

    target = tmp_path / "notes.txt"
    target.write_text("alpha\nbeta\n")
    edit = build_write_request("c1", "edit_file", {"path": "notes.txt", "old_text": "zeta", "new_text": "Z"},
                               target, "notes.txt")
    assert edit.action == "edit" and "old_text matches 0 times" in edit.note
    assert "-zeta" in edit.body.splitlines() and "+Z" in edit.body.splitlines()

    long = "".join(f"line {n}\n" for n in range(PREVIEW_LINE_LIMIT + 50))
    created = build_write_request("c2", "write_file", {"path": "new.txt", "content": long}, tmp_path / "new.txt",
                                  "new.txt")
    assert created.action == "create" and created.new_lines == PREVIEW_LINE_LIMIT + 50
    assert len(created.body.splitlines()) == PREVIEW_LINE_LIMIT and created.note == "50 more lines not shown"
    assert created.summary == f"create new.txt ({PREVIEW_LINE_LIMIT + 50} lines)"

    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01" * 100)
    over = build_write_request("c3", "write_file", {"path": "blob.bin", "content": "text\n"}, binary, "blob.bin")
    assert over.action == "overwrite" and "binary" in over.note and over.body == ""
