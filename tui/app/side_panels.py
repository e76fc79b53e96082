"""The side panels (Memory, Log, Evicted): mounted after the first frame, toggled by their keys, and
refilled when the app switches sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.lazy import Lazy
from textual.widgets import TabbedContent, TabPane, Tabs

from tui.agent.runtime_api import SessionRuntimeAPI
from tui.app.widgets.event_log import EventLogPanel
from tui.app.widgets.evicted_browser import EvictedBrowser
from tui.app.widgets.memory_editor import MemoryEditor
from tui.app.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["SidePanels"]


class SidePanels:
    """The app's ``#side`` tabbed panel."""

    def __init__(self, app: App[int]) -> None:
        self.app = app

    @staticmethod
    def compose(runtime: SessionRuntimeAPI) -> ComposeResult:
        """Memory, log and evicted panels, hidden until asked for. :class:`~textual.lazy.Lazy` mounts them
        after the first frame: with their editor, lists and file watcher they cost about as much as the
        rest of the screen."""
        side = TabbedContent(id="side", initial="memory-tab")
        side.display = False
        with Lazy(side):
            yield TabPane("Memory", MemoryEditor(runtime.memory_path), id="memory-tab")
            yield TabPane("Log", EventLogPanel(runtime.past_events()), id="log-tab")
            yield TabPane("Evicted", EvictedBrowser(runtime.evicted_outputs()), id="evicted-tab")

    def toggle(self, tab: str) -> None:
        """Show ``tab`` with the keyboard in it; the same key again hides the panel and returns to the prompt."""
        side = next(self.app.query("#side").results(TabbedContent), None)
        if side is None:  # a key in the first instant, before the panels are mounted
            return
        if side.display and side.active == tab:
            side.display = False
            self.app.query_one(PromptInput).focus()
            return
        side.display = True
        side.active = tab
        self.app.call_after_refresh(self._focus, tab)

    def _focus(self, tab: str) -> None:
        """Put the keyboard in the panel just opened (its editor or list), so its keys work at once."""
        side = self.app.query_one("#side", TabbedContent)
        pane = side.get_pane(tab)
        target = next((widget for widget in pane.query("*") if widget.focusable and widget.display), None)
        (target or side.query_one(Tabs)).focus()  # an empty panel: the tab row, so arrows still move

    def refresh_evicted(self, runtime: SessionRuntimeAPI) -> None:
        for browser in self.app.query(EvictedBrowser):
            browser.set_outputs(runtime.evicted_outputs())

    async def adopt(self, runtime: SessionRuntimeAPI) -> None:
        """Another session: its event log and its evicted outputs (MEMORY.md is shared)."""
        for old_log in self.app.query(EventLogPanel):
            await old_log.remove()
        for pane in self.app.query("#log-tab").results(TabPane):
            await pane.mount(EventLogPanel(runtime.past_events()))
        self.refresh_evicted(runtime)
