"""The Todo panel: the agent's todo list and the user's standing instructions (``/keep``), as they are now.

Filled from :meth:`TodoPanel.show` with the session's :class:`~tui.store.task_state.TaskState` (the app calls it
when a :class:`~tui.agent.tasks.task_events.TaskStateChanged` arrives). Every item is model text: shown literally,
never as markup. A standing instruction's delete button posts :class:`TodoPanel.KeepDeleteRequested`; the panel
never changes the state itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from tui.app.formatting import literal
from tui.store.task_state import TaskState, TodoItem

if TYPE_CHECKING:
    from textual.app import ComposeResult

_MARKS = {"completed": ("✓", "$text-muted"), "in_progress": ("▸", "bold $accent"), "pending": ("○", "")}


def todo_row(item: TodoItem) -> Content:
    """One item: its mark, then its words (the ``active_form`` while in progress)."""
    mark, style = _MARKS[item.status]
    words = literal(item.label)
    if item.status == "completed":
        words = words.stylize("strike $text-muted")
    elif item.status == "in_progress":
        words = words.stylize("bold")
    return Content.assemble((mark, style), " ", words)


class TodoPanel(VerticalScroll):
    """The todo list (progress in the title) and the standing instructions, each with a delete button."""

    DEFAULT_CSS = """
    TodoPanel { height: 1fr; padding: 0 1; }
    TodoPanel .todo--heading { text-style: bold; margin-top: 1; }
    TodoPanel .todo--empty { color: $text-muted; }
    TodoPanel .todo--item { width: 1fr; }
    TodoPanel .keep--row { height: auto; width: 1fr; }
    TodoPanel .keep--text { width: 1fr; }
    TodoPanel .keep--row Button { min-width: 5; margin-left: 1; }
    """

    @dataclass
    class KeepDeleteRequested(Message):
        """The user asked to delete standing instruction ``index`` (0-based)."""

        index: int

    def __init__(self, state: TaskState | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._state = state or TaskState()
        self.border_title = "Todos"

    def compose(self) -> ComposeResult:
        yield from self._rows(self._state)

    def show(self, state: TaskState) -> None:
        """Show ``state`` (the rows are made again: a list holds at most 100 short items)."""
        self._state = state
        counts = state.counts()
        self.border_title = f"Todos · {counts['completed']}/{len(state.todos)}" if state.todos else "Todos"
        with self.app.batch_update():
            self.remove_children()
            self.mount_all(list(self._rows(state)))

    def _rows(self, state: TaskState) -> list[Static | Horizontal]:
        rows: list[Static | Horizontal] = [Static(Content("Todo list"), classes="todo--heading")]
        if state.todos:
            rows.extend(Static(todo_row(item), classes="todo--item") for item in state.todos)
        else:
            rows.append(Static(Content("none yet: the agent writes one for a task of three steps or more"),
                               classes="todo--empty"))
        rows.append(Static(Content("Standing instructions (/keep)"), classes="todo--heading"))
        if not state.keep:
            rows.append(Static(Content("none: /keep TEXT adds one for the whole session"), classes="todo--empty"))
        for index, line in enumerate(state.keep):
            rows.append(Horizontal(Static(literal(f"{index + 1}. {line.text}"), classes="keep--text"),
                                   Button(Content("✕"), id=f"keep-delete-{index}", compact=True,
                                          tooltip="delete this standing instruction"),
                                   classes="keep--row"))
        return rows

    def on_button_pressed(self, event: Button.Pressed) -> None:
        name = event.button.id or ""
        if name.startswith("keep-delete-"):
            event.stop()
            self.post_message(self.KeepDeleteRequested(int(name.removeprefix("keep-delete-"))))
