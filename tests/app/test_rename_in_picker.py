"""Issue 22.9 in the app: a rename in the picker is not use (the order and the "updated" age stay)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from textual.widgets import OptionList

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.screens.basic_dialogs import PromptModal
from tui.app.screens.session_picker import SessionPickerScreen


async def test_renaming_an_old_session_in_the_picker_keeps_its_place_and_age(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    used_at = {}
    for prompt, when in (("old notes", 1_000_000.0), ("recent plan", 2_000_000.0)):
        handle = factory.store.create(model="offline")
        handle.append_messages([ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart("ok")])])
        handle.close()
        meta = factory.store.meta(handle.id)
        meta.updated = when
        meta.write(handle.directory / "session.json")
        used_at[prompt] = handle.id
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), "the picker")
        picker = app.screen
        await wait_until(pilot, lambda: len(picker._shown) == 3, "the three sessions")
        order = [entry.meta.id for entry in picker._shown]
        assert order[1:] == [used_at["recent plan"], used_at["old notes"]]

        picker.query_one("#sessions", OptionList).highlighted = order.index(used_at["old notes"])
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptModal), "the rename dialog")
        await pilot.press(*"Old notes, renamed", "enter")
        await wait_until(pilot, lambda: any(entry.meta.title == "Old notes, renamed" for entry in picker._shown),
                         "the renamed row")
        assert [entry.meta.id for entry in picker._shown] == order
        assert factory.store.meta(used_at["old notes"]).updated == 1_000_000.0
        assert factory.store.newest() == app.runtime.info.session_id
