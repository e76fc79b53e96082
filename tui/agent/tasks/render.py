"""The task state as the model reads it: one section of the instructions of every request, capped.

The section holds the user's standing instructions (``/keep``) and the todo list, verbatim. Past the cap
(:data:`TASK_STATE_CAP_TOKENS`) the oldest completed items are folded into a count; if that is not enough,
the last items are left out with a note saying how to read them (``read_todos``). Standing instructions are
never folded (a session keeps at most a few short ones: :data:`tui.store.task_state.MAX_KEEP_LINES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui.chain.estimate import text_tokens
from tui.store.task_state import TaskState, TodoItem

TASK_STATE_CAP_TOKENS = 4_000
"""The most the task-state section may add to every request."""

_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}

HEADING = ("## Task state\nKept for you outside the conversation and sent with every request, so no summary "
           "of earlier turns can drop it.")


@dataclass(frozen=True)
class RenderedTaskState:
    """The section's text and what the cap left out of it."""

    text: str
    folded: int = 0
    """Completed items shown only as a count."""
    hidden: int = 0
    """Items left out entirely (the cap was still exceeded after folding)."""

    @property
    def tokens(self) -> int:
        return text_tokens(self.text)


def todo_line(item: TodoItem) -> str:
    """``[x] Read the code`` / ``[>] Run the tests (now: Running the tests)`` / ``[ ] Fix the failures``."""
    doing = f" (now: {item.active_form})" if item.status == "in_progress" and item.active_form else ""
    return f"- {_MARKS[item.status]} {item.content}{doing}"


def progress(state: TaskState) -> str:
    """``3/7 completed``."""
    return f"{state.counts()['completed']}/{len(state.todos)} completed"


def _keep_section(state: TaskState) -> list[str]:
    if not state.keep:
        return []
    return ["", "### Standing instructions from the user (honour them for the whole session)",
            *(f"- {line.text}" for line in state.keep)]


def _todo_section(todos: Sequence[TodoItem], state: TaskState, *, folded: int, hidden: int) -> list[str]:
    lines = ["", f"### Your todo list ({progress(state)}; write_todos replaces it, read_todos shows it)"]
    if folded:
        lines.append(f"- [x] … {folded} earlier completed items, folded to keep this section short")
    lines.extend(todo_line(item) for item in todos)
    if hidden:
        lines.append(f"- … {hidden} more items not shown here (the list is too long for the instructions): "
                     "read_todos shows the whole list")
    return lines


def render_task_state(state: TaskState, *, cap_tokens: int = TASK_STATE_CAP_TOKENS) -> RenderedTaskState:
    """The section for ``state`` ("" when it holds nothing), at most ``cap_tokens`` long where folding and
    leaving out items can make it so."""
    if state.empty:
        return RenderedTaskState("")
    todos = list(state.todos)
    folded = hidden = 0

    def text() -> str:
        todo_lines = _todo_section(todos, state, folded=folded, hidden=hidden) if state.todos else []
        return "\n".join([HEADING, *_keep_section(state), *todo_lines])

    rendered = text()
    while text_tokens(rendered) > cap_tokens:
        oldest_done = next((index for index, item in enumerate(todos) if item.status == "completed"), None)
        if oldest_done is not None:
            del todos[oldest_done]
            folded += 1
        elif todos:
            todos.pop()
            hidden += 1
        else:
            break
        rendered = text()
    return RenderedTaskState(rendered, folded, hidden)
