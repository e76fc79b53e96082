"""The app's trust prompt for a project whose config is (or includes) a ``.mcp.json`` (issue 21.4): it lists the
MCP servers the file would start, as plain text; **Trust** starts them (their tools are offered), **Not now**
starts nothing. The app is built as ``deep-tui`` builds it (``resolve_context`` in the clone, the real gate)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from tests.app.app_support import wait_until
from tests.app.test_project_trust import SIZE, SnapCompare, answer, launched_app, snapshot_app, the_prompt
from tests.cli.test_mcp_trust import mcp_json
from tui.base.config import Settings
from tui.base.config_layers import parse_config
from tui.base.mcp_config import McpServerConfig
from tui.base.paths import DataDir, trust_store_file, user_config_file
from tui.cli.launch import LaunchContext, ProjectTrustGate
from tui.trust.project import ProjectConfig, TrustState, pending_project
from tui.trust.store import TrustStore


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned project with only a ``.mcp.json`` whose server writes ``tmp_path/started`` when it starts."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".mcp.json").write_text(mcp_json(tmp_path / "started"), encoding="utf-8")
    user_config_file().parent.mkdir(parents=True)
    user_config_file().write_text('model = "offline"\n', encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def servers_shown(screen: Any) -> str:
    return str(screen.query_one("#trust-servers", Static).render())


async def test_the_prompt_lists_the_server_and_not_now_starts_nothing(clone: Path, tmp_path: Path) -> None:
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await the_prompt(pilot)
        assert f"{clone}/.mcp.json" in str(screen.query_one("#trust-where", Static).render())
        assert "run as you, outside any sandbox" in str(screen.query_one("#trust-warning", Static).render())
        shown = servers_shown(screen)
        assert shown.startswith("MCP servers it would start (from .mcp.json):")
        assert f"tester  {sys.executable} -m tests.support.mcp_server" in shown
        await answer(pilot, "click", "#trust-not-now")
        assert app.factory is not None and app.factory.mcp is None
        await pilot.pause(0.5)
    assert not (tmp_path / "started").exists()
    assert not trust_store_file().exists()


@pytest.mark.parametrize(("how", "what"), [("key", "t"), ("click", "#trust-trust")])
async def test_trust_starts_the_projects_server_and_offers_its_tools(clone: Path, tmp_path: Path,
                                                                     how: str, what: str) -> None:
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        await the_prompt(pilot)
        await answer(pilot, how, what)
        factory = app.factory
        assert factory is not None and factory.mcp is not None
        mcp = factory.mcp
        await wait_until(pilot, lambda: "echo" in mcp.current_tools(), "the project's server's tools")
        assert [server.name for server in mcp.servers] == ["tester"]
        assert (tmp_path / "started").exists()
    record = TrustStore(trust_store_file()).lookup(clone)
    assert record is not None and record.settings["mcpServers.tester"].startswith(sys.executable)


async def test_hostile_commands_are_shown_as_plain_escaped_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".mcp.json").write_text(
        '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "[bold red]big[/] \\u001b]0;pwned\\u0007 \\u009b2J'
        + "A" * 600 + '"]}}}', encoding="utf-8")
    monkeypatch.chdir(clone)
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await the_prompt(pilot)
        shown = servers_shown(screen)
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
        assert "\n  x  sh -c '[bold red]big[/] \N{SYMBOL FOR ESCAPE}]0;pwned\N{SYMBOL FOR BELL} \N{REPLACEMENT CHARACTER}2JAAA" in shown
        assert shown.endswith("…") and len(shown) < 450
        await answer(pilot, "key", "escape")


def mcp_pending() -> ProjectTrustGate:
    """A fixed project (config.toml and .mcp.json), so the picture does not depend on the test's tmp dir."""
    root = Path("/home/me/src/shop")
    text = b'model = "openai-chat:gpt-4.1"\n[tools]\nwrites = "always"\n'
    servers = (
        McpServerConfig("github", "stdio", command="npx", args=("-y", "@modelcontextprotocol/server-github"),
                        env={"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}, source=".mcp.json"),
        McpServerConfig("docs", "http", url="https://mcp.example.com/mcp", source=".mcp.json"),
    )
    config = ProjectConfig(root, root / ".deep-tui" / "config.toml", "sha256:00",
                           parse_config(text, "/home/me/src/shop/.deep-tui/config.toml"),
                           mcp_path=root / ".mcp.json", servers=servers)
    pending = pending_project(config, TrustState.UNTRUSTED, None, [])
    return ProjectTrustGate(LaunchContext(Settings(), DataDir(root / ".deep-tui"), root, None, project_trusted=False,
                                          pending_project=pending))


async def prompt_shown(pilot: Pilot[Any]) -> None:
    await the_prompt(pilot)
    await pilot.pause()


def test_trust_prompt_with_mcp_servers_snapshot_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(snapshot_app(tmp_path, mcp_pending()), terminal_size=(80, 24), run_before=prompt_shown)
