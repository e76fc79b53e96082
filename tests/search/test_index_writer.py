"""The live session's messages are indexed in the index's writer thread: the turn that recorded them does not wait,
and a search, a rename or a forget waits for what was queued before it; a failing write is logged and the next
search catches up from messages.json, so nothing recorded is ever missing from the results."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.search.support import data_dir, exchange
from tui.base.paths import DataDir
from tui.store.search.database import read_rows
from tui.store.search.index import SearchIndex
from tui.store.search.searcher import HistorySearch
from tui.store.session_store import SessionStore


def held_writes(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[str]]:
    """Index writes wait for the returned event; the list gets the name of the thread each ran in."""
    gate = threading.Event()
    threads: list[str] = []
    original = SearchIndex.record

    def record(self: SearchIndex, *args: Any, **kwargs: Any) -> bool:
        threads.append(threading.current_thread().name)
        assert gate.wait(10), "the test never let the write go"
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SearchIndex, "record", record)
    return gate, threads


def recorded_session(data: DataDir, prompt: str) -> tuple[str, int, list[Any], str]:
    handle = SessionStore(data).create(model="offline")
    messages = exchange(prompt, "an answer")
    first = handle.append_messages(messages)
    handle.close()
    return handle.id, first, messages, handle.meta.title


def test_the_recording_caller_does_not_wait_and_a_search_sees_what_it_queued(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    search = HistorySearch(data_dir(tmp_path))
    session, first, messages, title = recorded_session(search.data_dir, "where is the zanzibar config")
    gate, threads = held_writes(monkeypatch)
    written = search.record_soon(session, first, messages, title=title, parent=None)
    assert not written.done()  # the caller went on while the write waits
    with ThreadPoolExecutor(1) as pool:
        query = pool.submit(lambda: [(hit.session, hit.role) for hit in search.search("zanzibar").hits])
        assert not search.wait_for_records(timeout=0.2) and not query.done()  # the search waits for the write
        gate.set()
        assert query.result(10) == [(session, "user")]
    assert written.result() is True and threads == [threads[0]] and threads[0].startswith("deep-tui-index-writer")
    assert read_rows(search.index.connection())[session].indexed == 2  # indexed, not scanned


def test_a_rename_waits_for_the_queued_write_so_the_new_title_stays(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    search = HistorySearch(data_dir(tmp_path))
    session, first, messages, title = recorded_session(search.data_dir, "first prompt")
    gate, _ = held_writes(monkeypatch)
    search.record_soon(session, first, messages, title=title, parent=None)  # carries the title of then
    with ThreadPoolExecutor(1) as pool:
        renamed = pool.submit(search.rename, session, "the renamed session")
        assert not search.wait_for_records(timeout=0.2) and not renamed.done()
        gate.set()
        renamed.result(10)
    assert read_rows(search.index.connection())[session].title == "the renamed session"


def test_a_failed_write_is_logged_and_the_next_search_catches_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    search = HistorySearch(data_dir(tmp_path))
    session, first, messages, title = recorded_session(search.data_dir, "the quokka migration plan")

    def broken(self: SearchIndex, *args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("a bug in the indexer")

    original = SearchIndex.record
    monkeypatch.setattr(SearchIndex, "record", broken)
    with caplog.at_level(logging.ERROR, logger="tui.store.search.searcher"):
        search.record_soon(session, first, messages, title=title, parent=None)
        assert search.wait_for_records(timeout=10)
    assert "indexing recorded messages failed" in caplog.text and "a bug in the indexer" in caplog.text
    monkeypatch.setattr(SearchIndex, "record", original)
    assert [(hit.session, hit.role) for hit in search.search("quokka").hits] == [(session, "user")]
