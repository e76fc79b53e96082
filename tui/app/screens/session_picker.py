"""The session picker: list, filter, open, fork, rename, delete and start sessions.

Reads only the store's ``session.json`` metadata (``SessionStore.list_sessions``),
always off the UI thread, and shows forks indented under their parent. Typing filters
by title, id and model at once, and searches every session's history through the
search index (off the UI thread); a session found by its contents shows the matching
snippet under its row, and opening it scrolls to that message.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.app.screens.picker_entries import PickerEntry, listed_entries, ranked_entries
from tui.app.screens.picker_result import PickerResult, matched_text
from tui.app.screens.session_edits import SessionEdits, store_errors
from tui.app.screens.session_list import SessionList
from tui.app.screens.session_rows import WIDE, SessionMetaLike, SessionStoreLike, header_row, layout_for
from tui.app.screens.session_search import ContentSearch, row_with_hit
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from textual.app import ComposeResult

    from tui.store.search.searcher import HistorySearch

__all__ = ["SessionPickerScreen", "SessionStoreLike"]


class SessionPickerScreen(DialogScreen[PickerResult | None], ContentSearch, SessionEdits):
    """A modal listing the sessions of the store.

    Dismisses a :class:`PickerResult` (open, fork or new), or ``None`` when
    closed — or when the session asked to open is already the current one.
    """

    DEFAULT_CSS = """
    SessionPickerScreen .dialog {
        width: 120;
        height: 85%;
    }
    SessionPickerScreen #filter {
        margin: 1 0 0 0;
    }
    SessionPickerScreen #search-note {
        height: auto;
        color: $text-warning;
        padding: 0 1;
        display: none;
    }
    SessionPickerScreen.-search-note #search-note { display: block; }
    SessionPickerScreen #columns {
        height: 1;
        margin-top: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    SessionPickerScreen #empty {
        height: auto;
        color: $text-muted;
        padding: 1 2;
        display: none;
    }
    SessionPickerScreen.-empty #empty { display: block; }
    SessionPickerScreen.-empty SessionList { display: none; }
    SessionPickerScreen .dialog--buttons { margin: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+f", "fork", "Fork", priority=True),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
        Binding("ctrl+n", "new", "New", priority=True),
        Binding("down", "move('cursor_down')", show=False),
        Binding("up", "move('cursor_up')", show=False),
        Binding("pagedown", "move('page_down')", show=False),
        Binding("pageup", "move('page_up')", show=False),
    ]

    def __init__(
        self,
        store: SessionStoreLike,
        current_id: str | None,
        *,
        clock: Callable[[], float] = time.time,
        initial: Sequence[SessionMetaLike] | None = None,
        rename_current: Callable[[str], None] | None = None,
        search: HistorySearch | None = None,
    ) -> None:
        """``initial``: a recent listing to show at once (it is refreshed from the store right after).
        ``search``: the index that typing searches contents with (titles only without it).

        ``rename_current`` renames the open session through its own handle: the store refuses to
        rename a session another handle owns, since that handle would write its old title back.
        """
        super().__init__()
        self.store = store
        self.current_id = current_id
        self._rename_current = rename_current
        self._clock = clock
        self._entries: list[PickerEntry] = []
        self._by_id: dict[str, SessionMetaLike] = {}
        self._shown: list[PickerEntry] = []
        self._loaded = False
        self._refit_pending = False
        self._initial = initial
        self._reopening = False
        self.search = search
        self._content = None
        self._layout = WIDE
        """The figure columns the list has room for (a narrow terminal gives the titles the room)."""

    # -- layout --

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Sessions"
            dialog.border_subtitle = "loading…"
            yield Input(placeholder="Type to search titles and contents (or filter by id, model)…", id="filter")
            yield Static("", id="search-note")
            yield Static(header_row(), id="columns")
            yield SessionList(id="sessions")
            yield Static("", id="empty")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Open ⏎", "screen.open", variant="primary", focusable=False)
                yield action_button("Fork ^f", "screen.fork", focusable=False)
                yield action_button("Rename ^r", "screen.rename", focusable=False)
                yield action_button("Delete ^d", "screen.delete", variant="error", focusable=False)
                yield action_button("New ^n", "screen.new", variant="success", focusable=False)
                yield action_button("Close esc", "screen.close", focusable=False)

    def on_resize(self) -> None:
        layout = layout_for(self.query_one("#sessions").size.width or self.size.width)
        if layout == self._layout:
            if self._loaded and self.content_hits:  # the snippets, cut to the new width
                self.apply_filter()
            return
        self._layout = layout
        self.query_one("#columns", Static).update(header_row(layout))
        if self._loaded:  # the rows again, in the new layout, the same one highlighted
            self.set_sessions(list(self._by_id.values()), highlight=self.highlighted_id)

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#filter", Input)

    def on_mount(self) -> None:
        self._show_listing()

    def reopen(self, current_id: str | None, initial: Sequence[SessionMetaLike] | None) -> None:
        """Ready this (installed, kept) picker for another opening, for ``current_id`` with a fresh listing.

        The app keeps one picker: building its dialog again costs more than listing 1,000 sessions.
        """
        self.current_id = current_id
        self._initial = initial
        self._reopening = True
        self._content = None

    def on_screen_resume(self) -> None:
        if self._reopening:  # not when a dialog on top of the picker (rename, delete) closes
            self._reopening = False
            if self.filter_input.value:
                self.filter_input.value = ""
            self._show_listing()

    def _show_listing(self) -> None:
        self.filter_input.focus()
        if self.search is not None:  # the word list its content queries narrow candidates with (a thread)
            self.search.prepare_session_search()
        if self._initial is not None:
            self.set_sessions(self._initial)
            self.call_after_refresh(self.reload)  # refresh from disk once the recent listing is on screen
        else:
            self.reload()

    # -- loading and filtering --

    @work(exclusive=True, group="picker-load")
    async def reload(self, highlight: str | None = None) -> None:
        """List the store's sessions off the UI thread, then show them (keeping ``highlight`` selected)."""
        try:
            sessions = await asyncio.to_thread(self.store.list_sessions)
        except store_errors() as error:
            self.notify(str(error), title="Could not list sessions", severity="error", markup=False)
            sessions = []
        if not self.is_attached or not self.is_active:  # closed (or closing) while the listing was read
            return
        self.set_sessions(sessions, highlight=highlight)

    def set_sessions(self, sessions: Sequence[SessionMetaLike], *, highlight: str | None = None) -> None:
        """Show ``sessions`` (newest first) as a lineage tree."""
        now = self._clock()
        current = self.current_id
        self._by_id = {meta.id: meta for meta in sessions}
        self._entries = listed_entries(sessions, current=current, now=now, layout=self._layout)
        self._loaded = True
        self.apply_filter(highlight=highlight)

    def _refit_snippets(self) -> None:
        self.apply_filter()
        self._refit_pending = False

    def apply_filter(self, *, highlight: str | None = None) -> None:
        """Show the entries matching every word of the filter (title, id or model, case-insensitive), and
        those whose history matches it (with the snippet), once the content search has answered."""
        query = self.filter_input.value
        terms = query.casefold().split()
        previous = highlight or self.highlighted_id
        hits = self.content_hits
        rows = {entry.meta.id: entry.row for entry in self._entries}
        if terms:
            self._shown = self._ranked(query, terms, rows)
        else:
            self._shown = self._entries
        option_list = self.session_list
        list_width = option_list.size.width
        if not list_width and hits and not self._refit_pending:
            # Not laid out yet (it had nothing to show): cut the snippets again once it has its width.
            self._refit_pending = True
            self.call_after_refresh(self._refit_snippets)
        # The list's width less room for a scrollbar, whether or not one shows: the same cut every time.
        width = (list_width or self.size.width) - option_list.styles.scrollbar_size_vertical - 1
        option_list.set_options(
            Option(row_with_hit(rows[entry.meta.id], hits[entry.meta.id], entry.depth, width), id=entry.meta.id)
            if entry.meta.id in hits
            else (entry.option if rows[entry.meta.id] is entry.row else Option(rows[entry.meta.id], id=entry.meta.id))
            for entry in self._shown
        )
        if self._shown:
            index = next((i for i, entry in enumerate(self._shown) if entry.meta.id == previous), 0)
            option_list.highlighted = index
            option_list.scroll_to_highlight()
        total = len(self._entries)
        dialog = self.query_one(".dialog")
        count = plural(total, "session")
        by_content = sum(1 for entry in self._shown if entry.meta.id in hits)
        matching = self.content_results.matching if self.content_results is not None else 0
        of = f"{matching:,} or more" if self.content_results is not None and self.content_results.at_least \
            else f"{matching:,}"
        more = f" (the first {by_content:,} of {of} — add words to narrow)" if matching > by_content else ""
        dialog.border_subtitle = (f"{len(self._shown):,} of {count}" + (f" · {by_content:,} by content{more}"
                                                                          if by_content else "")) if terms else count
        empty = self.query_one("#empty", Static)
        if not self._entries:
            empty.update("No sessions yet — press n (or ctrl+n) to start one.")
        elif not self._shown:
            empty.update(Content.from_markup("No session matches [b]$query[/b].", query=query.strip()))
        self.set_class(not self._shown, "-empty")

    def _ranked(self, query: str, terms: list[str], rows: dict[str, Content]) -> list[PickerEntry]:
        """The entries the filter matches, best first (:func:`~tui.app.screens.picker_entries.ranked_entries`)."""
        return ranked_entries(self._entries, query, terms, content_hits=self.content_hits, rows=rows,
                              current=self.current_id, now=self._clock(), layout=self._layout)

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        if self._loaded:
            self.apply_filter()
        self.search_contents(self.filter_input.value.strip(), [entry.meta.id for entry in self._entries])

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_open()

    @on(OptionList.OptionSelected, "#sessions")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open()

    @property
    def highlighted_id(self) -> str | None:
        """The id of the highlighted session, if any."""
        if not self.is_mounted or not self._shown:
            return None
        option = self.session_list.highlighted_option
        return option.id if option is not None else None

    def _shown_ids(self) -> list[str]:
        return [entry.meta.id for entry in self._shown]

    def _highlighted(self) -> SessionMetaLike | None:
        session_id = self.highlighted_id
        meta = self._by_id.get(session_id) if session_id else None
        if meta is None:
            self.notify("No session selected.", severity="warning", markup=False)
        return meta

    # -- actions --

    def action_move(self, where: str) -> None:
        """Move the list's highlight while typing in the filter."""
        option_list = self.session_list
        moves: dict[str, Callable[[], None]] = {
            "cursor_down": option_list.action_cursor_down,
            "cursor_up": option_list.action_cursor_up,
            "page_down": option_list.action_page_down,
            "page_up": option_list.action_page_up,
        }
        moves[where]()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_open(self) -> None:
        meta = self._highlighted()
        if meta is None:
            return
        hit = self.content_hits.get(meta.id)
        if meta.id == self.current_id and hit is None:
            self.dismiss(None)
            return
        if hit is None:
            self.dismiss(PickerResult("open", meta.id))
            return
        # a hit in one of its subagents' histories opens the session (its message counts in the subagent's history)
        message = hit.message if hit.subagent is None else None
        self.dismiss(PickerResult("open", meta.id, message=message, saved_output=hit.path,
                                  match=matched_text(hit.snippet) or self.filter_input.value.strip() or None))

    def action_fork(self) -> None:
        meta = self._highlighted()
        if meta is not None:
            self.dismiss(PickerResult("fork", meta.id))

    def action_new(self) -> None:
        self.dismiss(PickerResult("new", None))
