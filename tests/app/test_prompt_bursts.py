"""Keys and pastes as a terminal delivers them: a Ctrl+J typed among letters keeps its place; a long paste is
sent whole but shown collapsed in the chat (expandable by key or click)."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.shell import DeepTuiApp
from tui.app.widgets.prompt_input import PromptInput


def send_keys(app: DeepTuiApp, keys: list[tuple[str, str | None]]) -> None:
    """All of ``keys`` queued before the app handles the first (as a terminal delivers a fast burst)."""
    assert app._driver is not None
    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


def letters(text: str) -> list[tuple[str, str | None]]:
    return [("space", " ") if char == " " else (char, char) for char in text]


async def test_ctrl_j_in_a_burst_lands_where_it_was_typed(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(PromptInput)
        send_keys(app, [*letters("first line"), ("ctrl+j", "\n"), *letters("second line"), ("ctrl+j", "\n"),
                        *letters("third")])
        await wait_until(pilot, lambda: prompt.text.endswith("third") or prompt.text.endswith("\n"), "the burst")
        await pilot.pause(0.2)
        assert prompt.text == "first line\nsecond line\nthird"
        await pilot.press("ctrl+j", *"fourth")  # one key at a time too
        assert prompt.text == "first line\nsecond line\nthird\nfourth"
        await wait_idle(app, pilot)
