"""MemoryEditor: save, revert, external changes (clean and dirty buffers), real watchfiles pickup."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Static
from textual.worker import WorkerState

from tests.app.app_support import PATIENCE, wait_until
from tui.app.screens.basic_dialogs import ChoiceModal, ConfirmModal, TextViewerModal
from tui.app.widgets.memory_editor import MemoryEditor
from tui.base.atomic import write_atomic

STYLES = Path(__file__).resolve().parents[2] / "styles" / "panels.tcss"


class EditorApp(App[None]):
    """Mounts one MemoryEditor and records the Saved messages it posts."""

    CSS_PATH = STYLES

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.saved: list[Path] = []

    def compose(self) -> ComposeResult:
        yield MemoryEditor(self.path)

    def on_memory_editor_saved(self, message: MemoryEditor.Saved) -> None:
        self.saved.append(message.path)


def status_text(app: App[None]) -> str:
    return str(app.query_one("#memory-status", Static).render())


async def type_text(editor: MemoryEditor, text: str) -> None:
    editor.text_area.move_cursor(editor.text_area.document.end)
    editor.text_area.insert(text)


async def test_loads_file_and_save_writes_it_atomically(tmp_path: Path) -> None:
    path = tmp_path / "main" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("# Memory\n- likes tea\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        assert editor.text == "# Memory\n- likes tea\n"
        assert not editor.dirty
        assert "saved" in status_text(app)
        await type_text(editor, "- prefers pytest\n")
        await pilot.pause()
        assert editor.dirty
        assert "unsaved" in status_text(app)
        editor.text_area.focus()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert path.read_text(encoding="utf-8") == "# Memory\n- likes tea\n- prefers pytest\n"
        assert not editor.dirty
        assert app.saved == [path]
        assert [p.name for p in path.parent.iterdir()] == ["MEMORY.md"]  # no temp file left behind


async def test_save_creates_missing_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "MEMORY.md"
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        assert editor.text == ""
        assert "new file" in status_text(app)
        await type_text(editor, "remember this")
        await pilot.click("#memory-save")
        await pilot.pause()
        assert path.read_text(encoding="utf-8") == "remember this\n"


def test_atomic_write_keeps_permissions(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o600)
    write_atomic(path, "new ✓", durable=True)
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert path.stat().st_mode & 0o777 == 0o600


async def test_revert_asks_then_discards_edits(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("original\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "scratch")
        editor.text_area.focus()
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")  # cancel keeps the edits
        await pilot.pause()
        assert editor.text == "original\nscratch"
        await pilot.click("#memory-revert")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert editor.text == "original\n"
        assert not editor.dirty
        assert path.read_text(encoding="utf-8") == "original\n"


async def test_external_change_with_clean_buffer_reloads_silently(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        editor.external_change_detected("v2 from the agent\n")
        await pilot.pause()
        assert editor.text == "v2 from the agent\n"
        assert not editor.dirty
        assert not isinstance(app.screen, ChoiceModal)
        assert "reloaded" in status_text(app)
        assert editor.last_external_change is not None


async def test_own_save_does_not_prompt(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "mine\n")
        assert editor.save()
        await type_text(editor, "more unsaved\n")
        editor.external_change_detected(path.read_text(encoding="utf-8"))  # the watcher seeing our own write
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceModal)
        assert editor.text == "v1\nmine\nmore unsaved\n"
        assert editor.last_external_change is None


async def test_dirty_buffer_keep_mine(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "my edit\n")
        path.write_text("theirs\n", encoding="utf-8")
        editor.external_change_detected("theirs\n")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("k")
        await pilot.pause()
        assert editor.text == "v1\nmy edit\n"
        assert editor.dirty
        assert path.read_text(encoding="utf-8") == "theirs\n"  # nothing overwritten yet
        assert editor.save()  # the user chose theirs to be replaced: no second prompt
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceModal)
        assert path.read_text(encoding="utf-8") == "v1\nmy edit\n"


async def test_dirty_buffer_load_theirs(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "my edit\n")
        editor.external_change_detected("theirs\n")
        await pilot.pause()
        await pilot.click("#choice-theirs")
        await pilot.pause()
        assert editor.text == "theirs\n"
        assert not editor.dirty
        assert "loaded the disk version" in status_text(app)


async def test_dirty_buffer_show_diff_then_asks_again(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "my edit\n")
        editor.external_change_detected("theirs\n")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, TextViewerModal)
        body = str(app.screen.query_one("#viewer-body Static", Static).render())
        assert "-theirs" in body and "+my edit" in body
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)  # back to the question
        await pilot.press("escape")  # Esc = keep mine, decide later
        await pilot.pause()
        assert editor.text == "v1\nmy edit\n"


async def test_second_change_while_asking_updates_the_pending_text(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "mine\n")
        editor.external_change_detected("theirs 1\n")
        editor.external_change_detected("theirs 2\n")
        await pilot.pause()
        assert len([s for s in app.screen_stack if isinstance(s, ChoiceModal)]) == 1
        await pilot.press("l")
        await pilot.pause()
        assert editor.text == "theirs 2\n"


async def test_save_notices_unreported_disk_change(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "mine\n")
        path.write_text("agent wrote this\n", encoding="utf-8")
        assert not editor.save()
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        assert path.read_text(encoding="utf-8") == "agent wrote this\n"


async def test_deleted_file_keeps_buffer(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("v1\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        path.unlink()
        editor.external_change_detected(None)
        await pilot.pause()
        assert editor.text == "v1\n"
        assert editor.dirty
        assert "deleted on disk" in status_text(app)


async def test_real_watchfiles_picks_up_external_write(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("before\n", encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        deadline = time.monotonic() + PATIENCE
        attempt = 0
        expected = ""
        while time.monotonic() < deadline:
            # Rewrite now and then: a write made before the watcher started is not reported.
            if attempt % 10 == 0:
                expected = f"written by the agent #{attempt}\n"
                path.write_text(expected, encoding="utf-8")
            attempt += 1
            await asyncio.sleep(0.1)
            await pilot.pause()
            if editor.text == expected:
                break
        assert editor.text == expected
        assert "reloaded" in status_text(app)
        # Our own save is seen by the watcher too, and must not prompt.
        await type_text(editor, "appended\n")
        assert editor.save()
        await asyncio.sleep(1.0)
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceModal)
        assert editor.text == expected + "appended\n"


async def test_unreadable_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"\xff\xfe not utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        assert editor.text_area.read_only
        assert "unreadable" in status_text(app)
        assert not editor.save()
        await pilot.pause()
        assert path.read_bytes() == b"\xff\xfe not utf-8"
        assert app.saved == []


async def test_saved_memory_ends_with_a_newline_so_an_appended_line_stays_separate(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("- first", encoding="utf-8")  # written by something else, without a final newline
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await type_text(editor, "\n- second")
        editor.text_area.focus()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert path.read_text(encoding="utf-8") == "- first\n- second\n"
        assert editor.text == "- first\n- second\n" and not editor.dirty, "the buffer shows what was saved"
        with path.open("a", encoding="utf-8") as outside:  # `echo "- third" >> MEMORY.md`
            outside.write("- third\n")
        assert path.read_text(encoding="utf-8").splitlines() == ["- first", "- second", "- third"]


async def test_a_huge_memory_file_opens_read_only_with_a_notice(tmp_path: Path) -> None:
    from tui.app.memory_io import MAX_EDIT_BYTES, PREVIEW_BYTES

    path = tmp_path / "MEMORY.md"
    huge = "x" * (10 * 1024 * 1024)  # 10 MB on one line
    path.write_text(huge, encoding="utf-8")
    app = EditorApp(path)
    async with app.run_test() as pilot:
        await pilot.pause()
        editor = app.query_one(MemoryEditor)
        assert editor.too_large and editor.text_area.read_only
        assert len(editor.text) == PREVIEW_BYTES < MAX_EDIT_BYTES
        assert "too large to edit here" in status_text(app)
        assert any("read-only" in str(n.message) for n in app._notifications)
        editor.text_area.focus()
        await pilot.press(*"typed", "ctrl+s")
        await pilot.pause()
        assert path.stat().st_size == len(huge), "nothing typed, nothing saved: the file is untouched"
        path.write_text("# Memory\n- small again\n", encoding="utf-8")  # cut down by another editor
        editor.reload_from_disk()
        await pilot.pause()
        assert not editor.too_large and not editor.text_area.read_only
        assert editor.text == "# Memory\n- small again\n"


async def test_a_missing_memory_directory_is_not_created_but_followed_once_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "data" / "main" / "MEMORY.md"
    app = EditorApp(path)
    async with app.run_test() as pilot:
        editor = app.query_one(MemoryEditor)
        await wait_until(pilot, lambda: any(worker.group == "memory-watch" and worker.state == WorkerState.RUNNING
                                            for worker in app.workers), "the watcher to be waiting")
        assert not (tmp_path / "data").exists(), "opening the editor creates nothing on disk"
        deadline = time.monotonic() + PATIENCE
        path.parent.mkdir(parents=True)
        path.write_text("- written by the agent\n", encoding="utf-8")
        while editor.text != "- written by the agent\n" and time.monotonic() < deadline:
            path.write_text("- written by the agent\n", encoding="utf-8")  # again, in case the watch was late
            await asyncio.sleep(0.2)
            await pilot.pause()
        assert editor.text == "- written by the agent\n"


async def test_quitting_with_unsaved_memory_edits_asks_first(tmp_path: Path) -> None:
    """Ctrl+Q with edits in the MEMORY.md editor that are not saved: asked first (they were lost without a word);
    Back keeps the app and the edits, Quit anyway quits."""
    from tests.app.app_support import make_app, make_factory, wait_until
    from tui.app.screens.basic_dialogs import ConfirmModal

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: bool(app.query("#memory-text")) and app.focused is not None
                         and app.focused.id == "memory-text", "the editor, focused")
        editor = app.main_screen.query_one(MemoryEditor)
        await pilot.press(*"remember the walrus")
        await wait_until(pilot, lambda: editor.dirty, "unsaved edits")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        await pilot.click("#cancel")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmModal), "back to the editor")
        assert app.is_running and "remember the walrus" in editor.text_area.text
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question again")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: not app.is_running, "quit")
    assert app.return_code in (0, None)
