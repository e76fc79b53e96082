"""The dialog's choice carried out on real sessions (loopback provider): code here, conversation as a fork, both
(the fork holds the restore and its undo point; the original session stays whole)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.rewind_support import factory_for, prompt, tree_state, write
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.runtime_api import TaskStateAPI
from tui.agent.session.factory import SessionRequest
from tui.app.rewind_actions import carry_out
from tui.app.screens.rewind_dialog import RewindChoice


@pytest.mark.parametrize("mode", ["both", "code", "conversation"])
async def test_each_choice(tmp_path: Path, mode: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    before = tree_state(work)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        factory = factory_for(url, tmp_path / "data", work)
        runtime = await factory.open_request(SessionRequest())
        await prompt(runtime, served, "first", write("a.txt", "ALPHA\n"))
        after = tree_state(work)
        original = runtime.handle.messages.path.read_bytes()
        plan = await runtime.plan_rewind(1)
        done = await carry_out(RewindChoice(mode, 1, None if mode == "conversation" else plan), runtime, factory)
        assert tree_state(work) == (after if mode == "conversation" else before)
        assert (done.fork is None) == (mode == "code")
        assert runtime.handle.messages.path.read_bytes() == original or mode == "code"
        if done.fork is not None:
            assert done.fork.history_count() == (0 if mode == "conversation" else 1)  # the rewind's note
            assert done.fork.info.parent == runtime.info.session_id
            await done.fork.aclose()
        assert ("rewind:" in done.notice) == (mode != "conversation")
        await runtime.aclose()


@pytest.mark.parametrize("mode", ["both", "conversation"])
async def test_a_conversation_rewind_brings_back_the_todo_list_and_the_keep_lines_of_that_point(
        tmp_path: Path, mode: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    first = [{"content": "Read a.txt", "status": "completed"}, {"content": "Change it", "status": "in_progress"}]
    second = [{"content": "Start again", "status": "in_progress"}]
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        factory = factory_for(url, tmp_path / "data", work)
        runtime = await factory.open_request(SessionRequest())
        runtime.add_keep("never touch migrations/")
        await prompt(runtime, served, "first", ("write_todos", json.dumps({"todos": first})),
                     write("a.txt", "ALPHA\n"))
        at_second = runtime.task_state()
        # the second prompt writes its own list before its first change, so before its restore point is taken
        await prompt(runtime, served, "second", ("write_todos", json.dumps({"todos": second})),
                     write("a.txt", "OMEGA\n"))
        runtime.add_keep("answer in French")
        point = runtime.handle.checkpoints.read()[-1]
        assert point.task is not None and point.task.todos == at_second.todos  # as the prompt started
        assert [item.content for item in runtime.task_state().todos] == ["Start again"]
        plan = await runtime.plan_rewind(point.message)
        done = await carry_out(RewindChoice(mode, point.message, plan if mode == "both" else None), runtime, factory)
        assert done.fork is not None and isinstance(done.fork, TaskStateAPI)
        restored = done.fork.task_state()
        assert [item.to_dict() for item in restored.todos] == first
        assert [line.text for line in restored.keep] == ["never touch migrations/"]
        assert restored.keep == at_second.keep
        assert [line.text for line in runtime.task_state().keep] == ["never touch migrations/", "answer in French"]
        await done.fork.aclose()
        reopened = await factory.open_request(SessionRequest(resume=done.fork.info.session_id))
        assert isinstance(reopened, TaskStateAPI) and [i.to_dict() for i in reopened.task_state().todos] == first
        await reopened.aclose()
        await runtime.aclose()
