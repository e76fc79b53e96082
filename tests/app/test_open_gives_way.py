"""Opening a session holds the search index's background catch-up (it would take the CPU from reading the history
and painting its last page) until a moment after that page is painted."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.app.app_support import make_app, make_factory, wait_until
from tui.app.widgets.answer_block import AssistantBlock
from tui.store.search.giving_way import AFTER_PAINT_SECONDS, OPENING_SECONDS, GiveWay


async def test_an_open_holds_the_catch_up_until_the_last_page_is_painted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    handle.append_messages([ModelRequest(parts=[UserPromptPart("a question")]),
                            ModelResponse(parts=[TextPart("the last answer")])])
    handle.close()
    app = make_app(factory)
    holds: list[tuple[float, bool]] = []
    hold = GiveWay.hold

    def recorded(way: GiveWay, seconds: float) -> None:
        shown = bool(app.query(AssistantBlock)) and "the last answer" in app.query(AssistantBlock).last().source
        holds.append((seconds, shown))
        hold(way, seconds)

    monkeypatch.setattr(GiveWay, "hold", recorded)
    async with app.run_test(headless=True, size=(100, 30)) as pilot:
        await pilot.pause()
        holds.clear()
        runtime = await factory.open_session(handle.id)
        assert holds == [(OPENING_SECONDS, False)], "held while the history is read"
        assert factory.search.give_way.holding
        previous = app.runtime
        await app.main_screen.adopt_runtime(runtime)
        await wait_until(pilot, lambda: holds[-1][0] == AFTER_PAINT_SECONDS, "the hold shortened after the paint")
        assert holds[-1] == (AFTER_PAINT_SECONDS, True), "shortened once the last message is on screen"
        assert all(seconds == OPENING_SECONDS for seconds, _ in holds[:-1])
        await previous.aclose()


async def test_an_open_that_fails_ends_the_hold(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    with pytest.raises(Exception, match="no-such-session"):
        await factory.open_session("no-such-session")
    assert not factory.search.give_way.holding
