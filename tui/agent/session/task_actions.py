"""The task state and the mode of a :class:`~tui.agent.session.runtime.SessionRuntime`: the todo list, the
standing instructions (``/keep``), the mode (default / auto-accept writes / plan) and the compaction controls,
each change counted at once so the gauge follows before the next request."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from tui.agent.approval.plan_mode import ModeGuard
from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.modes import SessionMode, as_mode
from tui.chain.events import ChainEvent, UsageEvent
from tui.chain.manager import ContextManager
from tui.store.task_state import TaskState


class SessionTaskActions:
    """The task-state part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named
    here)."""

    tasks: TaskBoard
    modes: ModeGuard
    manager: ContextManager
    last_usage: UsageEvent | None
    _report_fixed_change: Callable[[], None]
    _on_chain_event: Callable[[ChainEvent], None]

    @property
    def mode(self) -> SessionMode:
        """The session's mode: ``default``, ``accept-writes`` or ``plan``."""
        return as_mode(self.modes.mode)

    def set_mode(self, mode: str) -> SessionMode:
        """Switch the mode (Shift+Tab, ``--mode``); from the next tool call on. ``ValueError`` for an unknown one.
        Plan mode's instructions are counted again at once."""
        self.modes.mode = as_mode(mode)
        self._report_fixed_change()
        return self.mode

    def task_state(self) -> TaskState:
        """The todo list and the standing instructions as they are now."""
        return self.tasks.state

    def add_keep(self, text: str) -> TaskState:
        """Add a standing instruction (``/keep TEXT``), saved with the session and in every later request's
        instructions. Raises :class:`~tui.store.task_state.TaskStateError` (empty, too long, too many) or
        ``OSError`` (it could not be saved)."""
        state = self.tasks.add_keep(text)
        self._report_fixed_change()
        return state

    def remove_keep(self, index: int) -> TaskState:
        """Delete the standing instruction at ``index`` (0-based)."""
        state = self.tasks.remove_keep(index)
        self._report_fixed_change()
        return state

    def set_compaction(self, *, threshold: float | None = None, auto: bool | None = None) -> None:
        """Change the automatic compaction threshold or turn automatic compaction off/on for this session
        (``/context``); ``ConfigError`` for a threshold out of range. The gauge's marks follow at once."""
        self.manager.set_compaction(threshold=threshold, auto=auto)
        if self.last_usage is not None and self.manager.last_tokens is None:
            self._on_chain_event(dataclasses.replace(
                self.last_usage, compaction_threshold=self.manager.settings.compaction_threshold,
                summarize_threshold=self.manager.settings.summarize_threshold,
                auto_compact=self.manager.settings.auto_compact))

    def set_summary_consent(self, ask: Callable[[int, int], Awaitable[bool]] | None) -> None:
        """Who is asked (tokens, limit) before the pre-flight summarizes a request over the window while automatic
        compaction is off (the app's dialog); ``None``: nobody, so it only makes pointers and cuts."""
        self.manager.ask_before_summary = ask
