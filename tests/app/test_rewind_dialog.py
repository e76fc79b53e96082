"""The rewind dialog: restore points newest first with the files each prompt changed, the plan of the chosen one
(diff, conflicts answered per file: keep mine / take snapshot), the three restores as buttons and keys, Esc back;
snapshots at 80x24 and 60x20. A stand-in session gives fixed restore points (the real ones: tests/agent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from textual.app import App, ComposeResult
from textual.widgets import Button, OptionList, Static

from tests.app.app_support import wait_until
from tui.agent.rewind.restore import FileStat, RestorePlan, RewindPoint
from tui.agent.rewind.shadow_repo import TreeChange, TreeEntry
from tui.app.screens.rewind_dialog import RewindChoice, RewindDialog
from tui.store.checkpoints_file import CheckpointRecord

TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
DIFF = """diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,3 @@
 import sys
-print("new behaviour")
+print("old behaviour")
 sys.exit(0)
diff --git a/notes.md b/notes.md
deleted file mode 100644
--- a/notes.md
+++ /dev/null
@@ -1 +0,0 @@
-written by the agent
"""


class StandIn:
    """Two restore points (messages 1 and 5); planning message 5 finds notes.md changed outside deep-tui."""

    def __init__(self, *, conflicts: tuple[str, ...] = ("src/app.py",)) -> None:
        self.conflicts = conflicts
        self.planned: list[int] = []

    async def rewind_points(self) -> list[RewindPoint]:
        first = CheckpointRecord(message=1, tree=TREE, workdir="/w")
        second = CheckpointRecord(message=5, tree=TREE, workdir="/w")
        return [RewindPoint(second, (FileStat("src/app.py", 12, 3), FileStat("notes.md", 1, 0, "added"))),
                RewindPoint(first, (FileStat("logo.png", None, None),))]

    async def plan_rewind(self, message: int) -> RestorePlan:
        self.planned.append(message)
        entry = TreeEntry("100644", TREE)
        return RestorePlan(CheckpointRecord(message=message, tree=TREE, workdir="/w"), TREE,
                           (TreeChange("src/app.py", entry, entry), TreeChange("notes.md", entry, None)),
                           (FileStat("src/app.py", 1, 1), FileStat("notes.md", 0, 1, "deleted")), self.conflicts)

    async def rewind_preview(self, plan: RestorePlan, paths: Sequence[str] = ()) -> str:
        return DIFF

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]:
        prompts = {0: "read the project and list its modules", 4: "make the parser print the new behaviour"}
        return [ModelRequest(parts=[UserPromptPart(prompts.get(start, "?"))])]


class Host(App[None]):
    def __init__(self, source: Any) -> None:
        super().__init__()
        self.source = source
        self.results: list[RewindChoice | None] = []

    def compose(self) -> ComposeResult:
        yield Static("the chat")

    def on_mount(self) -> None:
        self.push_screen(RewindDialog(self.source), self.results.append)


def dialog(app: Host) -> RewindDialog:
    screen = app.screen
    assert isinstance(screen, RewindDialog)
    return screen


async def listed(pilot: Any, app: Host) -> None:
    await wait_until(pilot, lambda: isinstance(app.screen, RewindDialog)
                     and dialog(app).query_one("#points", OptionList).option_count == 2, "the restore points")


async def planned(pilot: Any, app: Host) -> None:
    await listed(pilot, app)
    await pilot.press("enter")
    await wait_until(pilot, lambda: dialog(app).has_class("-planned"), "the plan")


async def test_points_newest_first_then_the_plan_and_a_conflict_answered_by_click(tmp_path: Any) -> None:
    source = StandIn()
    app = Host(source)
    async with app.run_test(size=(100, 30)) as pilot:
        await listed(pilot, app)
        options = dialog(app).query_one("#points", OptionList)
        assert "message 5" in str(options.get_option_at_index(0).prompt)
        assert "+12 −3 src/app.py" in str(options.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog(app).has_class("-planned"), "the plan")
        assert source.planned == [5]
        screen = dialog(app)
        assert screen.query_one("#both", Button).disabled and screen.query_one("#code", Button).disabled
        await pilot.press("f")  # refused while the conflict has no answer
        assert app.results == []
        await pilot.click("#conflict-0 #mine")
        assert not screen.query_one("#both", Button).disabled
        await pilot.click("#both")
        await wait_until(pilot, lambda: app.results, "the choice")
    [choice] = app.results
    assert choice is not None and (choice.mode, choice.message, choice.choices) == ("both", 5, {"src/app.py": "mine"})
    assert choice.plan is not None and choice.plan.point.message == 5


@pytest.mark.parametrize(("button", "mode"), [("#code", "code"), ("#conversation", "conversation")])
async def test_each_restore_button(button: str, mode: str) -> None:
    app = Host(StandIn(conflicts=()))
    async with app.run_test(size=(100, 30)) as pilot:
        await planned(pilot, app)
        await pilot.click(button)
        await wait_until(pilot, lambda: app.results, "the choice")
    [choice] = app.results
    assert choice is not None and choice.mode == mode and (choice.plan is None) == (mode == "conversation")


async def test_take_snapshot_then_keys_and_esc_goes_back_then_closes() -> None:
    app = Host(StandIn())
    async with app.run_test(size=(100, 30)) as pilot:
        await planned(pilot, app)
        await pilot.press("escape")
        assert not dialog(app).has_class("-planned")
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog(app).has_class("-planned"), "the plan again")
        await pilot.click("#conflict-0 #snapshot")
        await pilot.press("b")
        await wait_until(pilot, lambda: app.results, "the choice")
    assert app.results[0] is not None and app.results[0].choices == {"src/app.py": "snapshot"}

    app = Host(StandIn())
    async with app.run_test(size=(100, 30)) as pilot:
        await listed(pilot, app)
        await pilot.click("#close")
        await wait_until(pilot, lambda: app.results, "the close")
    assert app.results == [None]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
def test_rewind_dialog_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    async def plan_shown(pilot: Any) -> None:
        await planned(pilot, pilot.app)
        await pilot.pause(0.1)

    assert snap_compare(Host(StandIn()), terminal_size=size, run_before=plan_shown)


def test_rewind_list_snapshot(snap_compare: Any) -> None:
    async def points_shown(pilot: Any) -> None:
        await listed(pilot, pilot.app)
        await pilot.pause(0.1)

    assert snap_compare(Host(StandIn()), terminal_size=(80, 24), run_before=points_shown)
