"""The one line above the gauge: the session's mode (when it is not the default) and the todo item in progress
(``▸ Running the tests · 3/7``). Empty, and out of the layout, when there is nothing to say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui.agent.tasks.modes import MODE_LABELS
from tui.app.formatting import literal

if TYPE_CHECKING:
    from tui.agent.tasks.task_events import TaskStateChanged


class TaskLine(Static):
    """What the agent is doing now, in one line cut to the width (the gauge below keeps its room)."""

    DEFAULT_CSS = """
    TaskLine { height: 1; width: 1fr; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; color: $text-muted; }
    TaskLine.-empty { display: none; }
    TaskLine .task--mode { text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.mode = "default"
        self.changed: TaskStateChanged | None = None

    def show(self, changed: TaskStateChanged | None = None, *, mode: str | None = None) -> None:
        """Show the newest task state (``None``: keep the last one) and/or the mode."""
        if changed is not None:
            self.changed = changed
        if mode is not None:
            self.mode = mode
        parts: list[Content] = []
        if self.mode != "default":
            style = "bold $warning" if self.mode == "plan" else "bold $accent"
            parts.append(Content.styled(f"⏸ {MODE_LABELS[self.mode]} mode" if self.mode == "plan"
                                        else f"⏵⏵ {MODE_LABELS[self.mode]}", style))
        line = self.changed.compact_line() if self.changed is not None else ""
        if line:
            parts.append(literal(line))
        self.update(Content(" · ").join(parts) if parts else "")
        self.set_class(not parts, "-empty")
