"""MCP servers under the app (issue 29): escape sequences in a server's log notifications, its tool's result and
its arguments reach neither the screen nor any log line raw (29.8); a turn waiting for a server still starting
names it on the activity line (29.11)."""

from __future__ import annotations

import logging
from pathlib import Path

from tests.app.app_support import make_app, wait_idle, wait_until
from tests.support.mcp_server import server_config
from tests.support.scripted_model import ScriptedModel
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory
from tui.app.widgets.turn_activity import TurnActivity
from tui.base.config import Settings, ToolSettings
from tui.base.mcp_config import McpSettings
from tui.base.paths import DataDir

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m"
RAW = ("\x1b", "\x07", "\x9b")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_a_servers_log_notifications_are_visible_text_under_the_app(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = ScriptedModel(("log", {"level": "error", "text": f"boom {ESCAPES}", "logger_name": ESCAPES}),
                          ("log", {"level": "info", "text": ESCAPES}), ("echo", {"text": ESCAPES}))
    settings = Settings(tools=ToolSettings(mcp="always"), mcp=McpSettings((server_config("attack", "--attacks"),)))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model.model)
    records = Records()
    server_log = logging.getLogger("tui.agent.mcp.server_log")
    server_log.addHandler(records)
    level = server_log.level
    server_log.setLevel(logging.INFO)  # as the app's configure_logging sets the root
    try:
        app = make_app(factory)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*"go", "enter")
            await wait_until(pilot, lambda: len(model.returns) == 3, "the three calls", timeout=30)
            await wait_idle(app, pilot)
            screen = app.export_screenshot()
            notifications = [notification.message for notification in app._notifications]
    finally:
        server_log.removeHandler(records)
        server_log.setLevel(level)
    assert [part.content for part in model.returns] == ["logged", "logged", ESCAPES]  # the model gets the bytes
    said = [line for line in records.lines if "MCP server attack" in line and " says: " in line]
    assert sorted(said) == ["MCP server attack (␛]0;pwned␇␛[2J␛]52;c;cHduZWQ=␇\N{REPLACEMENT CHARACTER}31m) says: boom "
                    "␛]0;pwned␇␛[2J␛]52;c;cHduZWQ=␇\N{REPLACEMENT CHARACTER}31m",
                    "MCP server attack says: ␛]0;pwned␇␛[2J␛]52;c;cHduZWQ=␇\N{REPLACEMENT CHARACTER}31m"]  # any order
    assert not any(raw in line for raw in RAW for line in [*records.lines, *notifications, screen])
    assert "␛]0;pwned" in screen  # the echoed result is on screen, made visible


async def test_the_activity_line_names_the_servers_a_turn_waits_for(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    ready = tmp_path / "ready"
    model = ScriptedModel(("echo", {"text": "here now"}),)
    settings = Settings(tools=ToolSettings(mcp="always"),
                        mcp=McpSettings((server_config("slow", "--wait-for", str(ready), timeout=60),)))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model.model)
    app = make_app(factory)
    async with app.run_test(size=(80, 24)) as pilot:
        activity = app.query_one(TurnActivity)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: "starting MCP servers (slow)…" in activity.text, "the servers named",
                         timeout=60)
        assert activity.text.endswith("esc cancels")
        ready.touch()
        await wait_until(pilot, lambda: len(model.returns) == 1, "the slow server's tool", timeout=60)
        await wait_until(pilot, lambda: "starting MCP servers" not in activity.text, "the line past the servers")
        await wait_idle(app, pilot)
    assert model.returned("echo").content == "here now"
