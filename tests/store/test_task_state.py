"""todos.json (issue 30): the todo list and the /keep lines on disk — atomic, no link followed, an unreadable
file set aside and kept, forked with the session (as it was at the fork point)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

from tui.base.nofollow import LinkRefusedError
from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.store_errors import LinkedPathError
from tui.store.task_state import (
    MAX_KEEP_LINES,
    MAX_TODOS,
    TaskStateError,
    TaskStateFile,
    TodoItem,
    todo_list,
    todos_from_calls,
)

SEVEN = [{"content": f"step {n}", "status": "completed" if n < 3 else ("in_progress" if n == 3 else "pending"),
          "active_form": f"doing step {n}"} for n in range(1, 8)]


def test_the_state_round_trips_and_the_file_is_plain_json(tmp_path: Path) -> None:
    file = TaskStateFile.of(tmp_path)
    file.set_todos(todo_list(SEVEN))
    file.add_keep("never touch migrations/")
    again = TaskStateFile.of(tmp_path)
    assert [item.content for item in again.state.todos] == [f"step {n}" for n in range(1, 8)]
    assert again.state.current() == TodoItem("step 3", "in_progress", "doing step 3")
    assert [line.text for line in again.state.keep] == ["never touch migrations/"]
    data = json.loads((tmp_path / "todos.json").read_text())
    assert data["todos"][0] == {"content": "step 1", "status": "completed", "active_form": "doing step 1"}
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]  # atomic: no temporary left


def test_a_planted_link_is_neither_read_nor_replaced(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text('{"todos": [{"content": "leaked", "status": "pending"}]}')
    session = tmp_path / "session"
    session.mkdir()
    (session / "todos.json").symlink_to(secret)
    file = TaskStateFile.of(session)
    assert file.state.empty
    assert any("not read" in warning for warning in file.warnings)
    with pytest.raises(OSError):
        file.add_keep("anything")
    assert secret.read_text() == '{"todos": [{"content": "leaked", "status": "pending"}]}'


def test_write_atomic_refuses_a_link_planted_after_the_read(tmp_path: Path) -> None:
    file = TaskStateFile.of(tmp_path)
    assert file.state.empty
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    (tmp_path / "todos.json").symlink_to(target)
    with pytest.raises(LinkRefusedError):
        file.add_keep("x")
    assert target.read_text() == "keep me"


def test_an_unreadable_file_is_set_aside_and_kept(tmp_path: Path) -> None:
    (tmp_path / "todos.json").write_text("{not json")
    file = TaskStateFile.of(tmp_path)
    assert file.state.empty
    [kept] = [name for name in os.listdir(tmp_path) if name.startswith("todos.json.corrupt")]
    assert (tmp_path / kept).read_text() == "{not json"
    assert kept in file.warnings[0]
    file.add_keep("still works")
    assert TaskStateFile.of(tmp_path).state.keep[0].text == "still works"


def test_bad_lists_and_lines_are_refused_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(TaskStateError, match="non-empty content"):
        todo_list([{"content": "  ", "status": "pending"}])
    with pytest.raises(TaskStateError, match="status must be one of"):
        todo_list([{"content": "a", "status": "done"}])
    with pytest.raises(TaskStateError, match=f"at most {MAX_TODOS} items"):
        todo_list([{"content": f"t{n}", "status": "pending"} for n in range(MAX_TODOS + 1)])
    file = TaskStateFile.of(tmp_path)
    with pytest.raises(TaskStateError):
        file.add_keep("   ")
    for number in range(MAX_KEEP_LINES):
        file.add_keep(f"rule {number}")
    with pytest.raises(TaskStateError, match="delete one first"):
        file.add_keep("one too many")
    file.add_keep("rule 0")  # the same line again: kept once, not refused
    file.remove_keep(0)
    assert file.state.keep[0].text == "rule 1"


def test_control_characters_in_a_todo_are_made_visible() -> None:
    [item] = todo_list([{"content": "run \x1b[31mred\x1b[0m tests\nnow", "status": "pending"}])
    assert "\x1b" not in item.content and "\n" not in item.content


def test_the_last_usable_write_todos_call_gives_the_list() -> None:
    calls = [("write_todos", {"todos": SEVEN[:2]}), ("read_file", {"path": "x"}),
             ("write_todos", '{"todos": [{"content": "final", "status": "pending", "activeForm": "finishing"}]}'),
             ("write_todos", {"todos": [{"content": "", "status": "pending"}]})]  # malformed: the model got an error
    assert todos_from_calls(calls) == (TodoItem("final", "pending", "finishing"),)
    assert todos_from_calls([("read_file", {})]) is None


def _history_with_todos() -> list:
    first = [{"content": "plan", "status": "in_progress"}]
    second = [{"content": "plan", "status": "completed"}, {"content": "build", "status": "in_progress"}]
    messages = []
    for number, todos in enumerate((first, second)):
        messages += [ModelRequest(parts=[UserPromptPart(f"turn {number}")]),
                     ModelResponse(parts=[ToolCallPart("write_todos", {"todos": todos}, f"c{number}")]),
                     ModelRequest(parts=[ToolReturnPart("write_todos", "saved", f"c{number}")]),
                     ModelResponse(parts=[TextPart("ok")])]
    return messages


def test_a_fork_keeps_the_list_and_the_lines_and_a_partial_fork_the_list_of_its_point(tmp_path: Path) -> None:
    store = SessionStore(DataDir(tmp_path / "data"))
    handle = store.create()
    handle.append_messages(_history_with_todos())
    handle.task_state.set_todos(todo_list([{"content": "plan", "status": "completed"},
                                           {"content": "build", "status": "completed"}]))
    handle.task_state.add_keep("never touch migrations/")
    parent = handle.id
    handle.close()

    whole = store.fork(parent)
    assert [(i.content, i.status) for i in whole.task_state.state.todos] == [("plan", "completed"),
                                                                             ("build", "completed")]
    assert [line.text for line in whole.task_state.state.keep] == ["never touch migrations/"]
    whole.close()

    partial = store.fork(parent, upto=4)  # after the first write_todos only
    assert [(i.content, i.status) for i in partial.task_state.state.todos] == [("plan", "in_progress")]
    assert [line.text for line in partial.task_state.state.keep] == ["never touch migrations/"]
    partial.close()

    before = store.fork(parent, upto=1)
    assert before.task_state.state.todos == ()
    before.close()


def test_a_session_whose_todos_json_is_a_link_is_not_opened(tmp_path: Path) -> None:
    store = SessionStore(DataDir(tmp_path / "data"))
    handle = store.create()
    session_id, directory = handle.id, handle.directory
    handle.close()
    (tmp_path / "target").write_text("{}")
    (directory / "todos.json").symlink_to(tmp_path / "target")
    with pytest.raises(LinkedPathError, match=r"todos\.json is a symbolic link"):
        store.open(session_id)


def test_a_restore_point_carries_the_task_state_and_a_damaged_one_only_loses_it(tmp_path: Path) -> None:
    from dataclasses import replace

    from tui.store.checkpoints_file import CheckpointRecord, CheckpointsFile, copy_for_fork, task_state_before
    from tui.store.task_state import TaskState, keep_line

    state = TaskState(todo_list(SEVEN), (keep_line("never touch migrations/", 1.0),))
    file = CheckpointsFile(tmp_path / "checkpoints.jsonl")
    point = CheckpointRecord(message=3, tree="a" * 40, workdir="/w", task=state)
    file.add(point)
    file.add(replace(point, message=5, task=None))  # an older point: no task state
    [read3, read5] = file.read()
    assert read3.task is not None and read3.task.todos == state.todos and read3.task.keep == state.keep
    assert read5.task is None and task_state_before(file.path, 5) is None and task_state_before(file.path, 4) is None
    copied = tmp_path / "fork"
    copied.mkdir()
    assert copy_for_fork(file.path, copied / "checkpoints.jsonl", 4) == 1  # a fork's fork rewinds the same way
    assert task_state_before(copied / "checkpoints.jsonl", 3) == read3.task
    with file.path.open("a") as handle:  # a hand-edited line: the files still restore, the task state is dropped
        handle.write(json.dumps({"event": "point", "message": 7, "tree": "b" * 40, "task": {"todos": "x"}}) + "\n")
    [*_, read7] = file.read()
    assert read7.message == 7 and read7.task is None
