"""A full view of one evicted tool output: highlighted, searchable, path copyable.

Evicted outputs can be huge, so only the first :data:`MAX_VIEW_BYTES` are
loaded (off the UI thread) and the header says so.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Input, Static, TextArea
from textual.widgets.text_area import Selection

from tui.app.clipboard import copy_text
from tui.app.formatting import human_size, literal
from tui.app.screens.basic_dialogs import DialogScreen, action_button
from tui.app.text_display import display_path, language_for_path, supported_language
from tui.base.nofollow import LinkRefusedError, open_file
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pathlib import Path

    from textual.app import ComposeResult

__all__ = [
    "MAX_MATCHES",
    "MAX_VIEW_BYTES",
    "EvictedViewerScreen",
    "LoadedFile",
    "Match",
    "display_path",
    "find_matches",
    "has_own_line_numbers",
    "load_capped",
    "output_language",
    "supported_language",
]

MAX_VIEW_BYTES = 2 * 1024 * 1024
"""At most this much of a file is loaded into the viewer."""

MAX_MATCHES = 10_000
"""Search stops counting after this many matches."""


@dataclass(frozen=True)
class LoadedFile:
    """The (possibly truncated) text of a file, or why it could not be read."""

    text: str
    total_bytes: int
    truncated: bool
    error: str | None = None


def load_capped(path: Path, cap: int = MAX_VIEW_BYTES) -> LoadedFile:
    """Read at most ``cap`` bytes of ``path`` as UTF-8 (undecodable bytes replaced, control characters made
    visible: the file holds a tool's output, hostile text)."""
    try:
        with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:  # deep-tui's own regular file only
            total = os.fstat(handle.fileno()).st_size
            data = handle.read(cap)
    except FileNotFoundError:
        return LoadedFile("", 0, False, "File not found: it may have been deleted or moved.")
    except LinkRefusedError as error:
        return LoadedFile("", 0, False, str(error))
    except OSError as error:
        return LoadedFile("", 0, False, f"Cannot read the file: {error.strerror or error}")
    return LoadedFile(visible(data.decode("utf-8", errors="replace")), total, total > len(data))


def output_language(saved: Path, source_path: str | None = None, text: str = "", *,
                    truncated: bool = False) -> str | None:
    """The language to highlight a saved output as: that of the file the tool read (``source_path``, its path
    argument, by extension), else JSON for structured output (saved as ``.json``, or text that parses whole as
    JSON), else ``None`` (plain text). Never guessed from the look of the content: a guess called read_file's
    numbered lines ``cbmbas`` or ``scdoc``."""
    language = language_for_path(source_path) or language_for_path(saved.name)
    if language is None and not truncated and text.lstrip()[:1] in ("{", "["):
        try:
            json.loads(text)
        except ValueError:
            return None
        return "json"
    return language


_NUMBERED_LINE = re.compile(r"^ *\d+\t")


def has_own_line_numbers(text: str, sample: int = 50) -> bool:
    """True when most lines already start with a line number and a tab (``read_file``'s output), so
    the viewer does not add a second column of numbers."""
    lines = [line for line in text.split("\n", sample)[:sample]
             if line.strip() and not line.startswith("[")]  # read_file's "[lines 1-400 of 900]" notes
    return bool(lines) and sum(1 for line in lines if _NUMBERED_LINE.match(line)) >= 0.8 * len(lines)


@dataclass(frozen=True)
class Match:
    """One search hit: ``row`` and the column span ``[start, end)``."""

    row: int
    start: int
    end: int


def find_matches(text: str, query: str, limit: int = MAX_MATCHES) -> list[Match]:
    """Case-insensitive, non-overlapping occurrences of ``query`` within single lines, at most ``limit``."""
    if not query:
        return []
    needle = query.lower()
    matches: list[Match] = []
    for row, line in enumerate(text.split("\n")):
        haystack = line.lower()
        if len(haystack) != len(line):  # a case mapping changed the length: match exactly instead
            haystack, wanted = line, query
        else:
            wanted = needle
        start = haystack.find(wanted)
        while start != -1:
            matches.append(Match(row, start, start + len(wanted)))
            if len(matches) >= limit:
                return matches
            start = haystack.find(wanted, start + len(wanted))
    return matches


class EvictedViewerScreen(DialogScreen[None]):
    """Shows one evicted output with search (/, n, N), copy path (c) and close (esc, q)."""

    DEFAULT_CSS = """
    EvictedViewerScreen .dialog {
        width: 95%;
        height: 90%;
    }
    EvictedViewerScreen #viewer-info {
        height: auto;
        width: 1fr;
        color: $text-muted;
    }
    EvictedViewerScreen #viewer-search-bar {
        height: 1;
        width: 1fr;
        margin: 1 0 0 0;
    }
    EvictedViewerScreen #viewer-search {
        width: 1fr;
    }
    EvictedViewerScreen #viewer-matches {
        width: auto;
        min-width: 12;
        margin: 0 1;
        color: $text-muted;
    }
    EvictedViewerScreen #viewer-search-bar Button {
        width: auto;
        min-width: 6;
        margin-left: 1;
    }
    EvictedViewerScreen #viewer-text {
        height: 1fr;
        margin-top: 1;
    }
    EvictedViewerScreen #viewer-missing {
        height: 1fr;
        padding: 1 2;
        color: $text-error;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        # priority: handled as it arrives, so the keys typed right after it (queued already) reach the search box
        Binding("slash,ctrl+f", "focus_search", "Search", priority=True),
        Binding("n,f3", "find_next", "Next match"),
        Binding("N,shift+f3", "find_previous", "Previous match"),
        Binding("c", "copy_path", "Copy path"),
    ]

    def __init__(self, path: Path, *, source_path: str | None = None, search: str = "") -> None:
        """``source_path``: the file the tool call read (its path argument), which names the language;
        ``search``: find this at once (the first match selected), as if typed after ``/``."""
        super().__init__()
        self.path = path
        self.source_path = source_path
        self._initial_search = search
        self.loaded: LoadedFile | None = None
        self.matches: list[Match] = []
        self.current_match: int | None = None

    HINT = "/ search · n/N next/prev · c copy path · esc close"
    SEARCH_HINT = "Enter next match · esc back to the text (esc again closes)"
    """The hint while the search box has the focus: there the first Esc only leaves it."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self.path.name
            dialog.border_subtitle = self.HINT
            yield Static(Content.assemble(literal(display_path(self.path)), ("  loading…", "$text-muted")), id="viewer-info")
            with Horizontal(id="viewer-search-bar"):
                yield Input(self._initial_search, placeholder="Search (/)", id="viewer-search", compact=True)
                yield Static("", id="viewer-matches")
                yield action_button("▲ Prev", "screen.find_previous", id="viewer-prev", focusable=False)
                yield action_button("▼ Next", "screen.find_next", id="viewer-next", focusable=False)
                yield action_button("Copy path", "screen.copy_path", id="viewer-copy", focusable=False)
            yield TextArea(id="viewer-text", read_only=True, show_line_numbers=True, soft_wrap=False)
            yield Static("", id="viewer-missing")

    def on_mount(self) -> None:
        self.query_one("#viewer-missing").display = False
        self.query_one("#viewer-text", TextArea).focus()
        self._load()

    @work(thread=True, exclusive=True, group="evicted-viewer-load")
    def _load(self) -> None:
        loaded = load_capped(self.path)
        language = (output_language(self.path, self.source_path, loaded.text, truncated=loaded.truncated)
                    if loaded.error is None else None)
        self.app.call_from_thread(self._show, loaded, language)

    def _show(self, loaded: LoadedFile, language: str | None) -> None:
        self.loaded = loaded
        info = self.query_one("#viewer-info", Static)
        if loaded.error is not None:
            info.update(Content.assemble(literal(display_path(self.path)), "  ", (loaded.error, "$text-error")))
            missing = self.query_one("#viewer-missing", Static)
            missing.update(Content.assemble(("This evicted output cannot be shown.\n\n", "bold"), literal(loaded.error), "\n\n", literal(str(self.path))))
            missing.display = True
            self.query_one("#viewer-text").display = False
            self.notify(loaded.error, title="Evicted output", severity="error", markup=False)
            return
        text_area = self.query_one("#viewer-text", TextArea)
        text_area.show_line_numbers = not has_own_line_numbers(loaded.text)
        text_area.language = supported_language(text_area, language)
        text_area.load_text(loaded.text)
        size = f"  {human_size(loaded.total_bytes)}"
        if loaded.truncated:
            size += f" · showing the first {human_size(MAX_VIEW_BYTES)}"
        info.update(
            Content.assemble(
                literal(display_path(self.path)),
                (size, "$text-warning" if loaded.truncated else "$text-muted"),
                (f" · {language}" if language else "", "$text-muted"),
            )
        )
        query = self.query_one("#viewer-search", Input).value
        if query:
            self._search(query)

    # -- search ---------------------------------------------------------------------------

    @on(Input.Changed, "#viewer-search")
    def _query_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._search(event.value)

    @on(Input.Submitted, "#viewer-search")
    def _query_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_find_next()

    def _search(self, query: str) -> None:
        text = self.loaded.text if self.loaded is not None else ""
        self.matches = find_matches(text, query)
        self.current_match = None
        if self.matches:
            self._go_to(0)
        else:
            self._update_match_label()

    def _go_to(self, index: int) -> None:
        self.current_match = index % len(self.matches)
        match = self.matches[self.current_match]
        text_area = self.query_one("#viewer-text", TextArea)
        text_area.selection = Selection((match.row, match.start), (match.row, match.end))
        self._reveal(text_area, match)
        self._update_match_label()

    @staticmethod
    def _reveal(text_area: TextArea, match: Match) -> None:
        """Scroll the hit's row to the middle; sideways only when the hit ends past the visible width (then just
        far enough to show it), so lines that fit are read from their first column."""
        start_x, y = text_area.wrapped_document.location_to_offset((match.row, match.start))
        end_x, _ = text_area.wrapped_document.location_to_offset((match.row, match.end))
        region = text_area.scrollable_content_region
        width = max(1, region.width - text_area.gutter_width - 1)  # the last column holds the cursor
        x = 0 if end_x < width else min(start_x, end_x - width + 1)
        text_area.scroll_to(x=x, y=max(0, y - region.height // 2), animate=False, immediate=True)

    def _update_match_label(self) -> None:
        label = self.query_one("#viewer-matches", Static)
        query = self.query_one("#viewer-search", Input).value
        if not query:
            label.update("")
        elif not self.matches:
            label.update(Content.styled("no matches", "$text-error"))
        else:
            count = f"{len(self.matches)}+" if len(self.matches) >= MAX_MATCHES else str(len(self.matches))
            position = (self.current_match or 0) + 1
            label.update(f"{position}/{count}")

    def action_find_next(self) -> None:
        """Select the next match (wrapping)."""
        if self.matches:
            self._go_to(0 if self.current_match is None else self.current_match + 1)

    def action_find_previous(self) -> None:
        """Select the previous match (wrapping)."""
        if self.matches:
            self._go_to(-1 if self.current_match is None else self.current_match - 1)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # In the search box "/" is a character like any other (a path is searched for).
        return not (action == "focus_search" and self.query_one("#viewer-search", Input).has_focus)

    def action_focus_search(self) -> None:
        # At once, not after a refresh (Widget.focus): keys typed right after "/" (a paste, a fast typist, tmux)
        # are already queued and must reach the search box, not the text.
        self.set_focus(self.query_one("#viewer-search", Input))

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        searching = event.widget is self.query_one("#viewer-search", Input)
        self.query_one(".dialog").border_subtitle = self.SEARCH_HINT if searching else self.HINT

    # -- other actions ----------------------------------------------------------------------

    def action_copy_path(self) -> None:
        """Put the file's absolute path on the clipboard."""
        copy_text(self.app, str(self.path), f"the path {self.path}")

    def action_close(self) -> None:
        """Esc in the search box leaves the search (back to the text); anywhere else it closes the viewer."""
        search = self.query_one("#viewer-search", Input)
        if search.has_focus:
            self.set_focus(self.query_one(TextArea))
            return
        self.dismiss(None)
