"""The chat screen's helpers, each built (its module imported) the first time it is used.

None of them is needed for the first frame, and together they import most of the app (the turn's events, the
chain's, the dialogs): :class:`ChatHelpers` gives the chat screen each as an attribute that is built on first
use, and :meth:`~tui.app.chat.main_screen.MainScreen.first_frame_shown` builds them all just after the first
frame. Each helper reaches the screen through its own small protocol, which
:class:`~tui.app.chat.main_screen.MainScreen` answers (mypy checks it there, in ``_answers_its_helpers``).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from tui.app.chat.host_screen import HostScreen

if TYPE_CHECKING:
    from tui.app.chat.chain_events import ChainEventRouter
    from tui.app.chat.chat_dialogs import ChatDialogs
    from tui.app.chat.file_completion import FileCompletion
    from tui.app.chat.model_switching import ModelSwitching
    from tui.app.chat.prompt_flow import PromptFlow
    from tui.app.chat.rewinding import Rewinding
    from tui.app.chat.session_actions import SessionActions
    from tui.app.chat.session_display import SessionDisplay
    from tui.app.chat.session_state import Approvers
    from tui.app.chat.session_switcher import SessionSwitcher
    from tui.app.chat.task_controls import TaskControls
    from tui.app.chat.turn_runner import TurnRunner

__all__ = ["HELPERS", "ChatHelpers"]

HELPERS = ("prompts", "turns", "sessions", "models", "files", "tasks", "dialogs", "rewinds", "chain_events",
           "display_session", "switcher")
"""The helpers' attribute names."""


class ChatHelpers(HostScreen):
    """The chat screen's helpers as attributes, each built on first use (the base of the chat screen)."""

    approvers: Approvers
    """The dialogs every session shown here asks through (set by the chat screen)."""

    @property
    def host(self) -> Any:
        """The chat screen, as each helper's protocol sees it (the chat screen answers them all)."""
        return self

    @cached_property
    def prompts(self) -> PromptFlow:
        from tui.app.chat.prompt_flow import PromptFlow

        return PromptFlow(self.host)

    @cached_property
    def turns(self) -> TurnRunner:
        from tui.app.chat.turn_runner import TurnRunner

        return TurnRunner(self.host)

    @cached_property
    def sessions(self) -> SessionActions:
        from tui.app.chat.session_actions import SessionActions

        return SessionActions(self.host)

    @cached_property
    def models(self) -> ModelSwitching:
        from tui.app.chat.model_switching import ModelSwitching

        return ModelSwitching(self.host)

    @cached_property
    def files(self) -> FileCompletion:
        from tui.app.chat.file_completion import FileCompletion

        return FileCompletion(self.host)

    @cached_property
    def tasks(self) -> TaskControls:
        from tui.app.chat.task_controls import TaskControls

        return TaskControls(self.host, lambda: self.state.runtime)

    @cached_property
    def dialogs(self) -> ChatDialogs:
        from tui.app.chat.chat_dialogs import ChatDialogs

        return ChatDialogs(self.host)

    @cached_property
    def rewinds(self) -> Rewinding:
        from tui.app.chat.rewinding import Rewinding

        return Rewinding(self.host)

    @cached_property
    def chain_events(self) -> ChainEventRouter:
        from tui.app.chat.chain_events import ChainEventRouter

        return ChainEventRouter(self.host)

    @cached_property
    def display_session(self) -> SessionDisplay:
        from tui.app.chat.session_display import SessionDisplay

        return SessionDisplay(self.host, self.approvers, self.host.post_chain_event)

    @cached_property
    def switcher(self) -> SessionSwitcher:
        from tui.app.chat.session_switcher import SessionSwitcher, SwitchHooks

        return SessionSwitcher(SwitchHooks(
            current=lambda: self.state.runtime, adopt=self.host.adopt_runtime,
            reveal=lambda index, saved, match: self.sessions.reveal_message(index, saved, match),
            notify=self.notify,
            start=lambda work, group: self.run_worker(work, group=group, exclusive=True)))

    def build_helpers(self) -> None:
        """Build every helper now (just after the first frame), so the first command does not wait on imports."""
        for name in HELPERS:
            getattr(self, name)

