"""What is open now: the session shown, the factory that opens others, the store they live in.

One :class:`SessionState` is made at start-up (:class:`~tui.app.app.DeepTuiApp`) and shared with the chat
screen and its helpers; switching sessions changes :attr:`SessionState.runtime` here, so every reader sees
the same session. Nothing here is Textual: it is the plain record the chat's helpers read instead of the App.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.agent.approval.commands import CommandApprover
    from tui.agent.approval.writes import WriteApprover
    from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
    from tui.app.screens.session_rows import SessionMetaLike, SessionStoreLike
    from tui.base.config import Settings
    from tui.chain.manager import SummaryConsent

__all__ = ["Approvers", "SessionState"]


@dataclass(eq=False)
class SessionState:
    """The open session and what comes with it (shared, changed in place by a session switch)."""

    runtime: SessionRuntimeAPI
    """The session shown now."""
    settings: Settings
    factory: RuntimeFactoryAPI | None = None
    """Opens sessions; ``None`` while the first session is still opening."""
    store: SessionStoreLike | None = None
    """The sessions on disk; ``None`` while the first session is still opening."""
    recent_sessions: list[SessionMetaLike] | None = None
    """The last session listing, so the picker shows at once (it refreshes itself after)."""
    auto_allowed_in: weakref.WeakKeyDictionary[SessionRuntimeAPI, set[str]] = field(
        default_factory=weakref.WeakKeyDictionary)
    """Per open session, what the user let run without asking for the rest of it ("writes", "commands")."""

    @property
    def opening(self) -> bool:
        """The first session is still opening (no factory or store yet)."""
        return self.factory is None or self.store is None

    def allow_for_session(self, kind: str) -> None:
        """The user let every later ``kind`` ("writes", "commands", "MCP <server>") of the open session run
        without asking."""
        self.auto_allowed_in.setdefault(self.runtime, set()).add(kind)

    def runs_without_asking(self) -> tuple[str, ...]:
        """What runs without asking in the open session: set so in the settings, or allowed by the user (an MCP
        server's tools by the server's name)."""
        granted = self.auto_allowed_in.get(self.runtime, set())
        tools = self.settings.tools
        kinds = tuple(kind for kind, always in (("writes", tools.writes == "always"),
                                                ("commands", tools.commands == "always"))
                      if always or kind in granted)
        return kinds + tuple(sorted(kind for kind in granted if kind.startswith("MCP ")))


@dataclass(frozen=True)
class Approvers:
    """How the open session asks before a file write and before a shell command (dialogs, from the App)."""

    writes: WriteApprover
    commands: CommandApprover
    summary: SummaryConsent | None = None
    """Asked before the pre-flight summarizes a request over the window while automatic compaction is off."""
