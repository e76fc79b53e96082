"""/agents: the subagent types (built in, the user's, a trusted project's), each with where it comes from, its
description, tools and model, and the files skipped — hostile text shown as plain text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot

from tests.app.app_support import wait_until
from tui.agent.subagents.subagent_definitions import SubagentCatalog, load_subagents
from tui.app.screens.agents_list import AgentsScreen, agents_content

STYLES = Path(__file__).resolve().parents[2] / "styles" / "deep_tui.tcss"
SnapCompare = Callable[..., bool]


class HostApp(App[None]):
    CSS_PATH = STYLES

    def __init__(self, catalog: SubagentCatalog, user_dir: Path) -> None:
        super().__init__()
        self.catalog, self.user_dir = catalog, user_dir

    def on_mount(self) -> None:
        self.push_screen(AgentsScreen(self.catalog, self.user_dir))


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SubagentCatalog, Path]:
    monkeypatch.chdir(tmp_path)
    user, project = tmp_path / "config", tmp_path / "project"
    (user / "agents").mkdir(parents=True)
    (user / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep, Telepathy!\n---\nReview.\n")
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "explore.md").write_text(
        "---\nname: explore\ndescription: Finds things \x1b[31mfast\x1b[0m\nmodel: openai:gpt-4.1-mini\n---\n")
    (project / ".claude" / "agents" / "broken.md").write_text("---\nname: broken\n")
    return load_subagents(project_root=project, user_dir=user), user


def test_the_list_names_origin_tools_model_and_what_was_skipped(catalog: tuple[SubagentCatalog, Path]) -> None:
    text = agents_content(*catalog).plain
    assert text.index("general-purpose") < text.index("explore") < text.index("reviewer")
    assert "from project · project/.claude/agents/explore.md" in text
    assert "tools: read_file, grep (unknown, left out: Telepathy!) · model: the session’s" in text
    assert "model: openai:gpt-4.1-mini" in text and "\x1b" not in text
    assert "Skipped:" in text and "broken.md" in text


def test_with_no_definition_it_says_where_to_put_one(tmp_path: Path) -> None:
    text = agents_content(SubagentCatalog(), tmp_path / "config").plain
    assert "No subagent definitions. Put one in" in text and "agents" in text and "name: reviewer" in text


def test_the_agents_screen_at_80x24(snap_compare: SnapCompare, catalog: tuple[SubagentCatalog, Path]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, AgentsScreen))
        await pilot.pause()

    found, user = catalog
    steady = SubagentCatalog(found.definitions, tuple(line.replace(str(Path.cwd()) + "/", "") for line in found.warnings))
    assert snap_compare(HostApp(steady, user), terminal_size=(80, 24), run_before=run_before)


async def test_close_and_esc_close_it(catalog: tuple[SubagentCatalog, Path]) -> None:
    app = HostApp(*catalog)
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.click("#agents-close")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen), "Close to close it")
        app.push_screen(AgentsScreen(*catalog))
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen), "Esc to close it")
