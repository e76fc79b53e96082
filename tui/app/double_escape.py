"""Esc Esc in an empty prompt opens the rewind dialog (as in Claude Code): two presses close together, the prompt
empty at both. A pure clock-driven rule, so the prompt widget only reports its Esc presses."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

DOUBLE_ESCAPE_SECONDS = 0.6
"""The longest gap between the two presses."""


class DoubleEscape:
    """Tells whether an Esc press completes an Esc Esc."""

    def __init__(self, *, window: float = DOUBLE_ESCAPE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self._clock = clock
        self._first: float | None = None

    def press(self, *, prompt_empty: bool) -> bool:
        """An Esc was pressed; True when it is the second of a pair in an empty prompt (the pair is used up)."""
        now = self._clock()
        if not prompt_empty:
            self._first = None
            return False
        if self._first is not None and now - self._first <= self.window:
            self._first = None
            return True
        self._first = now
        return False

    def reset(self) -> None:
        """Another key came between: the next Esc starts a new pair."""
        self._first = None
