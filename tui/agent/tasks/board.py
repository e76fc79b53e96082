"""The session's task state in memory and on disk, and the instructions section made from it.

:class:`TaskBoard` is the one place the todo list and the standing instructions change: the todo tools,
``/keep`` (the app and ``deep-tui run "/keep TEXT"``) and the Todo panel's delete all go through it. Every
change is saved to ``sessions/<id>/todos.json`` first (atomic, no link followed) and then announced to the
session's subscribers as a :class:`~tui.agent.tasks.events.TaskStateChanged`.
"""

from __future__ import annotations

import logging
import mmap
import os
from collections.abc import Callable, Sequence

from tui.agent.tasks.events import TaskStateChanged
from tui.agent.tasks.modes import PLAN_MODE_INSTRUCTIONS
from tui.agent.tasks.render import TASK_STATE_CAP_TOKENS, RenderedTaskState, render_task_state
from tui.base.nofollow import open_file
from tui.chain.events import ChainEvent
from tui.store.messages_file import MessagesFile
from tui.store.task_state import (
    WRITE_TODOS_TOOL,
    TaskState,
    TaskStateFile,
    TodoItem,
    calls_in,
    todos_from_calls,
)
from tui.text.wording import plural

logger = logging.getLogger(__name__)


class TaskBoard:
    """One session's todo list and standing instructions (``file``), and its mode's instructions."""

    def __init__(self, file: TaskStateFile, *, notify: Callable[[ChainEvent], None],
                 mode: Callable[[], str] = lambda: "default", cap_tokens: int = TASK_STATE_CAP_TOKENS) -> None:
        self.file = file
        self._notify = notify
        self._mode = mode
        self.cap_tokens = cap_tokens
        self._rendered: tuple[TaskState, RenderedTaskState] | None = None
        self._told_folded = 0

    @property
    def state(self) -> TaskState:
        return self.file.state

    # -- changes ---------------------------------------------------------------

    def write_todos(self, todos: Sequence[TodoItem]) -> TaskState:
        """Replace the todo list (``OSError`` when it cannot be saved: nothing changes then)."""
        state = self.file.set_todos(todos)
        self.announce()
        return state

    def add_keep(self, text: str) -> TaskState:
        """Add a standing instruction (:class:`~tui.store.task_state.TaskStateError` for an empty or long one)."""
        state = self.file.add_keep(text)
        self.announce()
        return state

    def remove_keep(self, index: int) -> TaskState:
        state = self.file.remove_keep(index)
        self.announce()
        return state

    def announce(self, note: str = "") -> None:
        """Tell the subscribers the state as it is now."""
        self._notify(self.changed_event(note))

    def changed_event(self, note: str = "") -> TaskStateChanged:
        state = self.state
        counts = state.counts()
        current = state.current()
        position = state.todos.index(current) + 1 if current is not None else 0
        return TaskStateChanged(completed=counts["completed"], total=len(state.todos),
                                current=current.label if current is not None else "", position=position,
                                keep_lines=len(state.keep), note=note)

    # -- adoption ----------------------------------------------------------------

    def adopt_from_history(self, history: MessagesFile) -> bool:
        """A session without todos.json whose history holds ``write_todos`` calls (one adopted from
        pydantic-deep, which keeps its list only there): the last list written becomes the session's, saved
        when the session is writable. True when a list was found."""
        if self.file.exists() or not _mentions(history.path, WRITE_TODOS_TOOL.encode()):
            return False
        todos = todos_from_calls(calls_in(history.load_range(0, history.count())))
        if not todos:
            return False
        if self.file.read_only:
            self.file.adopt(TaskState(todos=todos))
        else:
            try:
                self.file.set_todos(todos)
            except OSError as error:
                logger.warning("the todo list found in the history could not be saved: %s", error)
                self.file.adopt(TaskState(todos=todos))
        return True

    # -- the instructions --------------------------------------------------------

    def rendered(self) -> RenderedTaskState:
        """The task-state section for the state as it is now (made again only when the state changed)."""
        state = self.state
        if self._rendered is None or self._rendered[0] is not state:
            self._rendered = (state, render_task_state(state, cap_tokens=self.cap_tokens))
        return self._rendered[1]

    def instructions(self) -> str:
        """What every request's instructions carry: the task state (capped) and, in plan mode, what plan mode
        means. When the cap folds items the user is told (once per growth of the fold)."""
        rendered = self.rendered()
        left_out = rendered.folded + rendered.hidden
        if left_out > self._told_folded:
            self._told_folded = left_out
            self.announce(f"the todo list is longer than the {self.cap_tokens:,}-token cap of the instructions: "
                          f"{plural(rendered.folded, 'completed item')} folded into a count"
                          + (f", {plural(rendered.hidden, 'item')} left out (the agent reads them with read_todos)"
                             if rendered.hidden else ""))
        elif left_out < self._told_folded:
            self._told_folded = left_out
        sections = [rendered.text] if rendered.text else []
        if self._mode() == "plan":
            sections.append(PLAN_MODE_INSTRUCTIONS)
        return "\n\n".join(sections)


def _mentions(path: os.PathLike[str], needle: bytes) -> bool:
    """Whether the file holds ``needle`` (searched without reading it into memory; no link followed)."""
    try:
        descriptor = open_file(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if os.fstat(descriptor).st_size == 0:
            return False
        with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as mapped:
            return mapped.find(needle) != -1
    finally:
        os.close(descriptor)
