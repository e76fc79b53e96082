"""The MEMORY.md editor panel: edit, save atomically, and follow changes made on disk.

The agent's memory tools (or another editor) may rewrite the file while it is
open here. A watcher notices; a clean buffer reloads silently, a buffer with
unsaved edits asks the user which side to keep. Nothing is ever overwritten
without the user choosing it.

This module is the panel (layout, keys, save, revert) and the watcher; the buffer's state against
the file, loading it, and reconciling a change made on disk are :class:`MemoryBuffer`'s
(:mod:`tui.app.widgets.memory_buffer`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static, TextArea
from watchfiles import awatch

from tui.app.formatting import clock_time, literal
from tui.app.memory_io import MAX_EDIT_BYTES, file_size, read_text_or_none, with_final_newline
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.text_display import display_path, supported_language
from tui.app.widgets.memory_buffer import MemoryBuffer
from tui.base.atomic import write_atomic

if TYPE_CHECKING:
    from textual.app import ComposeResult

__all__ = ["MemoryEditor", "MemoryTextArea"]

WATCH_DEBOUNCE_MS = 250
"""How long the watcher lets a burst of writes settle before reporting it."""


class MemoryTextArea(TextArea):
    """TextArea with the document keys editors share: Ctrl+Home / Ctrl+End (Shift: select)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+home", "document_start", "Start of the file", show=False),
        Binding("ctrl+end", "document_end", "End of the file", show=False),
        Binding("ctrl+shift+home", "document_start(True)", "Select to the start", show=False),
        Binding("ctrl+shift+end", "document_end(True)", "Select to the end", show=False),
    ]

    def action_document_start(self, select: bool = False) -> None:
        """The cursor to the start of the text (``select``: extending the selection)."""
        self.move_cursor((0, 0), select=select)

    def action_document_end(self, select: bool = False) -> None:
        """The cursor to the end of the text (``select``: extending the selection)."""
        self.move_cursor(self.document.end, select=select)


class MemoryEditor(MemoryBuffer):
    """A Markdown editor for the agent's MEMORY.md with save, revert and live reload."""

    DEFAULT_CSS = """
    MemoryEditor {
        width: 1fr;
        height: 1fr;
        layout: vertical;
    }
    MemoryEditor #memory-path {
        height: 1;
        width: 1fr;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    MemoryEditor #memory-text {
        height: 1fr;
    }
    MemoryEditor #memory-bar {
        height: auto;
        width: 1fr;
    }
    MemoryEditor #memory-status {
        width: 1fr;
        height: auto;
        max-height: 3;
    }
    MemoryEditor #memory-bar Button {
        width: auto;
        min-width: 8;
        margin-left: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save memory"),
        Binding("ctrl+r", "revert", "Revert memory"),
    ]

    class Saved(Message):
        """Posted after the buffer was written to ``path``."""

        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, path: Path, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(path, name=name, id=id, classes=classes)
        self._stop_watching = asyncio.Event()

    # -- composition ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(literal(display_path(self.path)), id="memory-path")
        text_area = MemoryTextArea(id="memory-text", soft_wrap=True, tab_behavior="indent")
        text_area.language = supported_language(text_area, "markdown")
        yield text_area
        with Horizontal(id="memory-bar"):
            yield Static(id="memory-status")
            yield Button("Save ^s", id="memory-save", compact=True, variant="primary")
            yield Button("Revert", id="memory-revert", compact=True)

    def on_mount(self) -> None:
        self._ready = True
        self.reload_from_disk()
        self._watch_file()

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # -- save / revert ----------------------------------------------------------------------

    def save(self) -> bool:
        """Write the buffer to disk atomically; returns ``True`` when it was written.

        If the file changed on disk since it was last seen (and the watcher has
        not reported it yet), nothing is written and the conflict is handled as
        an external change instead.
        """
        if self._load_error is not None:
            self.notify("Not saved: the file could not be read, so it is not overwritten.", title="Memory", severity="error", markup=False)
            return False
        if self._too_large is not None:
            self.notify("Not saved: MEMORY.md is too large to edit here.", title="Memory", severity="error",
                        markup=False)
            return False
        try:
            on_disk = read_text_or_none(self.path)
        except (OSError, UnicodeDecodeError) as error:
            self.notify(f"Not saved: cannot read {self.path}: {error}", title="Memory", severity="error", markup=False)
            return False
        if on_disk != self._disk_text:
            self.external_change_detected(on_disk)
            if self._asking or not self.dirty:
                return False
        text = with_final_newline(self.text)
        if text != self.text:  # the buffer shows what the file holds
            self.text_area.insert("\n", self.text_area.document.end, maintain_selection_offset=True)
        try:
            write_atomic(self.path, text, durable=True)
        except OSError as error:
            self._set_note(f"save failed: {error}")
            self.notify(f"Could not save {self.path}: {error}", title="Memory", severity="error", markup=False)
            return False
        self._disk_text = text
        self._baseline = text
        self._set_note(f"saved {clock_time(time.time())}")
        self.post_message(self.Saved(self.path))
        return True

    def action_save(self) -> None:
        """Save (ctrl+s)."""
        self.save()

    def action_revert(self) -> None:
        """Discard unsaved edits and reload the file, after confirming (ctrl+r)."""
        if not self.dirty:
            self.reload_from_disk()
            return

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.reload_from_disk()
                self._set_note("reverted")

        self.app.push_screen(
            ConfirmModal("Revert memory", "Discard your unsaved edits and reload MEMORY.md from disk?", confirm_label="Revert", destructive=True),
            answered,
        )

    @on(Button.Pressed, "#memory-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#memory-revert")
    def _revert_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_revert()

    # -- following the file on disk ------------------------------------------------------

    @work(exclusive=True, group="memory-watch", exit_on_error=False)
    async def _watch_file(self) -> None:
        """Follow the file's directory with watchfiles until unmounted. A directory that does not exist
        yet is not created (opening the app creates nothing): its nearest existing ancestor is watched
        until it appears."""
        directory = self.path.parent
        try:
            on_the_way = {str(directory), *(str(parent) for parent in directory.parents)}
            while not directory.is_dir():
                ancestor = next(parent for parent in directory.parents if parent.is_dir())
                async for _changes in awatch(ancestor, recursive=False, step=50, stop_event=self._stop_watching,
                                             watch_filter=lambda _change, changed: changed in on_the_way):
                    break  # a directory on the way appeared: look again
                if self._stop_watching.is_set():
                    return
            if self.path.exists() and not self.dirty:  # written along with its new directory
                self.reload_from_disk()
            await self._follow(directory)
        except (OSError, RuntimeError) as error:
            self._set_note(f"live reload off: {error}")

    async def _follow(self, directory: Path) -> None:
        name = self.path.name
        async for _changes in awatch(
            directory,
            watch_filter=lambda _change, changed: Path(changed).name == name,
            recursive=False,
            debounce=WATCH_DEBOUNCE_MS,
            step=50,
            stop_event=self._stop_watching,
        ):
            try:
                size = await asyncio.to_thread(file_size, self.path)
                too_large = size is not None and size > MAX_EDIT_BYTES
                text = None if too_large else await asyncio.to_thread(read_text_or_none, self.path)
            except (OSError, UnicodeDecodeError) as error:
                self._set_note(f"external change unreadable: {error}")
                continue
            if too_large or self.too_large:  # never read megabytes into the editor
                if not self.dirty:
                    self.reload_from_disk()
                continue
            self.external_change_detected(text)

