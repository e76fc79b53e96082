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
