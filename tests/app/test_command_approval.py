"""Shell commands in the app: the approval dialog (every key and button), the output streamed into the tool block
while the command runs, and ``!command`` typed in the prompt.

A real session and a real sandbox; a FunctionModel calls ``execute`` with the command given in the prompt.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.widgets import Input, Static

from tests.agent.shell_support import requires_bwrap
from tests.app.app_support import armed_dialog, dialog_answered, make_app, make_factory, wait_idle, wait_until
from tui.agent.approval.commands import CommandApprovals
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.command_approval import CommandApprovalScreen
from tui.app.widgets.chat_blocks import ToolBlock, UserBlock
from tui.app.widgets.tail_blocks import tail_blocks
from tui.app.widgets.title_bar import TitleBar
from tui.base.paths import DataDir
from tui.store.session_tail import read_session_tail

pytestmark = requires_bwrap

SIZE = (120, 36)


def commander(seen: list[str] | None = None) -> FunctionModel:
    """Runs the prompt as a command (``execute``); answers ``done`` once it has the result. ``seen``: every user
    prompt it received, as text."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "done"
            return
        prompts = [str(p.content) for p in last.parts if isinstance(p, UserPromptPart)]  # a !command's, the prompt
        if seen is not None:
            seen.append("\n\n".join(prompts))
        command = prompts[-1]
        yield {0: DeltaToolCall("execute", json.dumps({"command": command}), tool_call_id=f"call-{len(messages)}")}

    return FunctionModel(stream_function=stream, model_name="commander")


def app_for(tmp_path: Path, seen: list[str] | None = None) -> DeepTuiApp:
    return make_app(make_factory(tmp_path, chat_model=commander(seen)))


def returns_on_disk(app: DeepTuiApp, tmp_path: Path) -> list[ToolReturnPart]:
    return [p for m in on_disk(app, tmp_path) for p in m.parts if isinstance(p, ToolReturnPart)]


def on_disk(app: DeepTuiApp, tmp_path: Path) -> list[ModelMessage]:
    path = tmp_path / "data" / "sessions" / app.runtime.info.session_id / "messages.json"
    return list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))


async def ask(pilot, command: str) -> CommandApprovalScreen:  # type: ignore[no-untyped-def]
    await pilot.press(*command, "enter")
    return await armed_dialog(pilot, CommandApprovalScreen, "the command dialog")


async def answered(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await dialog_answered(app, pilot, CommandApprovalScreen)


async def test_allow_once_by_click_y_or_enter_runs_it_and_asks_again_next_time(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for number, (how, what) in enumerate([("click", "#allow-once"), ("key", "y"), ("key", "enter")]):
            screen = await ask(pilot, f"touch {number}.txt")  # asked each time: "once" grants nothing more
            assert screen.request.command == f"touch {number}.txt"
            assert screen.request.workdir == str(tmp_path / "work")
            await (pilot.click(what) if how == "click" else pilot.press(what))
            await answered(app, pilot)
            assert (tmp_path / "work" / f"{number}.txt").exists()
        assert [r.outcome for r in returns_on_disk(app, tmp_path)] == ["success"] * 3


async def test_deny_by_click_n_or_esc_runs_nothing_and_the_block_says_so(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for number, (how, what) in enumerate([("click", "#deny"), ("key", "n"), ("key", "escape")]):
            await ask(pilot, f"touch no{number}.txt")
            await (pilot.click(what) if how == "click" else pilot.press(what))
            await answered(app, pilot)
            assert not (tmp_path / "work" / f"no{number}.txt").exists()
            denied = returns_on_disk(app, tmp_path)[-1]
            assert denied.outcome == "denied" and f"the user denied running `touch no{number}.txt`" in denied.content
            block = app.query(ToolBlock).last()
            assert "the user denied running" in str(block.query(".tool-result").first(Static).render())


@pytest.mark.parametrize("how", ["click", "key"])
async def test_deny_with_a_reason_tells_the_model(tmp_path: Path, how: str) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, "touch no.txt")
        reason = screen.query_one("#command-reason", Input)
        await (pilot.click("#deny-reason") if how == "click" else pilot.press("r"))
        await wait_until(pilot, lambda: reason.display and reason.has_focus, "the reason field")
        await pilot.press(*"run make test instead", "enter")
        await answered(app, pilot)
        [denied] = returns_on_disk(app, tmp_path)
        assert denied.content.endswith("The user's reason: run make test instead")


async def test_allow_the_prefix_for_the_session_by_click_or_p(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for how, (first, second) in (("click", ("touch a.txt", "touch b.txt")), ("key", ("mkdir c", "mkdir d"))):
            screen = await ask(pilot, first)
            assert first.split()[0] in str(screen.query_one("#allow-prefix").render())
            await (pilot.click("#allow-prefix") if how == "click" else pilot.press("p"))
            await answered(app, pilot)
            await pilot.press(*second, "enter")  # the same prefix: no dialog
            await wait_idle(app, pilot)
            assert not isinstance(app.screen, CommandApprovalScreen)
            assert (tmp_path / "work" / second.split()[1]).exists()
        await ask(pilot, "touch e.txt; touch f.txt")  # compound: asked again
        await pilot.press("n")
        await answered(app, pilot)
        assert not (tmp_path / "work" / "e.txt").exists()


@pytest.mark.parametrize("how", ["click", "key"])
async def test_allow_all_commands_for_the_session(tmp_path: Path, how: str) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "touch a.txt")
        await (pilot.click("#allow-session") if how == "click" else pilot.press("ctrl+a"))
        await answered(app, pilot)
        assert "commands auto-allowed" in str(app.query_one(TitleBar).render())  # in sight for the session
        await pilot.press(*"touch b.txt; touch c.txt", "enter")
        await wait_idle(app, pilot)
        assert not isinstance(app.screen, CommandApprovalScreen) and (tmp_path / "work" / "c.txt").exists()


async def test_a_compound_command_offers_no_prefix(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, "ls | head")
        assert not screen.query("#allow-prefix") and screen.request.prefix is None
        await pilot.press("p")  # does nothing: no prefix to allow
        await pilot.pause(0.1)
        assert isinstance(app.screen, CommandApprovalScreen)
        await pilot.press("n")
        await answered(app, pilot)


async def test_the_output_streams_into_the_block_while_the_command_runs(tmp_path: Path) -> None:
    release = tmp_path / "work" / "go"
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "echo first; printf 'hostile \\033]0;pwned\\007 end\\n'; "
                         "while [ ! -e go ]; do sleep 0.05; done; echo second")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.query(ToolBlock) and app.query_one(ToolBlock).output_view is not None
                         and "first" in app.query_one(ToolBlock).output_view.shown_text, "the first line")
        block = app.query_one(ToolBlock)
        assert app.runtime.busy and not block.collapsed  # still running, and the output is on screen
        shown = block.output_view.shown_text  # type: ignore[union-attr]
        assert "hostile ␛]0;pwned␇ end" in shown and "\x1b" not in shown
        release.touch()
        await wait_idle(app, pilot)
        assert "second" in block.output_view.shown_text  # type: ignore[union-attr]
        assert str(block.query(".tool-result").first(Static).render()).startswith("[exit status 0 · ")


async def test_user_command_runs_without_asking_and_the_model_reads_it_next_turn(tmp_path: Path) -> None:
    seen: list[str] = []
    app = app_for(tmp_path, seen)
    (tmp_path / "work" / "data.txt").write_text("from the user's command\n")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!cat data.txt; exit 4", "enter")
        await wait_idle(app, pilot)
        assert not isinstance(app.screen, CommandApprovalScreen)
        [block] = app.query(ToolBlock)
        assert "from the user's command" in block.output_view.shown_text  # type: ignore[union-attr]
        assert str(block.query(".tool-result").first(Static).render()).startswith("[exit status 4 · ")
        assert seen == []  # nothing went to the model yet
        [recorded] = on_disk(app, tmp_path)  # but it is on disk at once: quitting now loses nothing
        assert "from the user's command" in str(recorded.parts[0].content)  # type: ignore[union-attr]
        assert app.runtime.info.title == "untitled"  # the command's output is not what the session is about

        await pilot.press(*"echo next", "enter")
        await armed_dialog(pilot, CommandApprovalScreen, "the dialog")  # keys answer it only once armed
        await pilot.press("escape")
        await answered(app, pilot)
        assert "The user ran this shell command themselves (not you): `cat data.txt; exit 4`" in seen[0]
        assert "from the user's command\n[exit status 4 · " in seen[0] and seen[0].endswith("\n\necho next")
        requests = [m for m in on_disk(app, tmp_path) if isinstance(m, ModelRequest)]
        assert [str(p.content) for p in requests[1].parts if isinstance(p, UserPromptPart)] == ["echo next"]
        assert app.runtime.info.title == "echo next"


async def test_a_user_command_reads_the_same_after_a_reopen(tmp_path: Path) -> None:
    """Quit right after a !command: it is recorded, and the reopened session shows it as a command, not as text
    the user typed (nor is it sealed as a turn that got no answer)."""
    app = app_for(tmp_path)
    (tmp_path / "work" / "data.txt").write_text("kept line\n")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!cat data.txt", "enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: app.query(ToolBlock) and "exit status 0" in str(
            app.query_one(ToolBlock).query(".tool-result").first(Static).render()), "the command's end")
        session_id = app.runtime.info.session_id
        await app.runtime.aclose()
    first_frame = tail_blocks(read_session_tail(DataDir(tmp_path / "data"), session_id, 20))
    assert [type(block) for block in first_frame] == [UserBlock, ToolBlock]
    assert str(first_frame[1].title).startswith("! cat data.txt")
    reopened = make_app(make_factory(tmp_path, chat_model=commander()), SessionRequest(continue_latest=True))
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: reopened.query(ToolBlock), "the command's block")
        await pilot.pause(0.3)
        [block] = reopened.query(ToolBlock)
        assert str(block.title).startswith("! cat data.txt")
        result = str(block.query(".tool-result").first(Static).render())
        assert "kept line" in result and "[exit status 0 · " in result and "The user ran" not in result
        shown = " ".join(str(user.render()) for user in reopened.query(UserBlock))
        assert "!cat data.txt" in shown and "The user ran" not in shown
        [recorded] = on_disk(reopened, tmp_path)  # nothing was added to seal it
        assert isinstance(recorded, ModelRequest)


async def test_escape_stops_a_user_command(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!echo begun; sleep 300", "enter")
        await wait_until(pilot, lambda: app.query(ToolBlock) and app.query_one(ToolBlock).output_view is not None,
                         "the command's output")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.runtime.busy, "the command to stop")
        await wait_idle(app, pilot)
        assert "begun" in app.query_one(ToolBlock).output_view.shown_text  # type: ignore[union-attr]


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)
    answer = CommandApprovals.answer

    async def fixed_workdir(self, request):  # type: ignore[no-untyped-def]  # the tmp path differs each run
        return await answer(self, dataclasses.replace(request, workdir="/home/user/project"))

    monkeypatch.setattr(CommandApprovals, "answer", fixed_workdir)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
def test_command_dialog_snapshot(snap_compare, tmp_path: Path, fixed_ids: None, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def asked(pilot) -> None:  # type: ignore[no-untyped-def]
        await ask(pilot, "python -m pytest tests/test_app.py -q [b]x[/b]")
        await pilot.pause(0.1)

    assert snap_compare(app_for(tmp_path), terminal_size=size, run_before=asked)


async def test_without_a_sandbox_the_app_says_so_and_runs_nothing(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.agent.shell.sandbox.probe", lambda bwrap, network: "user namespaces are disabled")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: any("no sandbox is available" in str(n.message) and "--no-sandbox"
                                            in str(n.message) for n in app._notifications), "the notice")
        await pilot.press(*"!touch made.txt", "enter")
        await wait_idle(app, pilot)
        assert not (tmp_path / "work" / "made.txt").exists()
        [block] = app.query(ToolBlock)
        assert "user namespaces are disabled" in str(block.query(".tool-result").first(Static).render())
