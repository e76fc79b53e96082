"""The picker's rename and delete (with confirmation): through the store, then the search index."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content

from tui.app.formatting import short_id
from tui.app.screens.basic_dialogs import ConfirmModal, PromptModal
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from textual.screen import Screen

    from tui.app.screens.session_rows import SessionMetaLike, SessionStoreLike
    from tui.store.search.searcher import HistorySearch

    _ScreenMixin = Screen[object]
else:
    _ScreenMixin = object  # a mixin: Textual takes a screen's CSS from its first base only


def store_errors() -> tuple[type[Exception], ...]:
    """The errors a store operation raises for reasons the user can act on."""
    try:
        from tui.store.store_errors import StoreError
    except ImportError:  # the store package is optional for this screen
        return (OSError,)
    return (StoreError, OSError)


class SessionEdits(_ScreenMixin):
    """Rename and delete for ``SessionPickerScreen`` (mixed in; uses its listing and highlight)."""

    store: SessionStoreLike
    search: HistorySearch | None
    current_id: str | None
    _rename_current: Callable[[str], None] | None
    _by_id: dict[str, SessionMetaLike]

    if TYPE_CHECKING:
        def _highlighted(self) -> SessionMetaLike | None: ...

        def _shown_ids(self) -> Sequence[str]: ...

        def reload(self, highlight: str | None = None) -> object: ...

    def action_rename(self) -> None:
        meta = self._highlighted()
        if meta is None:
            return

        def renamed(title: str | None) -> None:
            if title is None:
                return
            if not title:
                self.notify("A session title cannot be empty.", severity="warning", markup=False)
            elif title != meta.title:
                self._rename(meta.id, title)

        self.app.push_screen(
            PromptModal("Rename session", value=meta.title, placeholder="New title", submit_label="Rename"),
            renamed,
        )

    def action_delete(self) -> None:
        meta = self._highlighted()
        if meta is None:
            return
        if meta.id == self.current_id:
            self.notify("This session is open here; switch to another one before deleting it.", severity="warning",
                        markup=False)
            return
        forks = sum(1 for other in self._by_id.values() if other.parent is not None and other.parent.session == meta.id)
        message = Content.from_markup(
            "Delete [b]$title[/b] ($id, $count messages)?\n"
            "Its history and events are removed from disk. This cannot be undone.",
            title=meta.title or "(untitled)",
            id=short_id(meta.id),
            count=meta.message_count,
        )
        if forks:
            message = message.append(f"\nIts {plural(forks, 'fork')} will be kept.")

        ids = list(self._shown_ids())
        position = ids.index(meta.id) if meta.id in ids else -1
        neighbours = ids[position + 1 : position + 2] or ids[max(position - 1, 0) : max(position, 0)]
        next_highlight = neighbours[0] if neighbours else None

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._delete(meta.id, next_highlight)

        self.app.push_screen(
            ConfirmModal("Delete session", message, confirm_label="Delete", destructive=True),
            confirmed,
        )

    @work(group="picker-write")
    async def _rename(self, session_id: str, title: str) -> None:
        current = session_id == self.current_id and self._rename_current is not None
        try:
            if current and self._rename_current is not None:
                self._rename_current(title)
            else:
                await asyncio.to_thread(self.store.rename, session_id, title)
                if self.search is not None:
                    await asyncio.to_thread(self.search.rename, session_id, " ".join(title.split()))
        except store_errors() as error:
            self.notify(str(error), title="Not renamed", severity="warning", markup=False)
            return
        self.reload(highlight=session_id)

    @work(group="picker-write")
    async def _delete(self, session_id: str, next_highlight: str | None) -> None:
        try:
            await asyncio.to_thread(self.store.delete, session_id)
        except store_errors() as error:
            self.notify(str(error), title="Not deleted", severity="warning", markup=False)
            return
        if self.search is not None:  # its forks take over the history they shared with it
            await asyncio.to_thread(self.search.forget, session_id)
        self.notify(f"Deleted session {short_id(session_id)}.", markup=False)
        self.reload(highlight=next_highlight)
