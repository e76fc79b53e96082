"""The MEMORY.md editor's buffer against the file on disk (the base of :class:`MemoryEditor`).

What counts as saved, the status line, loading the file (an unreadable or too large one is shown
read-only), and reconciling a change made on disk: a clean buffer follows it, a buffer with unsaved
edits asks the user which side to keep. Nothing is ever overwritten without the user choosing it.
"""

from __future__ import annotations

import difflib
import time
from typing import TYPE_CHECKING

from textual import on
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static, TextArea
from textual.widgets.text_area import Selection

from tui.app.formatting import clock_time, human_size, literal
from tui.app.memory_io import MAX_EDIT_BYTES, PREVIEW_BYTES, file_size, read_preview, read_text_or_none
from tui.app.screens.basic_dialogs import Choice, ChoiceModal, TextViewerModal
from tui.app.text_display import supported_language
from tui.app.text_places import follow_location

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MemoryBuffer"]


class MemoryBuffer(Widget):
    """The editing area's text against the file's: load, dirty state, status line, external changes.

    Queries ``#memory-text`` (a TextArea) and ``#memory-status`` (a Static), which
    :class:`~tui.app.widgets.memory_editor.MemoryEditor` composes."""

    def __init__(self, path: Path, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.path = path
        self._disk_text: str | None = None
        """The file's content as last seen (``None``: not on disk)."""
        self._baseline = ""
        """The buffer text that counts as "saved" (what is on disk, or empty for a new file)."""
        self._load_error: str | None = None
        self._too_large: int | None = None
        """The file's size, when it is too large to edit here (shown read-only)."""
        self._note: Content = Content("")
        self._last_external: float | None = None
        self._pending_external: str | None = None
        self._asking = False
        self._ready = False
        """Mounted: the status line can be drawn (set by MemoryEditor.on_mount)."""

    # -- state --------------------------------------------------------------------------

    @property
    def text_area(self) -> TextArea:
        """The editing area."""
        return self.query_one("#memory-text", TextArea)

    @property
    def text(self) -> str:
        """The buffer's current text."""
        return self.text_area.text

    @property
    def dirty(self) -> bool:
        """True when the buffer has edits that are not on disk."""
        return self.text_area.text != self._baseline

    @property
    def last_external_change(self) -> float | None:
        """Epoch time the file last changed on disk from outside this editor."""
        return self._last_external

    def _set_note(self, note: str | Content) -> None:
        self._note = literal(note) if isinstance(note, str) else note
        self._refresh_status()

    def _refresh_status(self) -> None:
        if not self._ready:
            return
        if self._load_error is not None:
            state = Content.styled("✗ unreadable", "$text-error bold")
        elif self._too_large is not None:
            state = Content.styled("read-only", "$text-warning bold")
        elif self.dirty:
            state = Content.styled("● unsaved", "$text-warning bold")
        elif self._disk_text is None:
            state = Content.styled("○ new file", "$text-muted")
        else:
            state = Content.styled("✓ saved", "$text-success")
        parts = [state]
        if self._note:
            parts += [Content.styled(" · ", "$text-muted"), self._note]
        self.query_one("#memory-status", Static).update(Content.assemble(*parts))
        self.set_class(self.dirty, "-dirty")

    @on(TextArea.Changed, "#memory-text")
    def _buffer_changed(self) -> None:
        self._refresh_status()

    # -- load ---------------------------------------------------------------------------

    def reload_from_disk(self) -> bool:
        """Replace the buffer with the file's content (discarding edits); ``False`` if it could not be read.

        A file over :data:`MAX_EDIT_BYTES` is shown (its first :data:`PREVIEW_BYTES`) read-only, with a notice.
        """
        try:
            size = file_size(self.path)
            if size is not None and size > MAX_EDIT_BYTES:
                self._show_too_large(size)
                return True
            text = read_text_or_none(self.path)
        except (OSError, UnicodeDecodeError) as error:
            self._load_error = f"cannot read: {error}"
            self.text_area.read_only = True
            self._set_note(self._load_error)
            self.notify(f"Cannot read {self.path}: {error}", title="Memory", severity="error", markup=False)
            return False
        self._editable()
        self._apply_disk_text(text)
        self._set_note("" if text is not None else "will be created on save")
        return True

    def _editable(self) -> None:
        """Back to normal editing (after an unreadable or too large file)."""
        self._load_error = None
        self._too_large = None
        text_area = self.text_area
        text_area.read_only = False
        text_area.soft_wrap = True
        if text_area.language is None:
            text_area.language = supported_language(text_area, "markdown")

    def _show_too_large(self, size: int) -> None:
        first_time = self._too_large is None
        self._too_large = size
        self._load_error = None
        text_area = self.text_area
        text_area.language = None  # highlighting (and wrapping) a huge buffer is what stalls the app
        text_area.soft_wrap = False
        text_area.read_only = True
        self._apply_disk_text(read_preview(self.path))
        note = (f"{human_size(size)}: too large to edit here — showing the first {human_size(PREVIEW_BYTES)}, "
                "read-only; edit it with another editor")
        self._set_note(Content.styled(note, "$text-warning"))
        if first_time:
            self.notify(f"MEMORY.md is {human_size(size)}; it opens read-only here (the first "
                        f"{human_size(PREVIEW_BYTES)} are shown). Edit it with another editor.",
                        title="Memory", severity="warning", timeout=8, markup=False)

    @property
    def too_large(self) -> bool:
        """True while the file is too large to edit here (shown read-only)."""
        return self._too_large is not None

    def _apply_disk_text(self, text: str | None, *, follow: bool = False) -> None:
        """Load ``text`` (the disk content) into the buffer. ``follow``: the cursor (and selection) keeps its
        place in the text around it, as lines added or removed elsewhere move it; otherwise it keeps its row
        and column where it can."""
        self._disk_text = text
        self._baseline = text or ""
        text_area = self.text_area
        selection = text_area.selection
        old_lines = list(text_area.document.lines)
        text_area.load_text(self._baseline)
        if follow:
            new_lines = text_area.document.lines
            text_area.selection = Selection(follow_location(old_lines, new_lines, selection.start),
                                            follow_location(old_lines, new_lines, selection.end))
        else:
            text_area.move_cursor(selection.end)
        self._refresh_status()

    # -- external changes -------------------------------------------------------------------

    def external_change_detected(self, text: str | None) -> None:
        """The file on disk now holds ``text`` (``None``: deleted); reconcile it with the buffer.

        Our own saves are recognised by content and ignored. A clean buffer
        follows the disk; a buffer with unsaved edits asks the user.
        """
        if text == self._disk_text:
            return
        self._last_external = time.time()
        stamp = clock_time(self._last_external)
        if text is None:
            self._disk_text = None
            self._baseline = ""
            self._set_note(f"deleted on disk {stamp}; save to recreate")
            return
        if not self.dirty:
            self._editable()
            self._apply_disk_text(text, follow=True)
            self._set_note(f"reloaded: changed on disk {stamp}")
            return
        if self.text == text:
            self._disk_text = self._baseline = text
            self._set_note(f"disk now matches your edits {stamp}")
            return
        self._pending_external = text
        if not self._asking:
            self._ask_about_conflict()

    def _ask_about_conflict(self) -> None:
        self._asking = True
        self._set_note(Content.styled("changed on disk while you were editing", "$text-warning"))
        choices = [
            Choice("keep", "Keep mine", "k", "primary"),
            Choice("theirs", "Load theirs", "l", "warning"),
            Choice("diff", "Show diff", "d"),
        ]
        message = (
            "MEMORY.md was changed on disk (by the agent or another editor) while you have unsaved edits.\n\n"
            "Keep mine: keep editing; saving will overwrite the disk version.\n"
            "Load theirs: discard your edits and load the disk version."
        )
        self.app.push_screen(ChoiceModal("Memory changed on disk", message, choices), self._conflict_answered)

    def _conflict_answered(self, answer: str | None) -> None:
        theirs = self._pending_external
        if theirs is None:  # pragma: no cover - the dialog is only shown with a pending text
            self._asking = False
            return
        if answer == "diff":
            diff = "".join(
                difflib.unified_diff(
                    theirs.splitlines(keepends=True),
                    self.text.splitlines(keepends=True),
                    fromfile="on disk",
                    tofile="your edits",
                )
            )
            self.app.push_screen(TextViewerModal("Disk → your edits", diff or "(no difference)"), lambda _: self._ask_about_conflict())
            return
        self._asking = False
        self._pending_external = None
        if answer == "theirs":
            self._apply_disk_text(theirs, follow=True)
            self._set_note("loaded the disk version")
        else:
            # Keep mine (or Esc): the buffer stays; the disk version becomes the
            # one a save replaces, so the next save does not ask again.
            self._disk_text = theirs
            self._baseline = theirs
            self._set_note(Content.styled("kept your edits; save to overwrite the disk version", "$text-warning"))
