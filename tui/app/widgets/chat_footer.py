"""The chat screen's footer: Textual's, rebuilt only when what it shows changes.

Textual's :class:`~textual.widgets.Footer` rebuilds all its keys (mounting and styling each again) after every
change of the screen's bindings, and most changes show nothing new: the focus moving between widgets with the
same keys, a screen coming up, several changes before one refresh. Here every change still queues a rebuild, as
Textual's does, but only the newest one queued runs, and only when the keys it would show differ from the keys
shown. It reads the bindings as they are when it runs, so the last change is always shown, and no flag can be
left set to stop a later one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.screen import Screen

KeysShown = tuple[object, ...]
"""What the footer shows, to compare: each shown binding's key, label, action, group and state, the palette key."""


class ChatFooter(Footer):
    """A :class:`~textual.widgets.Footer` that rebuilds once per burst of changes, and only for a change it shows."""

    def __init__(self, *, compact: bool = False, show_command_palette: bool = True, keys_now: bool = True) -> None:
        """``keys_now``: compose the keys with the footer; otherwise they come with :meth:`show_keys` (just
        after the first frame, as Textual's own footer's come one refresh after it)."""
        super().__init__(compact=compact, show_command_palette=show_command_palette)
        self._keys_wanted = keys_now
        self._changes = 0
        """Binding changes seen; a queued rebuild runs only if none came after it."""
        self._shown: KeysShown | None = None
        """What the keys built show (``None``: none built yet)."""

    def show_keys(self) -> None:
        """Build the keys now (a footer made with ``keys_now=False``)."""
        if not self._keys_wanted:
            self._keys_wanted = True
            self.call_later(self._queue_rebuild)  # from the footer itself: its keys bind to it as they compose

    def compose(self) -> ComposeResult:
        # The keys of the bindings as they are now (Textual's footer composes none, then rebuilds at the first
        # binding change); the first change that shows something new rebuilds them.
        if not self._keys_wanted:
            return
        self._bindings_ready = True
        self._shown = self.keys_shown()
        yield from super().compose()

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not self._keys_wanted or not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self._queue_rebuild()

    def watch_show_command_palette(self) -> None:
        if self.is_attached and self._keys_wanted:
            self._queue_rebuild()  # Textual's footer shows the change only with the next binding change

    def keys_shown(self) -> KeysShown:
        """What a rebuild now would show."""
        active = self.screen.active_bindings  # computed on each read: every binding's check_action asked
        keys: list[object] = [
            (binding.key, binding.key_display, binding.description, binding.action,
             binding.group.description if binding.group else None, enabled, tooltip)
            for _node, binding, enabled, tooltip in active.values() if binding.show]
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        keys.append((self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE,
                     palette.enabled if palette is not None else None))
        return tuple(keys)

    def _queue_rebuild(self) -> None:
        self._changes += 1
        self.call_after_refresh(self._rebuild, self._changes)

    async def _rebuild(self, change: int) -> None:
        if change != self._changes:  # a later change queued its own rebuild, which reads the same bindings
            return
        if self.keys_shown() != self._shown:
            await self.recompose()  # compose notes what it shows
