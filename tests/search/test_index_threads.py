"""Closing the index while another thread reads it (a corrupt file discarded under the picker's word list)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tui.store.search.database import Database


def test_close_leaves_another_threads_running_query_alone_and_that_thread_reopens(tmp_path: Path) -> None:
    database = Database(tmp_path / "index.sqlite")
    inside_query = threading.Event()
    closed = threading.Event()
    outcome: dict[str, object] = {}

    def reader() -> None:
        connection = database.connection(1_000)

        def wait_for_close(value: int) -> int:
            inside_query.set()
            closed.wait(30)
            return value

        connection.create_function("wait_for_close", 1, wait_for_close)
        # The query is inside SQLite (calling back into Python) while the other thread closes the index.
        outcome["rows"] = connection.execute(
            "SELECT wait_for_close(count(*)) FROM sessions").fetchone()[0]
        outcome["same"] = database.connection(1_000) is connection
        try:
            connection.execute("SELECT 1")
        except sqlite3.ProgrammingError as error:  # the thread closed its old connection itself
            outcome["old"] = str(error)
        database.drop_connection()

    thread = threading.Thread(target=reader)
    thread.start()
    assert inside_query.wait(30)
    own = database.connection(1_000)
    database.close()
    with pytest.raises(sqlite3.ProgrammingError):
        own.execute("SELECT 1")  # this thread's own connection is closed at once
    closed.set()
    thread.join(30)
    assert outcome["rows"] == 0
    assert outcome["same"] is False
    assert "closed" in str(outcome["old"])
    assert database.connection(1_000).execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    database.close()


def test_close_closes_connections_of_threads_that_ended(tmp_path: Path) -> None:
    database = Database(tmp_path / "index.sqlite")
    opened: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: opened.append(database.connection(1_000)))
    thread.start()
    thread.join(30)
    database.close()
    with pytest.raises(sqlite3.ProgrammingError):
        opened[0].execute("SELECT 1")
