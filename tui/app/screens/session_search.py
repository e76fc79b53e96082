"""The picker's content search: the index queried off the UI thread as the filter changes, and the
snippet line under a session whose history matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content
from textual.widgets import Input, Static
from textual.worker import get_current_worker

if TYPE_CHECKING:  # the store's search loads pydantic-ai; the picker only needs the types here
    from textual.screen import Screen

    from tui.store.search.queries import SearchHit
    from tui.store.search.searcher import HistorySearch

    _ScreenMixin = Screen[object]
else:
    _ScreenMixin = object  # a mixin: Textual takes a screen's CSS from its first base only

MIN_CONTENT_QUERY = 3
"""Contents are searched once the filter has a word of at least this many characters."""
MAX_CONTENT_ROWS = 50
"""At most this many sessions (the first in the list) are shown for their contents; more words narrow it."""

HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
"""The marks ``tui.store.search.searchable_text`` wraps matches in (a snippet's text never contains them otherwise)."""
SNIPPET_INDENT = 4


@dataclass(frozen=True)
class ContentResults:
    """What the index found for one filter text: the newest matching message of each session."""

    query: str
    hits: dict[str, SearchHit] = field(default_factory=dict)
    notice: str | None = None
    matching: int = 0
    """Sessions whose contents match in all (only the first ``MAX_CONTENT_ROWS`` are in ``hits``)."""
    at_least: bool = False
    """More sessions may match than ``matching`` (the rest were not checked: the search bounds its work)."""


def highlighted(snippet: str) -> Content:
    """A snippet as content: the text literal (never markup), the matches emphasised."""
    pieces: list[tuple[str, str] | str] = []
    inside = False
    text = ""
    for character in snippet:
        if character in (HIGHLIGHT_START, HIGHLIGHT_END):
            if text:
                pieces.append((text, "bold $text-accent underline") if inside else text)
            text, inside = "", character == HIGHLIGHT_START
            continue
        text += character
    if text:
        pieces.append((text, "bold $text-accent underline") if inside else text)
    return Content.assemble(*pieces)


MIN_SNIPPET_ROOM = 16
"""A snippet keeps at least this many characters, however narrow the list (the line is cut at its end)."""


def fit_snippet(snippet: str, room: int) -> str:
    """``snippet`` cut to ``room`` characters around its first match, so the match shows (with a little of
    what precedes it) however narrow the line: the search's snippet is wider than a picker row, and the
    match sits a third of the way into it. Cut ends say ``…``; the highlight marks are kept."""
    characters: list[tuple[str, bool]] = []
    inside = False
    for character in snippet:
        if character in (HIGHLIGHT_START, HIGHLIGHT_END):
            inside = character == HIGHLIGHT_START
        else:
            characters.append((character, inside))
    room = max(room, MIN_SNIPPET_ROOM)
    if len(characters) <= room:
        return snippet
    first = next((index for index, (_, marked) in enumerate(characters) if marked), 0)
    start = max(0, min(first - room // 4, len(characters) - room))
    window = characters[start:start + room]
    if start > 0:
        window[0] = ("…", False)
    if start + room < len(characters):
        window[-1] = ("…", False)
    out: list[str] = []
    inside = False
    for character, marked in window:
        if marked != inside:
            out.append(HIGHLIGHT_START if marked else HIGHLIGHT_END)
            inside = marked
        out.append(character)
    if inside:
        out.append(HIGHLIGHT_END)
    return "".join(out)


def snippet_line(hit: SearchHit, depth: int, width: int | None = None) -> Content:
    """``    message 42 · user  …the «migration» plan…  (also in 2 forks)`` under a session row; ``width``:
    the cells the line has (the snippet is cut around its match to fit)."""
    indent = " " * (SNIPPET_INDENT + 2 * min(depth, 6))
    role = hit.role if hit.tool is None else f"{hit.role} {hit.tool}"
    forks = len(hit.forks)
    where = f"subagent {hit.subagent} · " if hit.subagent is not None else ""
    lead = f"{indent}{where}message {hit.message + 1} · {role}  "
    tail = f"  (also in {forks} fork{'s' if forks != 1 else ''})" if forks else ""
    snippet = hit.snippet if width is None else fit_snippet(hit.snippet, width - len(lead) - len(tail))
    return Content.assemble(
        (lead, "$text-muted"),
        highlighted(snippet).stylize_before("$text-muted"),
        (tail, "$text-muted italic"),
    )


def row_with_hit(row: Content, hit: SearchHit, depth: int, width: int | None = None) -> Content:
    return Content("\n").join([row, snippet_line(hit, depth, width)])


class ContentSearch(_ScreenMixin):
    """The picker's content search (mixed into ``SessionPickerScreen``): needs ``#filter`` (an Input) and
    ``#search-note`` (a Static), ``search``, and ``apply_filter()`` to redraw the list."""

    search: HistorySearch | None
    _content: ContentResults | None
    _loaded: bool

    if TYPE_CHECKING:
        def apply_filter(self, *, highlight: str | None = None) -> None: ...

    @property
    def content_results(self) -> ContentResults | None:
        """The content search's answer for the current filter text (``None`` until it arrives)."""
        content = self._content
        if content is None or content.query != self.query_one("#filter", Input).value.strip():
            return None
        return content

    @property
    def content_hits(self) -> dict[str, SearchHit]:
        """Sessions whose history matches the current filter text, with their newest matching message."""
        content = self.content_results
        return content.hits if content is not None else {}

    def search_contents(self, query: str, order: list[str]) -> None:
        """Start searching every session's history for ``query`` (or clear the note for a short query);
        ``order``: the sessions as listed, so the first matching ones get their snippet."""
        from tui.store.search.terms import is_cjk_word

        if self.search is not None and any(len(word) >= MIN_CONTENT_QUERY or is_cjk_word(word) for word in query.split()):
            self._search_contents(query, order)
        else:
            self._show_note(None)

    @work(thread=True, exclusive=True, group="picker-search")
    def _search_contents(self, query: str, order: list[str]) -> None:
        """A thread, so the UI keeps taking keys; a result for an outdated filter is dropped."""
        from tui.store.search.searcher import QueryTooShort, SearchCancelled

        assert self.search is not None
        worker = get_current_worker()
        try:  # a newer keystroke cancels this worker: its search stops at the next window of sessions
            outcome = self.search.session_hits(query, order=order, limit=MAX_CONTENT_ROWS,
                                               cancelled=lambda: worker.is_cancelled)
        except (QueryTooShort, ValueError, SearchCancelled):
            return
        if not worker.is_cancelled:
            notice = outcome.notice
            indexing = self.search.indexing
            if indexing is not None:  # a large (re)build under way: say how far it has got
                notice = f"search index: {indexing.describe()}" + (f"; {notice}" if notice else "")
            results = ContentResults(query, outcome.by_session, notice, outcome.matching_sessions,
                                     at_least=outcome.unchecked_sessions > 0)
            self.app.call_from_thread(self._show_content, results)

    def _show_content(self, results: ContentResults) -> None:
        if not self.is_attached or results.query != self.query_one("#filter", Input).value.strip():
            return  # the filter changed while searching: a newer search is on its way
        self._content = results
        self._show_note(results.notice)
        if self._loaded:
            self.apply_filter()

    def _show_note(self, note: str | None) -> None:
        self.query_one("#search-note", Static).update(Content(note or ""))
        self.set_class(bool(note), "-search-note")
