"""Issue 29 §14: Home in a long session loads the earlier page in the background; a fork or a session switch right
after must cancel that load, not crash the app (``MountError … load-earlier … has no parent``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.app.app_support import make_app, make_factory, wait_until
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.widgets.chat_blocks import UserBlock
from tui.app.widgets.chat_view import PAGE_SIZE, ChatView


def long_session_app(tmp_path: Path) -> DeepTuiApp:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    messages: list[ModelMessage] = []
    for number in range(3 * PAGE_SIZE):
        messages += [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
                     ModelResponse(parts=[TextPart(f"answer {number}\n\n" + "more words here. " * 20)])]
    handle.append_messages(messages)
    handle.close()
    return make_app(factory, SessionRequest(resume=handle.id))


@pytest.mark.parametrize("switch", ["ctrl+f", "ctrl+n"])
async def test_home_then_fork_or_new_session_at_once_does_not_crash(tmp_path: Path, switch: str) -> None:
    app = long_session_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await wait_until(pilot, lambda: chat.query(UserBlock), "the session's last page")
        first = app.runtime.info.session_id
        await pilot.press("home", switch)  # the earlier page starts loading; the switch follows at once
        if switch == "ctrl+f":  # the whole session: confirmed first
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the fork confirmation")
            await pilot.press("y")
        await wait_until(pilot, lambda: app.runtime.info.session_id != first and chat.runtime is app.runtime,
                         "the other session on screen")
        await wait_until(pilot, lambda: not any(w.group == "load-earlier" and w.is_running for w in app.workers),
                         "the load to end")
        await pilot.press("home")  # the new chat still scrolls (and loads, if it has earlier pages)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        blocks = chat.query(UserBlock)
        if switch == "ctrl+n":
            assert not blocks, "nothing of the old session was drawn into the new one"
        else:
            assert all(block.parent is chat for block in blocks)
