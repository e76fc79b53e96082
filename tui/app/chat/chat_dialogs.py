"""The chat's dialog and panel commands: compact, the context report (with the session's compaction controls), the MCP
servers, the skills and custom commands, the side panels.

:class:`ChatDialogs` carries them out for the chat screen (:class:`~tui.app.chat.main_screen.MainScreen`),
reached through the small :class:`DialogHost` protocol; the App's registry actions call it. Each dialog is
imported when first opened: none is needed for the first frame.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol

from tui.agent.runtime_api import ContextBreakdown, SessionRuntimeAPI, TaskStateAPI

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from tui.app.chat.session_state import SessionState
    from tui.app.chat.side_panels import SidePanels
    from tui.chain.events import UsageEvent

__all__ = ["ChatDialogs", "DialogHost"]


class DialogHost(Protocol):
    """What the dialog commands need from the screen that owns the chat."""

    state: SessionState
    panels: SidePanels
    usage: UsageEvent | None
    """The gauge's usage (the context report shows the same figure)."""

    @property
    def ready(self) -> bool:
        """The session is open (else the user is told it is still opening)."""

    def focus_prompt(self) -> None: ...

    def compact_now(self, focus: str) -> None:
        """Compact at once with ``focus``, in the chat (no dialog)."""

    def show_dialog(self, screen: Screen[Any] | str, done: Callable[[Any], None] | None = None) -> None: ...

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None:
        """A notification (plain text)."""


class ChatDialogs:
    """Opens the chat's dialogs and toggles its panels."""

    def __init__(self, host: DialogHost) -> None:
        self.host = host

    def agents(self) -> None:
        """/agents: the subagent types the model can hand a task to."""
        from tui.app.screens.agents_list import AgentsScreen

        self.host.show_dialog(AgentsScreen(self.host.state.runtime.subagent_definitions()))

    def compact(self, focus: str = "") -> None:
        """Ctrl+G, the button, bare ``/compact``: the compaction dialog (what it would do, a focus, Run).
        ``/compact FOCUS``: compact at once with that focus, no dialog (the chat shows the divider or the failure)."""
        if focus.strip():
            self.host.compact_now(focus.strip())
            return
        from tui.app.screens.compact_dialog import CompactDialog

        self.host.show_dialog(CompactDialog(self.host.state.runtime),
                              lambda _result: self.host.focus_prompt())

    def context(self) -> None:
        """F2: what fills the context window."""
        if not self.host.ready:
            return
        from tui.app.screens.context_report import CompactionControls, ContextScreen

        runtime = self.host.state.runtime
        controls: CompactionControls | None = None
        if isinstance(runtime, TaskStateAPI):
            session = runtime

            def change(*, threshold: float | None = None, auto: bool | None = None,
                       reset: bool = False) -> ContextBreakdown:
                if reset:
                    session.reset_compaction()
                else:
                    session.set_compaction(threshold=threshold, auto=auto)
                return self._report(runtime)

            controls = change
        self.host.show_dialog(ContextScreen(self._report(runtime), offline=runtime.info.offline, controls=controls))

    def _report(self, runtime: SessionRuntimeAPI) -> ContextBreakdown:
        report = runtime.context_breakdown()
        usage = self.host.usage
        if usage is not None:  # one figure with the gauge: the gauge's own
            report = dataclasses.replace(report, counted=usage.tokens)
        return report

    def mcp(self) -> None:
        """``/mcp``: the MCP servers, their status and tools."""
        from tui.app.screens.mcp_servers import McpServersScreen

        factory = self.host.state.factory
        if factory is None:
            self.host.tell("The session is still opening…", severity="warning", timeout=3)
            return
        mcp = factory.mcp
        if mcp is None:
            self.host.show_dialog(McpServersScreen(list))
            return
        self.host.show_dialog(McpServersScreen(mcp.views, mcp.on_change))

    def skills(self) -> None:
        """``/skills``: the skills and custom commands, and what was skipped."""
        from tui.app.screens.basic_dialogs import TextViewerModal
        from tui.app.screens.skills_list import skills_listing

        factory = self.host.state.factory
        if factory is None:
            self.host.tell("The session is still opening; try /skills again in a moment.", timeout=4)
            return
        self.host.show_dialog(TextViewerModal("Skills and custom commands", skills_listing(factory.extensions)))

    def toggle_panel(self, tab: str) -> None:
        """Ctrl+O, Ctrl+L, Ctrl+B: show (or hide) the Memory, Log or Evicted panel."""
        if tab == "evicted-tab":
            self.host.panels.refresh_evicted(self.host.state.runtime)
        self.host.panels.toggle(tab)
