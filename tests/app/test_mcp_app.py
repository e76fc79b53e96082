"""MCP servers in the app (issue 21.4): their tools ask through the approval dialog (keys and clicks), a
server that fails is a notification, /mcp lists servers, status and tools, and the servers start after the
first frame and end with the app."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.app.app_support import armed_dialog, dialog_answered, make_app, wait_idle, wait_until
from tests.support.mcp_server import server_config
from tests.support.scripted_model import ScriptedModel
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory
from tui.app.app import DeepTuiApp
from tui.app.screens.mcp_servers import McpServersScreen
from tui.app.screens.write_approval import WriteApprovalScreen
from tui.app.widgets.turn_activity import TurnActivity
from tui.base.config import Settings
from tui.base.mcp_config import McpServerConfig, McpSettings
from tui.base.paths import DataDir

SIZE = (120, 36)


def make_factory(tmp_path: Path, *servers: McpServerConfig, model: ScriptedModel | None = None) -> RuntimeFactory:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return RuntimeFactory(settings=Settings(mcp=McpSettings(tuple(servers))), data_dir=DataDir(tmp_path / "data"),
                          workdir=work, choice=choose_model("offline", None),
                          chat_model=model.model if model is not None else None)


def all_started(app: DeepTuiApp) -> bool:
    return app.factory is not None and app.factory.mcp is not None and all(
        view.status != "starting" for view in app.factory.mcp.views())


async def send(pilot, text: str = "go") -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text, "enter")


async def approval(pilot) -> WriteApprovalScreen:  # type: ignore[no-untyped-def]
    return await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")


async def answered(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await dialog_answered(app, pilot, WriteApprovalScreen)


def panel_open(app: DeepTuiApp) -> bool:
    return isinstance(app.screen, McpServersScreen) and bool(app.screen.query("#mcp-servers"))


def text_of(screen, selector: str) -> str:  # type: ignore[no-untyped-def]
    return str(screen.query_one(selector, Static).render())


async def test_an_mcp_tool_asks_with_server_tool_and_arguments_and_every_answer_holds(tmp_path: Path) -> None:
    model = ScriptedModel(("echo", {"text": "[b]hi[/b] \x1b]0;pwned\x07"}))
    app = make_app(make_factory(tmp_path, server_config(), model=model))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot)
        screen = await approval(pilot)
        assert text_of(screen, "#approval-summary") == "The agent wants to call echo on MCP server tests"
        body = text_of(screen, "#approval-diff")
        assert '"text": "[b]hi[/b] \\u001b]0;pwned\\u0007"' in body and "\x1b" not in body  # plain text, never markup
        await pilot.click("#allow-once")
        await answered(app, pilot)
        assert [p.outcome for p in model.returns] == ["success"]

        await send(pilot)
        await approval(pilot)
        await pilot.press("n")
        await answered(app, pilot)
        assert model.returns[-1].outcome == "denied" and "the user denied echo" in str(model.returns[-1].content)

        await send(pilot)
        await approval(pilot)
        await pilot.click("#allow-session")
        await answered(app, pilot)
        await send(pilot)  # allowed for the session: no dialog
        await wait_until(pilot, lambda: len(model.returns) == 4, "the fourth call")
        await wait_idle(app, pilot)
        assert not isinstance(app.screen, WriteApprovalScreen)
        assert [p.outcome for p in model.returns] == ["success", "denied", "success", "success"]


async def test_a_failed_server_is_a_notification_and_mcp_lists_status_and_tools(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    broken = McpServerConfig("broken", "stdio", command="deep-tui-test-no-such-server", source="config.toml")
    app = make_app(make_factory(tmp_path, server_config(env={"MCP_TEST_PID_FILE": str(pid_file)}), broken))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: all_started(app), "the servers to start or fail")
        await pilot.pause(0.05)
        messages = [notification.message for notification in app._notifications]
        assert len(messages) == 1 and messages[0].startswith("MCP server broken failed to start: ")
        assert "No such file or directory: 'deep-tui-test-no-such-server'" in messages[0]

        await send(pilot, "/mcp")
        await wait_until(pilot, lambda: panel_open(app), "the /mcp panel")
        shown = text_of(app.screen, "#mcp-servers")
        assert "tests  ready" in shown and "broken  failed: Client failed to connect: " in shown
        lines = shown.splitlines()
        assert "  tests_read_file (the server's read_file) — A tool whose name clashes with deep-tui's own read_file." \
            in lines and not any(line.startswith("  read_file") for line in lines)  # deep-tui's own name is taken
        assert "  echo — Return the text unchanged." in lines
        await pilot.click("#mcp-close")
        await wait_until(pilot, lambda: not isinstance(app.screen, McpServersScreen), "the panel to close")

        app.action_mcp()
        await wait_until(pilot, lambda: panel_open(app), "the panel again")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, McpServersScreen), "Esc to close it")
        pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # the server ended with the app
        os.kill(pid, 0)


async def test_a_server_still_starting_does_not_hold_up_the_app(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, server_config("slow", "--hang", timeout=30)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"typing works")
        assert app.query_one("#prompt").text == "typing works"  # type: ignore[attr-defined]
        app.action_mcp()
        await wait_until(pilot, lambda: panel_open(app), "the /mcp panel")
        assert "slow  starting" in text_of(app.screen, "#mcp-servers")
    assert app.factory is not None and app.factory.mcp is not None
    assert [view.status for view in app.factory.mcp.views()] == ["stopped"]  # given up on when the app closed


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)


def test_mcp_panel_snapshot(snap_compare, tmp_path: Path, fixed_ids: None) -> None:  # type: ignore[no-untyped-def]
    missing = McpServerConfig("missing", "stdio", command="deep-tui-test-no-such-server", args=("--stdio",),
                              source="config.toml")
    app = make_app(make_factory(tmp_path, server_config(), missing))

    async def open_panel(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: all_started(app), "the servers to start or fail")
        app.clear_notifications()
        await send(pilot, "/mcp")
        await wait_until(pilot, lambda: panel_open(app), "the /mcp panel")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_panel)


def test_mcp_approval_dialog_snapshot(snap_compare, tmp_path: Path, fixed_ids: None) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(("tests_read_file", {"path": "src/[b]app[/b].py", "lines": [1, 2]}),)
    app = make_app(make_factory(tmp_path, server_config(), model=model))

    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: all_started(app), "the server to start")
        await send(pilot)
        await approval(pilot)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ask)


def test_a_turn_waiting_for_a_starting_server_snapshot(snap_compare, tmp_path: Path, fixed_ids: None) -> None:  # type: ignore[no-untyped-def]
    app = make_app(make_factory(tmp_path, server_config("github", "--hang", timeout=600)))

    async def waiting(pilot) -> None:  # type: ignore[no-untyped-def]
        await send(pilot)
        activity = app.query_one(TurnActivity)
        await wait_until(pilot, lambda: "starting MCP servers (github)…" in activity.text, "the servers named")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=waiting)
