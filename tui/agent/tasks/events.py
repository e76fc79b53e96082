"""What the session says when its task state changes: the app's Todo panel and compact line, ``run``'s notes.

Delivered to the session's subscribers like the chain's events but not written to events.jsonl (the state
itself is in todos.json). No pydantic-ai here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui.chain.events import ChainEvent


@dataclass(frozen=True, kw_only=True)
class TaskStateChanged(ChainEvent):
    """The todo list or the standing instructions changed (or the cap folded part of the list)."""

    kind: ClassVar[str] = "task_state"
    completed: int = 0
    total: int = 0
    current: str = ""
    """The item in progress, as shown (its ``active_form`` when it has one); "" when none."""
    position: int = 0
    """Where the item in progress sits in the list (1-based; 0: none in progress)."""
    keep_lines: int = 0
    note: str = ""
    """A sentence the user must read (the cap folded items); "" when there is nothing to say."""

    def compact_line(self) -> str:
        """``▸ Running the tests · 3/7`` (the line above the gauge); "" without a list."""
        if not self.total:
            return ""
        if self.current:
            return f"▸ {self.current} · {self.position}/{self.total}"
        if self.completed == self.total:
            return f"✓ all {self.total} todos completed"
        return f"▸ {self.completed}/{self.total} todos completed"
