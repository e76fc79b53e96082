"""The chat screen's task state: the line above the gauge, the Todo panel, ``/keep``, the mode (Shift+Tab; shown on
that line and in the title bar) and the offer made when a turn in plan mode ends. It talks to the session only through
:class:`~tui.agent.runtime_api.TaskStateAPI` (the stand-in shown while a session opens has none)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tui.agent.runtime_api import MODE_HINTS, MODE_LABELS, TaskStateAPI, TaskStateChanged, next_mode
from tui.app.screens.keep_lines import KeepLinesModal
from tui.app.screens.plan_offer import EDIT, GO_AHEAD, START, plan_offer
from tui.app.widgets.task_line import TaskLine
from tui.app.widgets.todo_panel import TodoPanel
from tui.store.task_state import TaskState, TaskStateError

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App
    from textual.css.query import DOMQuery
    from textual.widget import Widget

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.app.widgets.prompt_input import PromptInput

__all__ = ["TaskControls"]


class TaskHost(Protocol):
    """What the controls need of the chat screen."""

    @property
    def app(self) -> App[object]: ...

    @property
    def prompt(self) -> PromptInput: ...

    def query(self, selector: type[Widget]) -> DOMQuery[Widget]: ...

    def say(self, message: str, timeout: float) -> None: ...

    def run_turn(self, prompt: str) -> object: ...

    def refresh_title(self) -> None: ...


class TaskControls:
    """Keeps the task line and the Todo panel in step with the session, and carries out the task commands."""

    def __init__(self, host: TaskHost, runtime: Callable[[], SessionRuntimeAPI]) -> None:
        self.host = host
        self._runtime = runtime

    def session(self) -> TaskStateAPI | None:
        runtime = self._runtime()
        return runtime if isinstance(runtime, TaskStateAPI) else None

    def mode(self) -> str:
        """The open session's mode (``default`` while it opens)."""
        session = self.session()
        return session.mode if session is not None else "default"

    # -- showing ----------------------------------------------------------------------------

    def show(self, changed: TaskStateChanged | None = None) -> None:
        """The current session's state and mode on the task line and in the Todo panel."""
        session = self.session()
        if session is None:
            return
        for line in self.host.query(TaskLine):
            assert isinstance(line, TaskLine)
            line.show(changed or _changed(session), mode=session.mode)
        state = session.task_state()
        for panel in self.host.query(TodoPanel):
            assert isinstance(panel, TodoPanel)
            panel.show(state)
        self.host.refresh_title()  # the mode is in the title bar too

    def changed(self, event: TaskStateChanged) -> None:
        """The session's todo list or standing instructions changed (or the cap folded part of the list)."""
        self.show(event)
        if event.note:
            self.host.say(f"Todo list: {event.note}", timeout=8)

    # -- commands ----------------------------------------------------------------------------

    def cycle_mode(self) -> None:
        """Shift+Tab: default → auto-accept writes → plan → default."""
        session = self.session()
        if session is None:
            self.host.say("The session is still opening…", timeout=3)
            return
        mode = session.set_mode(next_mode(session.mode))
        self.show()
        self.host.say(f"Mode: {MODE_LABELS[mode]} — {MODE_HINTS[mode]}", timeout=4)

    def keep(self, text: str = "") -> None:
        """``/keep TEXT`` adds a standing instruction; ``/keep`` alone lists them with delete."""
        session = self.session()
        if session is None:
            self.host.say("The session is still opening…", timeout=3)
            return
        if not text.strip():
            self.host.app.push_screen(KeepLinesModal(session.task_state().keep, self._delete),
                                      lambda _result: self._after_list())
            return
        try:
            session.add_keep(text)
        except (TaskStateError, OSError) as error:
            self.host.say(f"Not kept: {error}", timeout=6)
            return
        self.show()
        self.host.say("Kept for the whole session: every request carries it (/keep lists them)", timeout=4)

    def _delete(self, index: int) -> TaskState:
        session = self.session()
        if session is None:
            raise TaskStateError("the session is not open")
        return session.remove_keep(index)

    def _after_list(self) -> None:
        self.show()
        self.host.prompt.focus()

    def delete_keep(self, index: int) -> None:
        """The Todo panel's delete button."""
        try:
            self._delete(index)
        except (TaskStateError, OSError) as error:
            self.host.say(f"Not deleted: {error}", timeout=6)
        self.show()

    # -- the end of a turn in plan mode ----------------------------------------------------------

    def turn_ended(self, *, finished: bool) -> None:
        """A turn that ended in plan mode with an answer: offer to start with the plan, keep planning, or edit."""
        session = self.session()
        if session is None or not finished or session.mode != "plan":
            return
        self.host.app.push_screen(plan_offer(len(session.task_state().todos)), self._plan_answer)

    def _plan_answer(self, answer: str | None) -> None:
        session = self.session()
        if session is None:
            return
        if answer in (START, EDIT):
            session.set_mode("default")
            self.show()
        if answer == START:
            self.host.run_turn(GO_AHEAD)
        elif answer == EDIT:
            self.host.prompt.put_back(GO_AHEAD)
            self.host.prompt.focus()
        else:
            self.host.prompt.focus()


def _changed(session: TaskStateAPI) -> TaskStateChanged:
    state = session.task_state()
    current = state.current()
    counts = state.counts()
    return TaskStateChanged(completed=counts["completed"], total=len(state.todos),
                            current=current.label if current is not None else "",
                            position=state.todos.index(current) + 1 if current is not None else 0,
                            keep_lines=len(state.keep))
