"""Issue 22.10 and 22.4: the memory editor keeps the user's place across a live reload; Ctrl+End / Ctrl+Home."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from textual.widgets.text_area import Selection
from textual.worker import WorkerState

from tests.app.app_support import PATIENCE, make_app, make_factory, wait_until
from tests.app.test_memory_editor import EditorApp
from tui.app.screens.basic_dialogs import ChoiceModal
from tui.app.widgets.memory_editor import MemoryEditor


async def test_typing_after_a_live_reload_goes_where_the_user_was_not_onto_the_outside_line(tmp_path: Path) -> None:
    """The user types two lines and saves; a line is appended from outside (watchfiles picks it up); what the
    user types next lands on their own new line, not glued to the front of the outside one."""
    path = tmp_path / "MEMORY.md"
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await wait_until(pilot, lambda: any(worker.group == "memory-watch" and worker.state == WorkerState.RUNNING
                                            for worker in app.workers), "the watcher")
        editor.text_area.focus()
        await pilot.press(*"# Memory", "enter", *"- likes tea", "enter", "ctrl+s")
        await wait_until(pilot, lambda: path.exists(), "the save")
        outside = "# Memory\n- likes tea\n- outside fact\n"
        deadline = time.monotonic() + PATIENCE
        while editor.text != outside and time.monotonic() < deadline:
            path.write_text(outside, encoding="utf-8")  # again now and then: the watcher may not be listening yet
            for _ in range(10):
                await asyncio.sleep(0.05)
                await pilot.pause()
                if editor.text == outside:
                    break
        assert editor.text == outside, "the outside change was reloaded"
        await pilot.press(*"typed", "ctrl+s")
        await pilot.pause()
        assert path.read_text(encoding="utf-8") == "# Memory\n- likes tea\n- outside fact\ntyped\n"


async def test_lines_added_above_and_below_keep_the_cursor_and_selection_in_their_text(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# Memory\n- likes tea\n- uses vim\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        area = editor.text_area
        area.focus()
        area.move_cursor((1, 8))  # after "- likes "
        editor.external_change_detected("# Memory\n- new first fact\n- likes tea\n- uses vim\n- new last fact\n")
        await pilot.pause()
        assert area.cursor_location == (2, 8)
        await pilot.press(*"green ")
        assert area.document.get_line(2) == "- likes green tea"

        area.selection = Selection((3, 2), (3, 9))  # "uses vi"
        editor.external_change_detected(editor.text)  # the disk now holds the edits (saved elsewhere): no move
        editor.external_change_detected("# Memory\n- new first fact\n- likes green tea\n- uses vim\n")
        assert area.selection == Selection((3, 2), (3, 9)), "a line removed below leaves the selection alone"
        editor.external_change_detected("intro\n\n" + editor.text)
        await pilot.pause()
        assert area.selected_text == "uses vi"


async def test_loading_theirs_after_a_conflict_keeps_the_place_too(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("one\ntwo\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        area = editor.text_area
        area.focus()
        await pilot.press("down", "end", *" (mine)")
        assert editor.dirty
        editor.external_change_detected("zero\none\ntwo\nthree\n")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceModal), "the conflict dialog")
        await pilot.press("l")  # load theirs
        await wait_until(pilot, lambda: editor.text == "zero\none\ntwo\nthree\n", "their version")
        assert area.cursor_location[0] == 2, "still on the line 'two'"


async def test_ctrl_end_and_ctrl_home_go_to_the_end_and_start_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# Memory\n- likes tea\n- uses vim", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        area = app.query_one(MemoryEditor).text_area
        area.focus()
        area.move_cursor((1, 3))
        await pilot.press("ctrl+end")
        assert area.cursor_location == (2, 10)
        await pilot.press("ctrl+home")
        assert area.cursor_location == (0, 0)
        await pilot.press("ctrl+shift+end")
        assert area.selected_text == "# Memory\n- likes tea\n- uses vim"
        await pilot.press("right", "ctrl+shift+home")
        assert area.selected_text == "# Memory\n- likes tea\n- uses vim"


async def test_ctrl_end_in_the_apps_memory_panel(tmp_path: Path) -> None:
    """In the app itself (Ctrl+O opens the panel): no app key takes Ctrl+End from the editor."""
    factory = make_factory(tmp_path)
    memory = factory.data_dir.memory_file()
    memory.parent.mkdir(parents=True)
    memory.write_text("# Memory\n- likes tea\n", encoding="utf-8")
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+o")
        editor = app.query_one(MemoryEditor)
        await wait_until(pilot, lambda: app.focused is editor.text_area and editor.text.startswith("# Memory"),
                         "the editor to have the keyboard")
        await pilot.press("ctrl+end", *"- prefers pytest")
        assert editor.text == "# Memory\n- likes tea\n- prefers pytest"
