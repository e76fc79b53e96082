"""Issue 29 §12, §13, §16: approval dialogs take no key typed before they were drawn or just after (those keys go
to the prompt), the broadest answers take Ctrl+A, not a letter; Ctrl+Q, Ctrl+D and Ctrl+C twice quit from an open
dialog (the call recorded as denied); "allow for this session" on an MCP tool names the server in the title bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

from tests.agent.shell_support import requires_bwrap
from tests.app.app_support import armed_dialog, dialog_answered, make_app, make_factory, wait_idle, wait_until
from tests.app.test_command_approval import commander
from tests.app.test_mcp_app import all_started
from tests.app.test_mcp_app import make_factory as mcp_factory
from tests.support.mcp_server import server_config
from tests.support.scripted_model import ScriptedModel
from tui.app.screens import approval_dialog
from tui.app.screens.command_approval import CommandApprovalScreen
from tui.app.screens.write_approval import WriteApprovalScreen
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.prompt_queue import PromptQueue
from tui.app.widgets.title_bar import TitleBar

SIZE = (120, 36)


def returns_on_disk(tmp_path: Path, session_id: str) -> list[ToolReturnPart]:
    path = tmp_path / "data" / "sessions" / session_id / "messages.json"
    messages = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    return [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]


async def opened(pilot, kind):  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, kind), "the dialog")
    return pilot.app.screen


@requires_bwrap
async def test_keys_before_the_dialog_is_armed_go_to_the_prompt_and_answer_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approval_dialog, "ARMING_DELAY", 600.0)  # armed by hand below: nothing here is timed
    app = make_app(make_factory(tmp_path, chat_model=commander()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"touch x.txt", "enter")
        screen = await opened(pilot, CommandApprovalScreen)
        await pilot.press(*"say anything", "ctrl+a", "y", "enter", "escape")  # "a", "y", Enter, Esc: all answers
        await pilot.pause()
        assert app.screen is screen and not screen.armed, "no key answered the dialog"
        assert app.query_one(PromptInput).text == "say anythingy", "the keys stayed in the prompt, unsent"
        assert not app.query_one(PromptQueue).texts
        screen._arm()
        await pilot.press("n")
        await dialog_answered(app, pilot, CommandApprovalScreen)
        assert not (tmp_path / "work" / "x.txt").exists()


@requires_bwrap
async def test_a_click_answers_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approval_dialog, "ARMING_DELAY", 600.0)
    app = make_app(make_factory(tmp_path, chat_model=commander()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"touch y.txt", "enter")
        await opened(pilot, CommandApprovalScreen)
        await pilot.click("#allow-once")
        await dialog_answered(app, pilot, CommandApprovalScreen)
        assert (tmp_path / "work" / "y.txt").exists()


@requires_bwrap
async def test_all_commands_takes_ctrl_a_not_the_letter_a(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=commander()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"touch a.txt", "enter")
        screen = await armed_dialog(pilot, CommandApprovalScreen, "the command dialog")
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen, "a letter grants nothing"
        await pilot.press("ctrl+a")
        await dialog_answered(app, pilot, CommandApprovalScreen)
        await pilot.press(*"touch b.txt", "enter")  # every command allowed: no dialog
        await wait_idle(app, pilot)
        assert (tmp_path / "work" / "b.txt").exists()
        assert "commands auto" in str(app.query_one(TitleBar).render())


async def test_all_writes_takes_ctrl_a(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"write new.txt hello", "enter")
        screen = await armed_dialog(pilot, WriteApprovalScreen, "the write dialog")
        assert "Allow all writes (^a)" in str(screen.query_one("#allow-session").render())
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+a")
        await dialog_answered(app, pilot, WriteApprovalScreen)
        assert "writes auto" in str(app.query_one(TitleBar).render())


@requires_bwrap
@pytest.mark.parametrize("keys", [["ctrl+q"], ["ctrl+d"], ["ctrl+c", "ctrl+c"]])
async def test_quitting_from_an_open_command_dialog_denies_and_records_the_call(tmp_path: Path,
                                                                              keys: list[str]) -> None:
    app = make_app(make_factory(tmp_path, chat_model=commander()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"touch q.txt", "enter")
        await armed_dialog(pilot, CommandApprovalScreen, "the command dialog")
        session_id = app.runtime.info.session_id
        for key in keys:
            await pilot.press(key)
        await wait_until(pilot, lambda: app.return_code is not None or not app.is_running, "the app to end")
    await app.runtime.aclose()  # as run_app does after the app ended
    assert not (tmp_path / "work" / "q.txt").exists()
    [call] = returns_on_disk(tmp_path, session_id)
    assert call.outcome == "denied" and "stopped the turn before answering" in call.content


async def test_allow_for_the_session_on_an_mcp_tool_names_the_server_not_writes(tmp_path: Path) -> None:
    model = ScriptedModel(("echo", {"text": "one"}), ("echo", {"text": "two"}))
    app = make_app(mcp_factory(tmp_path, server_config(), model=model))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: all_started(app), "the server to start")
        await pilot.press(*"go", "enter")
        screen = await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")
        assert "Allow all tests tools (^a)" in str(screen.query_one("#allow-session").render())
        await pilot.click("#allow-session")
        await dialog_answered(app, pilot, WriteApprovalScreen)
        title = str(app.query_one(TitleBar).render())
        assert "MCP tests auto" in title and "writes" not in title, title
