"""The agent's todo list and the user's standing instructions (issue 30, points 1–3), through the loopback
OpenAI-chat server with scripted tool calls: saved in todos.json, in the instructions of every request (never in
the history), counted, restored on resume, forked, read from an adopted pydantic-deep session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart

from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.tasks.events import TaskStateChanged
from tui.agent.tasks.render import render_task_state
from tui.agent.turn_events import ToolCallFinished, TurnEvent, TurnFinished
from tui.base.config import Settings, ToolSettings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent, UsageEvent
from tui.store.task_state import TaskState, todo_list

SEVEN = [{"content": f"step {n}", "status": "completed" if n < 3 else ("in_progress" if n == 3 else "pending"),
          "active_form": f"Doing step {n}"} for n in range(1, 8)]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\n")
    return folder


@pytest.fixture
def server() -> Iterator[tuple[str, ChatServerState]]:
    with openai_chat_server(ChatServerState(reply="done")) as served, models.override_allow_model_requests(True):
        yield served


def factory_for(tmp_path: Path, work: Path, base_url: str, **tools: Any) -> RuntimeFactory:
    settings = Settings(base_url=base_url, tools=ToolSettings(**tools))
    return RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                          choice=choose_model("openai-chat:loopback", None))


async def turn(runtime: SessionRuntime, prompt: str = "go") -> list[TurnEvent]:
    return [event async for event in runtime.run_turn(prompt)]


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


def history_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in request["messages"] if m["role"] != "system")


def call(state: ChatServerState, call_id: str, name: str, args: dict[str, Any]) -> None:
    state.tool_calls.append((call_id, name, json.dumps(args)))


async def test_write_todos_saves_the_list_and_every_later_request_carries_it(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest())
    seen: list[ChainEvent] = []
    runtime.subscribe(seen.append)
    call(state, "c1", "write_todos", {"todos": SEVEN})
    events = await turn(runtime, "plan the work")
    assert isinstance(events[-1], TurnFinished)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.tool_name, e.is_error, e.denied) for e in finished] == [("write_todos", False, False)]
    saved = json.loads((tmp_path / "data" / "sessions" / runtime.info.session_id / "todos.json").read_text())
    assert [item["content"] for item in saved["todos"]] == [f"step {n}" for n in range(1, 8)]
    [changed] = [e for e in seen if isinstance(e, TaskStateChanged)]
    assert changed.compact_line() == "▸ Doing step 3 · 3/7"
    # the request after the call carries the list in its instructions; the prompt after that too
    await turn(runtime, "next")
    last = state.requests[-1]
    for item in SEVEN:
        assert item["content"] in system_text(last)
    assert "step 7" not in history_text(last).replace('"step 7"', "")  # only the call's JSON arguments hold it
    assert runtime.task_state().todos == todo_list(SEVEN)
    await runtime.aclose()


async def test_write_todos_needs_no_approval_and_read_todos_reads_it(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url, writes="ask").open_request(SessionRequest())
    runtime.set_write_approver(None)  # nobody to ask: an approval would be refused
    call(state, "c1", "write_todos", {"todos": SEVEN[:2]})
    call(state, "c2", "read_todos", {})
    await turn(runtime)
    tool_messages = [m["content"] for m in state.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_messages[0].startswith("todo list saved: 2 items, 2/2 completed")
    assert "[x] step 1" in tool_messages[1] and "[x] step 2" in tool_messages[1]
    await runtime.aclose()


async def test_a_malformed_list_is_one_tool_error_and_changes_nothing(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest())
    call(state, "c1", "write_todos", {"todos": SEVEN[:1]})
    call(state, "c2", "write_todos", {"todos": [{"content": "", "status": "pending"}]})
    call(state, "c3", "write_todos", {"todos": [{"content": "x", "status": "finished"}]})
    events = await turn(runtime)
    errors = [e for e in events if isinstance(e, ToolCallFinished) and e.is_error]
    assert len(errors) == 2
    tool_messages = [m["content"] for m in state.requests[-1]["messages"] if m["role"] == "tool"]
    assert "non-empty content" in tool_messages[1]
    assert "status" in tool_messages[2] and "\n" not in tool_messages[2].strip()
    assert [item.content for item in runtime.task_state().todos] == ["step 1"]
    await runtime.aclose()


async def test_keep_lines_are_in_every_request_counted_and_their_own_context_row(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest())
    usage: list[UsageEvent] = []
    runtime.subscribe(lambda event: usage.append(event) if isinstance(event, UsageEvent) else None)
    before = runtime.manager.fixed_tokens
    runtime.add_keep("never touch migrations/")
    assert runtime.manager.fixed_tokens > before and usage  # the gauge hears of it before the next request
    runtime.add_keep("answer in English")
    await turn(runtime)
    await turn(runtime)
    for request in state.requests:
        assert "- never touch migrations/\n- answer in English" in system_text(request)
        assert "never touch migrations/" not in history_text(request)
    rows = {row.label: row.tokens for row in runtime.context_breakdown().slices}
    assert rows["task state (todos, /keep)"] > 0
    runtime.remove_keep(0)
    assert [line.text for line in runtime.task_state().keep] == ["answer in English"]
    await runtime.aclose()


async def test_resume_and_fork_keep_the_list_and_the_lines(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    factory = factory_for(tmp_path, work, url)
    runtime = await factory.open_request(SessionRequest())
    call(state, "c1", "write_todos", {"todos": SEVEN})
    await turn(runtime)
    runtime.add_keep("never touch migrations/")
    session_id = runtime.info.session_id
    await runtime.aclose()

    resumed = await factory.open_request(SessionRequest(resume=session_id))
    assert resumed.task_state().todos == todo_list(SEVEN)
    await turn(resumed)
    assert "step 7" in system_text(state.requests[-1]) and "never touch migrations/" in system_text(state.requests[-1])
    await resumed.aclose()

    forked = await factory.open_request(SessionRequest(resume=session_id, fork=True))
    assert forked.info.session_id != session_id
    assert forked.task_state().todos == todo_list(SEVEN)
    assert [line.text for line in forked.task_state().keep] == ["never touch migrations/"]
    await forked.aclose()


async def test_an_adopted_pydantic_deep_session_opens_with_its_todos(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    session = tmp_path / "data" / "sessions" / "0123456789ab"
    session.mkdir(parents=True)
    history = [ModelRequest(parts=[UserPromptPart("build it")]),
               ModelResponse(parts=[ToolCallPart("write_todos", {"todos": [
                   {"content": "Read the code", "status": "completed", "active_form": "Reading the code"},
                   {"content": "Run the tests", "status": "in_progress", "active_form": "Running the tests"}]},
                   "call_1")])]
    # pydantic-deep writes one indented JSON array, and keeps its list nowhere else
    (session / "messages.json").write_text(json.dumps(json.loads(ModelMessagesTypeAdapter.dump_json(history)),
                                                      indent=2))
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest(resume="0123"))
    assert [(i.content, i.status) for i in runtime.task_state().todos] == [("Read the code", "completed"),
                                                                          ("Run the tests", "in_progress")]
    assert (session / "todos.json").exists()  # adopted once: the next open reads the file
    await turn(runtime)
    assert "Run the tests (now: Running the tests)" in system_text(state.requests[-1])
    await runtime.aclose()


def test_past_the_cap_the_oldest_completed_items_fold_and_the_user_is_told(tmp_path: Path) -> None:
    long = [{"content": f"item {n} " + "x" * 400, "status": "completed" if n < 60 else "pending"} for n in range(80)]
    state = TaskState(todos=todo_list(long))
    rendered = render_task_state(state, cap_tokens=4_000)
    assert rendered.tokens <= 4_000 and rendered.folded > 0 and rendered.hidden == 0
    assert "item 79" in rendered.text and "item 0 " not in rendered.text
    assert f"{rendered.folded} earlier completed items" in rendered.text


def test_the_board_tells_the_user_once_when_the_cap_folds(tmp_path: Path) -> None:
    from tui.agent.tasks.board import TaskBoard
    from tui.store.task_state import TaskStateFile

    heard: list[ChainEvent] = []
    board = TaskBoard(TaskStateFile.of(tmp_path), notify=heard.append, cap_tokens=500)
    board.write_todos(todo_list([{"content": f"item {n} " + "y" * 100, "status": "completed"} for n in range(30)]))
    board.instructions()
    board.instructions()
    notes = [e.note for e in heard if isinstance(e, TaskStateChanged) and e.note]
    assert len(notes) == 1 and "folded into a count" in notes[0]
