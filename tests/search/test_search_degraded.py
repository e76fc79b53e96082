"""An index that is corrupt, locked by another deep-tui, or on a read-only disk: a linear scan, with a notice."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.search.support import exchange, make_session, tool_round
from tui.base.paths import DataDir
from tui.store.search.index import SearchIndex
from tui.store.search.searcher import HistorySearch


def hits_of(outcome: object) -> list[tuple[str, int, str]]:
    return [(hit.session, hit.message, hit.role) for hit in outcome.hits]  # type: ignore[attr-defined]


@pytest.fixture
def quick(tmp_path: Path) -> tuple[DataDir, str]:
    data = DataDir(tmp_path / "data")
    session = make_session(data, [*exchange("we agreed on the sapphire release name", "ok"),
                                  *tool_round("grep", {"pattern": "x"}, "config.py:3: SAPPHIRE = True", "call-1")])
    return data, session


def test_a_corrupt_index_found_mid_query_is_removed_and_the_files_are_scanned(quick: tuple[DataDir, str]) -> None:
    data, session = quick
    search = HistorySearch(data)
    search.refresh()
    search.index.close()
    index_file = data.root / "index.sqlite"
    connection = sqlite3.connect(index_file)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    with index_file.open("r+b") as handle:  # keep the schema page, ruin the rest: "disk image is malformed"
        page_size = int.from_bytes(handle.read(18)[16:18], "big")
        handle.seek(page_size)
        handle.write(b"\xff" * (index_file.stat().st_size - page_size))
    outcome = HistorySearch(data).search("sapphire")
    assert hits_of(outcome) == [(session, 3, "tool"), (session, 0, "user")]
    assert outcome.notice is not None and "corrupt" in outcome.notice and "directly" in outcome.notice
    again = HistorySearch(data).search("sapphire")  # the next search rebuilt it and uses it
    assert again.notice is None and {hit.message for hit in again.hits} == {0, 3}


def test_an_index_locked_by_another_deep_tui_is_bypassed(quick: tuple[DataDir, str]) -> None:
    data, session = quick
    builder = HistorySearch(data)
    builder.refresh()
    builder.index.close()
    holder = sqlite3.connect(data.root / "index.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # readers and writers both shut out until it ends
    try:
        search = HistorySearch(data)
        search.busy_ms = 50
        outcome = search.search("sapphire")
        assert hits_of(outcome) == [(session, 3, "tool"), (session, 0, "user")]
        assert outcome.notice is not None and "locked by another deep-tui" in outcome.notice
        assert search.session_hits("sapphire").by_session[session].message == 3
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_session_the_index_cannot_take_while_another_writes_is_scanned(quick: tuple[DataDir, str]) -> None:
    data, first = quick
    search = HistorySearch(data)
    search.busy_ms = 50
    search.refresh()
    second = make_session(data, exchange("a newer session about sapphire too", "ok"))
    writer = sqlite3.connect(data.root / "index.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another deep-tui indexing: reads go on, writes wait
    try:
        outcome = search.search("sapphire")
        assert {hit.session for hit in outcome.hits} == {first, second}
        assert outcome.notice is not None and "locked" in outcome.notice
        assert not search.record(second, 2, exchange("x", "y"), title="t", parent=None)  # never raises
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert search.search("sapphire").notice is None  # caught up once the lock is gone


@pytest.fixture
def read_only_data(tmp_path: Path) -> Iterator[DataDir]:
    """A data directory on a read-only file system (a remounted tmpfs as root, permissions otherwise)."""
    root = tmp_path / "ro"
    root.mkdir()
    if os.geteuid() == 0:
        if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(root)],
                                                           capture_output=True).returncode != 0:
            pytest.skip("cannot mount a file system here to make it read-only")
        try:
            yield from _filled_then_read_only(root, remount=True)
        finally:
            subprocess.run(["umount", str(root)], capture_output=True)
    else:
        yield from _filled_then_read_only(root, remount=False)


def _filled_then_read_only(root: Path, *, remount: bool) -> Iterator[DataDir]:
    data = DataDir(root / "data")
    make_session(data, exchange("read-only disks still find the obsidian note", "ok"))
    if remount:
        subprocess.run(["mount", "-o", "remount,ro", str(root)], check=True)
    else:
        for directory in (root, data.root, data.sessions_dir):
            directory.chmod(0o555)
    try:
        yield data
    finally:
        if not remount:
            for directory in (root, data.root, data.sessions_dir):
                directory.chmod(0o755)


def test_a_read_only_disk_degrades_to_a_scan(read_only_data: DataDir) -> None:
    search = HistorySearch(read_only_data)
    outcome = search.search("obsidian")
    assert [hit.message for hit in outcome.hits] == [0]
    assert outcome.notice is not None and "read-only" in outcome.notice
    assert not (read_only_data.root / "index.sqlite").exists()
    assert not search.record("x", 0, exchange("a", "b"), title="t", parent=None)
    assert search.session_hits("obsidian").notice is not None


def test_the_live_session_is_never_failed_by_the_index(quick: tuple[DataDir, str]) -> None:
    data, session = quick
    index = SearchIndex(data)
    (data.root / "index.sqlite").mkdir()  # something that cannot be opened as a database at all
    assert index.record(session, 3, exchange("later", "turn"), title="t", parent=None) is False
    assert index.last_problem is not None
