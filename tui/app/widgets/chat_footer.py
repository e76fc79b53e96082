"""The chat screen's footer: Textual's, rebuilt once per burst of binding changes.

Textual's :class:`~textual.widgets.Footer` rebuilds all its keys after every change of the screen's bindings, and
a screen coming up changes them several times before one refresh (its focus set, its stack updated): each
rebuild mounts and styles every key again, before the first frame too. Here every change still queues its own
rebuild, as Textual's does, but only the newest one queued runs: it reads the bindings as they are then, so the
last change is always shown, and no flag can be left set to stop a later one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen


class ChatFooter(Footer):
    """A :class:`~textual.widgets.Footer` whose rebuilds queued between two refreshes run as one."""

    def __init__(self, *, compact: bool = False, show_command_palette: bool = True) -> None:
        super().__init__(compact=compact, show_command_palette=show_command_palette)
        self._changes = 0
        """Binding changes seen; a queued rebuild runs only if none came after it."""

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self._changes += 1
            self.call_after_refresh(self._rebuild, self._changes)

    async def _rebuild(self, change: int) -> None:
        if change == self._changes:  # a later change queued its own rebuild, which reads the same bindings
            await self.recompose()
