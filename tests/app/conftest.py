"""App-test determinism: a blinking cursor must not decide whether a snapshot matches."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea


@pytest.fixture(autouse=True)
def _steady_cursors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Freeze the blink timers of every Input and TextArea (the prompt, filters, editors).

    A snapshot taken half a second later would otherwise catch the cursor in the other
    phase; with the timers frozen the cursor shows exactly when its widget has focus.
    """
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture(autouse=True)
def _still_turn_activity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn activity line counts seconds and turns its spinner by the clock: held still, a snapshot taken
    while a turn runs (an approval dialog over it) shows the same line every time. tests/app/test_turn_activity.py
    gives it the real clock back."""
    monkeypatch.setattr("tui.app.widgets.turn_activity.clock", lambda: 1_000.0)
