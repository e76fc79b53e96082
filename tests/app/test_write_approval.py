"""The approval dialog: a write in the app waits for the user; every button and key answers it.

The offline model's ``write PATH TEXT`` calls the real write_file through the session's ApprovalGate.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.widgets import Input, Static

from tests.app.app_support import armed_dialog, dialog_answered, make_app, make_factory, wait_idle, wait_until
from tui.app.app import DeepTuiApp
from tui.app.screens.write_approval import WriteApprovalScreen
from tui.app.widgets.chat_blocks import ToolBlock
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.title_bar import TitleBar

SIZE = (120, 36)


def returns_on_disk(app: DeepTuiApp, tmp_path: Path) -> list[ToolReturnPart]:
    path = tmp_path / "data" / "sessions" / app.runtime.info.session_id / "messages.json"
    messages = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


async def ask_to_write(pilot, text: str = "write new.txt hello") -> WriteApprovalScreen:  # type: ignore[no-untyped-def]
    await pilot.press(*text, "enter")
    return await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")


async def answered(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await dialog_answered(app, pilot, WriteApprovalScreen)


ALLOW_ONCE = [("click", "#allow-once"), ("key", "y"), ("key", "enter")]
DENY = [("click", "#deny"), ("key", "n"), ("key", "escape")]


@pytest.mark.parametrize(("how", "what"), ALLOW_ONCE)
async def test_allow_once_writes_the_file(tmp_path: Path, how: str, what: str) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask_to_write(pilot)
        assert screen.request.path == "new.txt" and screen.request.action == "create"
        await (pilot.click(what) if how == "click" else pilot.press(what))
        await answered(app, pilot)
        assert (tmp_path / "work" / "new.txt").read_text() == "hello\n"
        assert [r.outcome for r in returns_on_disk(app, tmp_path)] == ["success"]

        await ask_to_write(pilot, "write other.txt again")  # once: the next write asks again
        await pilot.press("y")
        await answered(app, pilot)
        assert (tmp_path / "work" / "other.txt").read_text() == "again\n"


@pytest.mark.parametrize(("how", "what"), DENY)
async def test_deny_leaves_the_file_and_the_tool_block_says_why(tmp_path: Path, how: str, what: str) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await ask_to_write(pilot, "write notes.txt replaced")
        await (pilot.click(what) if how == "click" else pilot.press(what))
        await answered(app, pilot)
        assert (tmp_path / "work" / "notes.txt").read_text() == "alpha\nbeta\n"
        [denied] = returns_on_disk(app, tmp_path)
        assert denied.outcome == "denied" and "the user denied write_file on notes.txt" in denied.content
        [block] = app.query(ToolBlock)
        assert "the user denied write_file" in str(block.query(".tool-result").first(Static).render())
        assert app.is_running and not app.runtime.busy


@pytest.mark.parametrize("how", ["click", "key"])
async def test_allow_for_this_session_stops_asking(tmp_path: Path, how: str) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        title = app.query_one(TitleBar)
        assert "auto-allowed" not in str(title.render())
        await ask_to_write(pilot)
        await (pilot.click("#allow-session") if how == "click" else pilot.press("ctrl+a"))
        await answered(app, pilot)
        assert "writes auto-allowed" in str(title.render())  # the session's new freedom stays in sight
        await pilot.press(*"write second.txt two", "enter")
        await wait_idle(app, pilot)
        assert not isinstance(app.screen, WriteApprovalScreen)
        assert (tmp_path / "work" / "new.txt").exists() and (tmp_path / "work" / "second.txt").exists()
        allowed = app.runtime
        await pilot.press("ctrl+n")  # a new session asks again, and says nothing is auto-allowed
        await wait_until(pilot, lambda: app.runtime is not allowed, "the new session")
        await pilot.pause()
        assert "auto-allowed" not in str(title.render())


@pytest.mark.parametrize("how", ["click", "key"])
async def test_deny_with_a_reason_tells_the_model(tmp_path: Path, how: str) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask_to_write(pilot)
        reason = screen.query_one("#approval-reason", Input)
        assert not reason.display
        await (pilot.click("#deny-reason") if how == "click" else pilot.press("r"))
        await wait_until(pilot, lambda: reason.display and reason.has_focus, "the reason field")
        await pilot.press(*"use notes.txt instead", "enter")
        await answered(app, pilot)
        assert not (tmp_path / "work" / "new.txt").exists()
        [denied] = returns_on_disk(app, tmp_path)
        assert denied.outcome == "denied" and denied.content.endswith("The user's reason: use notes.txt instead")


def hostile_writer() -> FunctionModel:
    """Writes a file whose content is markup and an escape sequence (OSC: set the window title)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            yield "done"
            return
        content = "[bold red]boom[/] \x1b]0;pwned\x07 end\n"
        yield {0: DeltaToolCall("write_file", json.dumps({"path": "x[b].txt", "content": content}), tool_call_id="call-1")}

    return FunctionModel(stream_function=stream, model_name="hostile")


async def test_the_preview_is_plain_text_whatever_the_model_wrote(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=hostile_writer()))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask_to_write(pilot, "go")
        shown = str(screen.query_one("#approval-diff", Static).render())
        assert "[bold red]boom[/]" in shown and "␛]0;pwned␇" in shown and "\x1b" not in shown
        assert "x[b].txt" in str(screen.query_one("#approval-summary", Static).render())
        await pilot.press("n")
        await answered(app, pilot)
        assert not (tmp_path / "work" / "x[b].txt").exists()


async def test_keys_typed_as_the_dialog_opens_do_not_answer_it_but_clicks_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.app.screens.approval_dialog.ARMING_DELAY", 600.0)  # never armed in this test
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"write new.txt hello", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, WriteApprovalScreen), "the approval dialog")
        screen = app.screen
        await pilot.press("a", "y", "n", "r", "enter", "escape")  # the rest of a sentence being typed
        await pilot.pause()
        assert app.screen is screen and not screen.armed and not screen.has_class("-reason")
        await pilot.click("#deny")  # a click is never a stray key
        await answered(app, pilot)
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "aynr", "the letters stayed in the prompt, unsent (Enter and Esc did not send)"
        prompt.clear()
        assert [r.outcome for r in returns_on_disk(app, tmp_path)] == ["denied"]

        await pilot.press(*"write new.txt hello", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, WriteApprovalScreen), "the second dialog")
        await pilot.click("#allow-once")
        await answered(app, pilot)
        assert (tmp_path / "work" / "new.txt").read_text() == "hello\n"


async def test_cancelling_the_turn_under_the_dialog_closes_it_and_the_session_goes_on(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await ask_to_write(pilot)
        await app.action_cancel_turn()  # what a session switch or quitting does to a running turn
        await answered(app, pilot)
        assert not (tmp_path / "work" / "new.txt").exists()
        await ask_to_write(pilot, "write new.txt second try")
        await pilot.press("y")
        await answered(app, pilot)
        assert (tmp_path / "work" / "new.txt").read_text() == "second try\n"
        assert [r.outcome for r in returns_on_disk(app, tmp_path)] == ["denied", "success"]


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)


def test_approval_dialog_with_a_diff(snap_compare, tmp_path: Path, fixed_ids: None) -> None:  # type: ignore[no-untyped-def]
    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*"write notes.txt", "ctrl+j", *"alpha", "ctrl+j", *"BETA [b]not bold[/b]", "ctrl+j",
                          *"gamma", "enter")
        await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")
        await pilot.pause(0.1)

    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=SIZE, run_before=ask)
