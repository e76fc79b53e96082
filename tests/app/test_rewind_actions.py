"""The dialog's choice carried out on real sessions (loopback provider): code here, conversation as a fork, both
(the fork holds the restore and its undo point; the original session stays whole)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.rewind_support import factory_for, prompt, tree_state, write
from tests.support.openai_server import ChatServerState, openai_chat_server
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
