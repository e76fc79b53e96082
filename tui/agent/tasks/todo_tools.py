"""``write_todos`` and ``read_todos``: the agent's todo list (pydantic-deep's names and fields).

``write_todos`` replaces the whole list each time; it needs no approval (it changes only the session's own
task state, so it also runs in plan mode). A malformed list is one tool error the model reads: a wrong
shape by pydantic-ai's validation (one line, see :mod:`tui.agent.tools.argument_errors`), an empty or too long
item or list by :func:`tui.store.task_state.todo_list`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import FunctionToolset

from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.render import progress, todo_line
from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.failures import refuse
from tui.store.task_state import TaskStateError, todo_list


class Todo(BaseModel):
    # one item of the todo list (no docstring: it would be sent with the schema on every request)
    model_config = ConfigDict(extra="ignore", title="Todo")

    content: str = Field(description="the step, imperative: 'Run the tests'")
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = Field(default="", description="while in progress: 'Running the tests'")


def todo_toolset(board: TaskBoard) -> FunctionToolset[None]:
    """write_todos (the whole list each time) and read_todos."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool_plain(toolset)
    def write_todos(todos: list[Todo]) -> str:
        """Replace your todo list (send the whole list each time): one item in_progress at a time, completed
        as soon as done. It is shown to you with every request."""
        try:
            items = todo_list(todo.model_dump() for todo in todos)
        except TaskStateError as error:
            raise refuse(f"the todo list was not changed: {error}") from None
        try:
            state = board.write_todos(items)
        except OSError as error:
            raise refuse(f"the todo list could not be saved ({error}); it was not changed") from None
        if not state.todos:
            return "the todo list is now empty"
        current = state.current()
        doing = f"; in progress: {current.content}" if current is not None else ""
        return f"todo list saved: {len(state.todos)} items, {progress(state)}{doing}"

    @tool_schemas.tool_plain(toolset)
    def read_todos() -> str:
        """Your todo list with each item's status."""
        state = board.state
        if not state.todos:
            return "the todo list is empty (write_todos makes one)"
        lines = [f"{len(state.todos)} items, {progress(state)}:"]
        lines.extend(todo_line(item) for item in state.todos)
        return "\n".join(lines)

    return toolset
