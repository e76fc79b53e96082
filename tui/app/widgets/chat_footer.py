"""The chat screen's footer: Textual's, rebuilt once per burst of binding changes.

Textual's :class:`~textual.widgets.Footer` rebuilds all its keys after each change of the screen's bindings,
and a screen coming up changes them several times in one refresh (its focus set, its stack updated): three
rebuilds of every key before the first frame. This one queues at most one rebuild at a time; the rebuild reads
the bindings as they are when it runs, so the last change is always shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen


class ChatFooter(Footer):
    """A :class:`~textual.widgets.Footer` that coalesces the rebuilds queued between two refreshes."""

    def __init__(self, *, compact: bool = False, show_command_palette: bool = True) -> None:
        super().__init__(compact=compact, show_command_palette=show_command_palette)
        self._rebuild_queued = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._rebuild_queued:
            return  # the rebuild already queued reads the bindings when it runs
        will_rebuild = screen.app.app_focus and self.is_attached and screen is self.screen
        super().bindings_changed(screen)
        self._rebuild_queued = will_rebuild

    async def recompose(self) -> None:
        self._rebuild_queued = False
        await super().recompose()
