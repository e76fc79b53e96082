"""The picker searches contents: type, see the snippet, open (Enter or a click) and land on the hit."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.search.support import exchange, tool_round
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.session_list import SessionList
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.chat_blocks import ToolBlock
from tui.app.widgets.chat_view import ChatView

SIZE = (120, 36)


def history_with_hit_at(position: int, total_exchanges: int, hit: list[ModelMessage]) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    for number in range(total_exchanges):
        if len(messages) == position:
            messages.extend(hit)
        messages.extend(exchange(f"routine question {number}", f"routine answer {number}"))
    return messages


def seeded(tmp_path: Path) -> tuple[RuntimeFactory, str, str]:
    """A long session with the hit (a tool result) far above its last page, and a session with a title match."""
    factory = make_factory(tmp_path)
    store = factory.store
    handle = store.create(model="offline")
    handle.append_messages(history_with_hit_at(6, 30, tool_round(
        "read_file", {"path": "docs/billing.md"}, "## Plan\nthe migration plan for the billing schema: three steps",
        "call-hit")))
    handle.rename("Billing work")
    handle.close()
    titled = store.create(model="offline")
    titled.append_messages(exchange("nothing relevant inside", "ok"))
    titled.rename("migration notes (title only)")
    titled.close()
    return factory, handle.id, titled.id


async def until(pilot, condition) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, condition, "the picker")


def picker(app: DeepTuiApp) -> SessionPickerScreen:
    screen = app.screen
    assert isinstance(screen, SessionPickerScreen)
    return screen


def option_texts(app: DeepTuiApp) -> list[str]:
    options = picker(app).query_one(SessionList).options
    return [str(option.prompt) for option in options]


async def type_query(app: DeepTuiApp, pilot, query: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(app.screen, SessionPickerScreen) and picker(app)._loaded)
    await pilot.press(*query)
    await until(pilot, lambda: bool(picker(app).content_hits))


async def landed_on_hit(app: DeepTuiApp, pilot, session_id: str) -> ToolBlock:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.runtime.info.session_id == session_id and bool(app.query(".-search-hit")))
    await wait_idle(app, pilot)
    chat = app.query_one(ChatView)
    [block] = app.query(".-search-hit")
    assert isinstance(block, ToolBlock) and block.message_index == 6 and not block.collapsed
    assert chat.loaded_from <= 6  # earlier pages were loaded to reach it
    await until(pilot, lambda: 0 <= block.region.y - chat.region.y < chat.region.height)  # the hit is on screen
    assert "the migration plan for the billing schema" in str(block._result.render())
    return block


async def test_typing_shows_the_snippet_and_enter_opens_the_session_at_the_hit(tmp_path: Path) -> None:
    factory, long_session, _titled = seeded(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(app, pilot, "migration")
        texts = option_texts(app)
        assert len(texts) == 2  # the content hit and the title match; the open (empty) session is filtered out
        [hit_text] = [text for text in texts if "Billing work" in text]
        assert "message 8 · tool read_file" in hit_text and "the migration plan for the billing schema" in hit_text
        assert any("migration notes (title only)" in text and "message" not in text for text in texts)
        assert "1 by content" in str(picker(app).query_one(".dialog").border_subtitle)
        picker(app).query_one(SessionList).highlighted = texts.index(hit_text)
        await pilot.press("enter")
        await landed_on_hit(app, pilot, long_session)


async def test_clicking_the_row_opens_it_at_the_hit_too(tmp_path: Path) -> None:
    factory, long_session, _ = seeded(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(app, pilot, "billing schema")
        assert len(option_texts(app)) == 1 and "billing schema" in option_texts(app)[0]
        await pilot.click(SessionList, offset=(20, 1))  # the snippet line of the only row
        await landed_on_hit(app, pilot, long_session)


async def test_a_hit_in_the_open_session_scrolls_there_without_switching(tmp_path: Path) -> None:
    factory, long_session, _ = seeded(tmp_path)
    app = make_app(factory, SessionRequest(resume=long_session))
    async with app.run_test(size=SIZE) as pilot:
        assert app.query_one(ChatView).loaded_from > 6
        await type_query(app, pilot, "billing schema")
        await pilot.press("enter")
        await landed_on_hit(app, pilot, long_session)
        assert not isinstance(app.screen, SessionPickerScreen)


async def test_short_words_filter_titles_only_and_forks_are_not_listed_twice(tmp_path: Path) -> None:
    factory, long_session, _ = seeded(tmp_path)
    fork = factory.store.fork(long_session, upto=10)
    fork.close()
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(app, pilot, "billing schema")
        texts = option_texts(app)
        assert len(texts) == 1 and "(also in 1 fork)" in texts[0]  # the fork copied it: one row, not two
        await pilot.press("escape")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, SessionPickerScreen))
        await pilot.press(*"bi")
        await until(pilot, lambda: picker(app).filter_input.value == "bi")
        await pilot.pause()
        assert not [worker for worker in app.workers if worker.group == "picker-search" and not worker.is_finished]
        assert picker(app).content_hits == {} and not picker(app).has_class("-search-note")


@pytest.fixture
def fixed_ids_and_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")
    monkeypatch.setattr("tui.app.screens.session_picker.time.time", lambda: 2_000_000_000.0)
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)


def test_picker_with_content_hits_snapshot(snap_compare, tmp_path: Path, fixed_ids_and_clock: None) -> None:  # type: ignore[no-untyped-def]
    factory, _, _ = seeded(tmp_path)
    app = make_app(factory)

    async def search(pilot) -> None:  # type: ignore[no-untyped-def]
        await type_query(app, pilot, "migration plan")
        await until(pilot, lambda: any("message " in text for text in option_texts(app)))  # the snippet rows
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=search)


async def test_a_locked_index_is_searched_by_a_scan_and_the_picker_says_so(tmp_path: Path) -> None:
    import sqlite3

    factory, long_session, _ = seeded(tmp_path)
    factory.search.refresh()
    factory.search.index.close()
    holder = sqlite3.connect(factory.data_dir.root / "index.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another deep-tui holds the index
    try:
        app = make_app(factory)
        async with app.run_test(size=SIZE) as pilot:
            await type_query(app, pilot, "billing schema")
            await until(pilot, lambda: picker(app).has_class("-search-note"))
            note = str(picker(app).query_one("#search-note").render())
            assert "locked by another deep-tui" in note, note
            [text] = option_texts(app)
            assert "Billing work" in text and "billing schema" in text, "the scan still finds the hit"
            await pilot.press("enter")
            await landed_on_hit(app, pilot, long_session)
        await app.runtime.aclose()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_while_the_index_is_rebuilt_the_picker_says_how_far_it_has_got(tmp_path: Path) -> None:
    import time

    from textual.widgets import Static

    from tui.store.search.searcher import IndexingProgress

    factory, _long_session, _ = seeded(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_idle(app, pilot)
        # A large build under way in the index's thread (as HistorySearch.refresh sets it while it runs).
        factory.search.indexing = IndexingProgress(40_000_000, 104_000_000, time.monotonic() - 8)
        await type_query(app, pilot, "migration")
        note = str(picker(app).query_one("#search-note", Static).render())
        assert note.startswith("search index: indexed 40 of 104 MB (38%, about ") and picker(app).has_class("-search-note")
        factory.search.indexing = None
