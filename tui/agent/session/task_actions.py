"""The task state and the mode of a :class:`~tui.agent.session.runtime.SessionRuntime`: the todo list, the
standing instructions (``/keep``), the mode (default / auto-accept writes / plan) and the compaction controls,
each change counted at once so the gauge follows before the next request."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from tui.agent.approval.plan_mode import ModeGuard
from tui.agent.runtime_api import RuntimeInfo
from tui.agent.session.event_history import EventHistory
from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.modes import SessionMode, as_mode
from tui.base.config import ConfigError, Settings
from tui.chain.events import ChainEvent, UsageEvent
from tui.chain.manager import ContextManager
from tui.store import SessionHandle
from tui.store.task_state import TaskState


class SessionTaskActions:
    """The task-state part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named
    here)."""

    tasks: TaskBoard
    modes: ModeGuard
    manager: ContextManager
    settings: Settings
    handle: SessionHandle
    info: RuntimeInfo
    last_usage: UsageEvent | None
    _report_fixed_change: Callable[[], None]
    _on_chain_event: Callable[[ChainEvent], None]
    event_history: EventHistory

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
        (``/context``); ``ConfigError`` for a threshold out of range. Kept in session.json (what differs from the
        config), so a resumed session keeps it. The gauge's marks follow at once."""
        self.manager.set_compaction(threshold=threshold, auto=auto)
        self._compaction_changed()

    def reset_compaction(self) -> None:
        """Back to the config's threshold and switch (``[context]``) for this session."""
        configured = self.settings.context
        self.manager.set_compaction(threshold=configured.compaction_threshold, auto=configured.auto_compact,
                                    summarize=configured.summarize_threshold)
        self._compaction_changed()

    def restore_compaction(self) -> None:
        """As the session opens: the controls the user set for it before (session.json), over the config's."""
        meta = self.handle.meta
        if meta.compaction_threshold is None and meta.auto_compact is None:
            return
        try:
            self.manager.set_compaction(threshold=meta.compaction_threshold, auto=meta.auto_compact)
        except ConfigError as error:  # a threshold the config's summary threshold cannot follow
            self.info.warnings.append(f"this session's compaction threshold was not applied: {error}")

    def _compaction_changed(self) -> None:
        configured, now = self.settings.context, self.manager.settings
        self.handle.record_compaction_controls(
            now.compaction_threshold if now.compaction_threshold != configured.compaction_threshold else None,
            now.auto_compact if now.auto_compact != configured.auto_compact else None)
        if self.manager.last_tokens is not None:
            return  # the manager reported its last figure again, with the new marks
        if self.last_usage is not None:
            self._on_chain_event(dataclasses.replace(
                self.last_usage, compaction_threshold=now.compaction_threshold,
                summarize_threshold=now.summarize_threshold, auto_compact=now.auto_compact))
        elif self.handle.meta.message_count == 0:  # a new session: its gauge shows the marks from now on
            self.last_usage = self.manager.estimate_usage([])
            self.event_history.notify(self.last_usage)

    def set_summary_consent(self, ask: Callable[[int, int], Awaitable[bool]] | None) -> None:
        """Who is asked (tokens, limit) before the pre-flight summarizes a request over the window while automatic
        compaction is off (the app's dialog); ``None``: nobody, so it only makes pointers and cuts."""
        self.manager.ask_before_summary = ask
