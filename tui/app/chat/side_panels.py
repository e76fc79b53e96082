"""The side panels (Memory, Log, Evicted, Todos): built and mounted after the first frame, toggled by their keys,
and refilled when the chat switches sessions."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.widget import Widget

from tui.app.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.chain.events import ChainEvent
    from tui.store.task_state import TaskState

__all__ = ["SidePanels"]


class SidePanels:
    """The chat screen's ``#side`` tabbed panel.

    Built and mounted once the first frame is painted (see :class:`PanelsSlot`): with their editor, lists
    and file watcher the panels (and their modules: watchfiles, the tabs) cost about as much as the rest
    of the screen, and they are hidden until asked for."""

    def __init__(self, screen: Widget, runtime: Callable[[], SessionRuntimeAPI]) -> None:
        """``screen``: the screen the panels are on; ``runtime``: its current session (the panels show the one
        open when they are built)."""
        self.screen = screen
        self._runtime = runtime
        self._mounting: asyncio.Event | None = None
        self._asked_early: str | None = None
        """A tab asked for by its key before the panels were built: shown as soon as they are."""
        """Set when the panels' mount, once asked for, is over (done, skipped, or its slot gone)."""

    def slot(self) -> Widget:
        """What the screen's compose yields where the panels go; :meth:`build_in_slot` fills it."""
        return PanelsSlot(self)

    def build_in_slot(self) -> None:
        """The first frame is shown: build the panels in their slot (nothing to do once they are built)."""
        for slot in self.screen.query(PanelsSlot):
            if self._mounting is None:
                self._mounting = asyncio.Event()
            slot.fill()

    async def settled(self) -> None:
        """Until a mount of the panels under way is over: the App ends only then (a screen torn down under a
        mounting tab row fails inside Textual)."""
        if self._mounting is not None:
            await self._mounting.wait()

    def mount_over(self) -> None:
        if self._mounting is not None:
            self._mounting.set()

    def mounted(self) -> None:
        """The panels are on the screen: open the one a key asked for while they were being built."""
        tab, self._asked_early = self._asked_early, None
        if tab is not None:
            self.toggle(tab)

    def build(self) -> Widget:
        """The panels for the current session, hidden."""
        from textual.widgets import TabbedContent, TabPane

        from tui.app.widgets.event_log import EventLogPanel
        from tui.app.widgets.evicted_browser import EvictedBrowser
        from tui.app.widgets.memory_editor import MemoryEditor
        from tui.app.widgets.todo_panel import TodoPanel

        runtime = self._runtime()
        side = TabbedContent(id="side", initial="memory-tab")
        side.display = False
        for pane in (TabPane("Memory", MemoryEditor(runtime.memory_path), id="memory-tab"),
                     TabPane("Log", EventLogPanel(runtime.past_events(), inherited=runtime.inherited_events()),
                             id="log-tab"),
                     TabPane("Evicted", EvictedBrowser(runtime.evicted_outputs()), id="evicted-tab"),
                     TabPane("Todos", TodoPanel(_task_state(runtime)), id="todos-tab")):
            side.compose_add_child(pane)  # as `with side:` does in a compose method
        return side

    def toggle(self, tab: str) -> None:
        """Show ``tab`` with the keyboard in it; the same key again hides the panel and returns to the prompt."""
        from textual.widgets import TabbedContent

        side = next(self.screen.query("#side").results(TabbedContent), None)
        if side is None:  # a key in the first instant, before the panels are mounted: shown once they are
            self._asked_early = None if self._asked_early == tab else tab
            return
        if side.display and side.active == tab:
            side.display = False
            self.screen.query_one(PromptInput).focus()
            return
        side.display = True
        side.active = tab
        self.screen.call_after_refresh(self._focus, tab)

    def _focus(self, tab: str) -> None:
        """Put the keyboard in the panel just opened (its editor or list), so its keys work at once."""
        from textual.widgets import TabbedContent, Tabs

        side = self.screen.query_one("#side", TabbedContent)
        pane = side.get_pane(tab)
        target = next((widget for widget in pane.query("*") if widget.focusable and widget.display), None)
        (target or side.query_one(Tabs)).focus()  # an empty panel: the tab row, so arrows still move

    def add_event(self, event: ChainEvent) -> None:
        """A chain event of the current session, for the log panel."""
        from tui.app.widgets.event_log import EventLogPanel

        for log in self.screen.query(EventLogPanel):
            log.add_event(event)

    def refresh_evicted(self, runtime: SessionRuntimeAPI) -> None:
        from tui.app.widgets.evicted_browser import EvictedBrowser

        for browser in self.screen.query(EvictedBrowser):
            browser.set_outputs(runtime.evicted_outputs())

    async def adopt(self, runtime: SessionRuntimeAPI) -> None:
        """Another session: its event log and its evicted outputs (MEMORY.md is shared). Before the panels
        are mounted there is nothing to do: :meth:`build` makes them for the session of then."""
        from textual.widgets import TabPane

        from tui.app.widgets.event_log import EventLogPanel

        for old_log in self.screen.query(EventLogPanel):
            await old_log.remove()
        for pane in self.screen.query("#log-tab").results(TabPane):
            await pane.mount(EventLogPanel(runtime.past_events(), inherited=runtime.inherited_events()))
        self.refresh_evicted(runtime)


class PanelsSlot(Widget):
    """Holds the panels' place until the first frame is painted, then gives it to them (as
    :class:`textual.lazy.Lazy` does, but importing and building them only then).

    "Painted" means shown: Textual draws nothing on the terminal until the App is running, and the screen's
    first refreshes happen while the App is still mounting, so a callback after the screen's first refresh
    would run before anything is on the terminal (and hold the first frame back by the panels' cost). The
    slot waits for :meth:`fill` instead, which the App calls once its first frame is shown."""

    DEFAULT_CSS = """
    PanelsSlot { display: none; }
    """

    def __init__(self, panels: SidePanels) -> None:
        super().__init__()
        self._panels = panels

    def fill(self) -> None:
        """Build the panels in this slot's place (after the refresh in progress)."""
        self.call_after_refresh(self._replace)  # on this widget: nothing happens if it is gone by then

    async def _replace(self) -> None:
        try:
            if self.app.return_code is not None:  # the app is ending (a session it could not open): build nothing
                return
            parent = self.parent
            if isinstance(parent, Widget):
                await parent.mount(self._panels.build(), after=self)
            await self.remove()
            self._panels.mounted()
        finally:
            self._panels.mount_over()

    def on_unmount(self) -> None:
        self._panels.mount_over()  # removed before it was filled: no mount will come


def _task_state(runtime: SessionRuntimeAPI) -> TaskState | None:
    """The session's todo list and /keep lines (``None`` for the stand-in shown while a session opens)."""
    from tui.agent.runtime_api import TaskStateAPI

    return runtime.task_state() if isinstance(runtime, TaskStateAPI) else None
