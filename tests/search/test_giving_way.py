"""The background catch-up gives way while a session opens: it waits at its next step, having committed what it
wrote (the live session's records are not kept waiting), and indexes everything once the hold ends."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.search.support import data_dir, exchange, make_session
from tui.store.search import giving_way
from tui.store.search.giving_way import GiveWay
from tui.store.search.index import RECORD_BUSY_MS, SearchIndex, SyncReport
from tui.store.search.searcher import HistorySearch


class SignallingGiveWay(GiveWay):
    """Says when the catch-up starts waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self) -> float:
        self.waiting.set()
        return super().wait()


def indexed_ids(index: SearchIndex) -> set[str]:
    return {row[0] for row in index.connection(RECORD_BUSY_MS).execute("SELECT id FROM sessions")}


def test_a_held_catch_up_waits_after_committing_and_finishes_when_the_hold_ends(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    on_disk = {make_session(data, exchange(f"question {n}", f"answer {n}")) for n in range(3)}
    index = SearchIndex(data)
    way = SignallingGiveWay()
    outcome: list[SyncReport] = []

    def hold_after_the_first(done: int, total: int) -> None:
        if done and not way.waiting.is_set():  # one session indexed: an open starts now
            way.hold(giving_way.LONGEST_WAIT)

    thread = threading.Thread(target=lambda: outcome.append(index.sync(progress=hold_after_the_first, give_way=way)))
    thread.start()
    assert way.waiting.wait(30)
    assert len(indexed_ids(index)) == 1, "what was written before the wait is committed"
    live = make_session(data, exchange("live question", "live answer"))
    assert index.record(live, 0, exchange("live question", "live answer"), title="live", parent=None), \
        "the live session records its messages while the catch-up waits"
    way.hold(0)
    thread.join(30)
    assert not thread.is_alive()
    assert outcome[0].problem is None and not outcome[0].pending
    assert indexed_ids(index) == on_disk | {live}
    index.close()


def test_only_the_background_refresh_gives_way(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("a question", "an answer"))
    search = HistorySearch(data)
    search.give_way.hold(giving_way.LONGEST_WAIT)
    assert search.refresh().indexed == [session], "a refresh asked for in the foreground does not wait"
    search.give_way.hold(0)
    search.index.close()


def test_the_background_refresh_waits_for_the_hold(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("a question", "an answer"))
    search = HistorySearch(data)
    way = SignallingGiveWay()
    search.give_way = way
    way.hold(giving_way.LONGEST_WAIT)
    thread = search.start_refresh()
    assert way.waiting.wait(30)
    assert indexed_ids(search.index) == set()
    way.hold(0)
    thread.join(30)
    assert indexed_ids(search.index) == {session}
    search.index.close()


def test_a_hold_is_bounded_and_waits_nothing_when_none(monkeypatch: pytest.MonkeyPatch) -> None:
    way = GiveWay()
    assert not way.holding and way.wait() < 1
    monkeypatch.setattr(giving_way, "LONGEST_WAIT", 0.05)
    way.hold(3600)  # a hold nobody ends
    started = time.monotonic()
    way.wait()
    assert time.monotonic() - started < 5
    assert not way.holding


def test_a_catch_up_that_outlives_the_app_logs_its_note(caplog: pytest.LogCaptureFixture) -> None:
    import warnings

    from textual.app import App

    from tui.app.index_notes import IndexNotes
    from tui.store.search.search_outcome import IndexingProgress

    notes = IndexNotes(App())  # not running (ended, as when the catch-up gave way past the app's end)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level("INFO", logger="tui.app.index_notes"):
            notes(IndexingProgress(1, 100_000_000, time.monotonic()))
    assert "not shown (the app has ended)" in caplog.text
