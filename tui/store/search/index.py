"""One full-text index over every session's full history: ``<data>/index.sqlite`` (SQLite FTS5).

Derived data — messages.json stays the source of truth, and deleting the index loses
nothing. It is kept up to date in three ways:

- :meth:`SearchIndex.record`: the live session's new messages, right after they are appended
  (O(new messages); the runtime calls it, the store does not know about the index);
- :meth:`SearchIndex.sync`: a pass over ``sessions/`` that indexes whatever changed on disk
  since (other processes, sessions adopted from pydantic-deep, a missing or rebuilt index),
  and drops sessions whose directory is gone;
- :meth:`SearchIndex.forget` / :meth:`SearchIndex.rename` when a session is deleted or renamed.

A fork's copied prefix is indexed once, under the session it was copied from, so a hit is
never listed twice; :mod:`tui.store.search.queries` says which forks share it.
No Textual here.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.paths import DataDir
from tui.store.meta import ParentRef, title_from
from tui.store.search.database import (
    DEFAULT_TOKENIZER,
    Database,
    IndexedSession,
    delete_docs,
    insert_docs,
    put_row,
    read_row,
    read_rows,
)
from tui.store.search.giving_way import GiveWay
from tui.store.search.history_reader import load_history_from
from tui.store.search.index_problems import IndexProblem, classify
from tui.store.search.session_folders import DiskSession, changed_since_indexed, list_disk_sessions, title_and_parent
from tui.store.search.subagent_index_rows import list_disk_subagents, owner_of
from tui.store.store_errors import CorruptSessionError

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

logger = logging.getLogger(__name__)

RECORD_BUSY_MS = 100
"""The live session waits at most this long for another writer; then ``sync`` catches up later."""
SYNC_BUSY_MS = 3_000
"""Catching up in the background may wait this long for another writer."""
QUERY_BUSY_MS = 500
"""A search waits at most this long for an index another deep-tui holds; then it scans the files."""
CHUNK_CHARS = 4_000_000
"""A large session is indexed in pieces of about this much text."""
GIVING_WAY_CHUNK_CHARS = 500_000
"""The pieces of a catch-up that gives way (a tenth of a second or so each: it waits between them)."""
CATCH_UP_CACHE_KIB = -32_000
"""SQLite's page cache while catching up (32 MB; negative: KiB)."""
BATCH_BYTES = 8_000_000
"""A catch-up commits after about this much history: one FTS5 flush per few MB (not per session) keeps a
cold build's merging work down, while the write lock is held for a couple of seconds at most."""


@dataclass
class SyncReport:
    """What a :meth:`SearchIndex.sync` did, and what it left for a linear scan."""

    indexed: list[str] = field(default_factory=list)
    pending: list[DiskSession] = field(default_factory=list)
    """Changed sessions not indexed (budget spent, or the index could not be written)."""
    removed: int = 0
    problem: IndexProblem | None = None


DocRow = tuple[int, str, str | None, str | None, str]
Progress = Callable[[int, int], None]
"""``progress(done_bytes, total_bytes)`` of history indexed by a :meth:`SearchIndex.sync`."""
CHECK_EVERY = 24 * 3600.0
"""``deep-tui search`` runs SQLite's quick_check on the index when the last one is older than this."""


class SearchIndex:
    """The search index of one data directory (safe to use from several threads and processes)."""

    def __init__(self, data_dir: DataDir, *, tokenizer: str = DEFAULT_TOKENIZER, path: Path | None = None) -> None:
        self.data_dir = data_dir
        self.path = path or data_dir.root / "index.sqlite"
        self.db = Database(self.path, tokenizer)
        self.last_problem: IndexProblem | None = None

    @property
    def saved_dir(self) -> Path:
        return self.data_dir.large_results_dir

    def close(self) -> None:
        self.db.close()

    def connection(self, busy_ms: int = SYNC_BUSY_MS) -> sqlite3.Connection:
        """A usable connection; a corrupt file is removed and re-created once. Raises :class:`IndexProblem`."""
        try:
            return self.db.connection(busy_ms)
        except IndexProblem as problem:
            if problem.kind != "corrupt" or not self.db.discard_corrupt():
                raise
        return self.db.connection(busy_ms)

    def check(self, max_age: float | None = None) -> IndexProblem | None:
        """Look for damage anywhere in the file (``PRAGMA quick_check``; a query finds it only when it reads
        the damaged page) unless the last sound check is younger than ``max_age`` seconds. A damaged index
        is removed, so the next use rebuilds it from messages.json; returns the problem, ``None`` when sound
        (or not checked, or the check could not run now)."""
        if not self.path.exists():
            return None
        try:
            connection = self.connection()
            if max_age is not None and time.time() - self.db.last_check(connection) < max_age:
                return None
            damage = self.db.quick_check(connection)
        except (sqlite3.Error, IndexProblem, OSError) as error:
            return self.fail(error)
        if damage is None:
            return None
        problem = IndexProblem("corrupt", f"the search index {self.path} is damaged ({damage})")
        logger.warning("%s; it is rebuilt from messages.json", problem)
        self.db.discard_corrupt(known_bad=True)
        self.last_problem = problem
        return problem

    def fail(self, error: BaseException) -> IndexProblem:
        """Note a failure: drop the connection, remove a corrupt file (rebuilt on next use); returns why."""
        problem = error if isinstance(error, IndexProblem) else classify(error, self.path)
        self.db.drop_connection()
        if problem.kind == "corrupt":
            self.db.discard_corrupt()
        self.last_problem = problem
        return problem

    # -- the live session ------------------------------------------------------------------

    def record(self, session_id: str, first: int, messages: Sequence[ModelMessage], *, title: str,
               parent: ParentRef | None) -> bool:
        """Index messages just appended to ``session_id`` at ``first``…; never raises.

        Returns False (and leaves it to :meth:`sync`) when the session's earlier messages are
        not indexed yet or the index cannot be written now.
        """
        rows = self._doc_rows(first, messages)
        try:
            connection = self.connection(RECORD_BUSY_MS)
            with self.db.write(connection):
                row = read_row(connection, session_id)
                if row is None:
                    row = self._new_row(session_id, title, parent)
                if row.indexed != first:
                    return False
                insert_docs(connection, session_id, rows)
                row.indexed = first + len(messages)
                row.title = title
                self._stamp(row)
                put_row(connection, row)
            return True
        except (sqlite3.Error, IndexProblem, OSError) as error:
            problem = self.fail(error)
            logger.warning("search index not updated for session %s: %s", session_id, problem)
            return False

    def _doc_rows(self, first: int, messages: Sequence[ModelMessage]) -> list[DocRow]:
        from tui.store.search.searchable_text import message_docs  # pydantic-ai: only when indexing

        return [(first + offset, doc.role, doc.tool, doc.path, doc.text)
                for offset, message in enumerate(messages) for doc in message_docs(message, self.saved_dir)]

    def _new_row(self, session_id: str, title: str, parent: ParentRef | None) -> IndexedSession:
        """A fork whose parent is still on disk owns only what follows the copied prefix."""
        parent_id = parent.session if parent is not None else None
        own_from = 0
        if parent_id and parent_id != session_id and (self.data_dir.session_dir(parent_id) / "messages.json").exists():
            own_from = max(0, parent.index or 0)  # type: ignore[union-attr]
        else:
            parent_id = None
        return IndexedSession(session_id, title, parent_id, own_from, own_from, -1, 0, 0)

    def _stamp(self, row: IndexedSession) -> None:
        directory = self.data_dir.session_dir(row.id)
        try:
            history = (directory / "messages.json").stat()
            row.size, row.mtime_ns = history.st_size, history.st_mtime_ns
        except OSError:
            row.size, row.mtime_ns = -1, 0
        try:
            row.meta_mtime_ns = (directory / "session.json").stat().st_mtime_ns
        except OSError:
            row.meta_mtime_ns = 0

    # -- catching up with the disk --------------------------------------------------------

    def disk_sessions(self, only: Collection[str] | None = None) -> dict[str, DiskSession]:
        """Session directories holding a messages.json, and their subagents' histories (stat calls only). Raises
        ``OSError`` when the sessions directory exists but cannot be listed (so nothing is dropped from the index
        for it)."""
        sessions = list_disk_sessions(self.data_dir.sessions_dir, only)
        return sessions | list_disk_subagents(sessions)

    def sync(self, only: Collection[str] | None = None, *, byte_budget: int | None = None,
             deadline: float | None = None, busy_ms: int = SYNC_BUSY_MS, progress: Progress | None = None,
             give_way: GiveWay | None = None) -> SyncReport:
        """Index what changed on disk (all sessions, or ``only`` these), within ``byte_budget`` bytes of
        changed history and until ``deadline`` (``time.monotonic()``); the rest is reported as pending.
        ``progress(done_bytes, total_bytes)`` is called before the first session indexed and after each.
        ``give_way``: while it holds, wait between sessions and between pieces of one (what is written so far
        committed first, so the live session's records are not kept waiting)."""
        report = SyncReport()
        try:
            disk = self.disk_sessions(only)
        except OSError as error:
            logger.warning("search index: cannot list %s: %s", self.data_dir.sessions_dir, error)
            report.problem = IndexProblem("unavailable", f"cannot list the sessions: {error.strerror or error}")
            return report
        try:
            connection = self.connection(busy_ms)
            rows = read_rows(connection)
            if only is None:
                for session_id in sorted(set(rows) - set(disk)):
                    self._forget(connection, session_id)
                    report.removed += 1
                rows = read_rows(connection) if report.removed else rows
        except (sqlite3.Error, IndexProblem, OSError) as error:
            report.problem = self.fail(error)
            report.pending = [found for found in disk.values() if changed_since_indexed(found, None)]
            return report
        changed = [found for found in disk.values() if changed_since_indexed(found, rows.get(found.id))]
        changed.sort(key=lambda found: found.size)
        total = sum(found.size for found in changed)
        if progress is not None and changed:
            progress(0, total)
        spent = 0
        batch: list[DiskSession] = []  # indexed in the open transaction, not committed yet
        if changed:
            connection.execute(f"PRAGMA cache_size={CATCH_UP_CACHE_KIB}")  # FTS5's merges re-read less
        try:
            for position, found in enumerate(changed):
                out_of_budget = byte_budget is not None and spent + found.size > byte_budget and spent > 0
                if out_of_budget or (deadline is not None and time.monotonic() > deadline):
                    report.pending.extend(changed[position:])
                    break
                _give_way(connection, give_way)
                if not connection.in_transaction:
                    connection.execute("BEGIN IMMEDIATE")
                self._index_session(connection, found, rows.get(found.id), give_way)
                batch.append(found)
                spent += found.size
                if sum(item.size for item in batch) >= BATCH_BYTES:
                    self._commit(connection, batch, report)
                if progress is not None:
                    progress(spent, total)
            self._commit(connection, batch, report)
        except (sqlite3.Error, IndexProblem, OSError) as error:
            report.problem = self.fail(error)  # closes the connection: the open batch is rolled back
            done = set(report.indexed)
            report.pending.extend(found for found in changed if found.id not in done
                                  and found not in report.pending)
            return report
        if changed:
            connection.execute("PRAGMA cache_size=-2000")  # SQLite's default again: queries need little
        return report

    @staticmethod
    def _commit(connection: sqlite3.Connection, batch: list[DiskSession], report: SyncReport) -> None:
        if connection.in_transaction:
            connection.execute("COMMIT")
        report.indexed.extend(found.id for found in batch)
        batch.clear()

    def _index_session(self, connection: sqlite3.Connection, found: DiskSession, row: IndexedSession | None,
                       give_way: GiveWay | None = None) -> None:
        title, parent = title_and_parent(found)
        if row is not None and row.size == found.size and row.mtime_ns == found.mtime_ns:
            # Only session.json changed (a rename, new usage figures): keep the title in step.
            connection.execute("UPDATE sessions SET title=?, meta_mtime_ns=? WHERE id=?",
                               (title or row.title, found.meta_mtime_ns, found.id))
            return
        history = found.directory / "messages.json"
        start = row.indexed if row is not None else 0
        try:
            messages, count = load_history_from(history, start)
            if row is not None and (count < row.indexed or found.size < row.size):  # rewritten, not appended
                with self.db.write(connection):
                    delete_docs(connection, found.id)
                    connection.execute("DELETE FROM sessions WHERE id=?", (found.id,))
                row, start = None, 0
                messages, count = load_history_from(history, 0)
        except CorruptSessionError as error:
            logger.warning("not indexing session %s: %s", found.id, error)
            messages, count = [], start
        if row is None:
            row = self._new_row(found.id, title or title_from(messages[:4]) or found.id, parent)
            messages, start = messages[row.own_from - start:], row.own_from
        else:
            row.title = title or row.title
        _give_way(connection, give_way)
        chunks: list[tuple[int, list[DocRow]]] = [(start, [])]
        size = 0
        chunk_chars = CHUNK_CHARS if give_way is None else GIVING_WAY_CHUNK_CHARS
        for offset, message in enumerate(messages):
            if size > chunk_chars:
                chunks.append((start + offset, []))
                size = 0
            rows = self._doc_rows(start + offset, [message])
            chunks[-1][1].extend(rows)
            size += sum(len(doc[4]) for doc in rows)
        stops = [first for first, _ in chunks[1:]] + [max(count, start)]
        for number, ((first, docs), stop) in enumerate(zip(chunks, stops, strict=True)):
            last = number == len(chunks) - 1
            _give_way(connection, give_way)
            if not self._write_chunk(connection, row, first, stop, docs, found if last else None):
                return

    def _write_chunk(self, connection: sqlite3.Connection, row: IndexedSession, first: int, stop: int,
                     docs: list[DocRow], found: DiskSession | None) -> bool:
        """Index messages ``[first:stop)`` (``docs``) unless another writer did meanwhile; ``found``: last chunk."""
        with self.db.write(connection):
            current = read_row(connection, row.id)
            if current is not None:
                row.indexed = current.indexed
            if row.indexed < first:
                return False  # the index lost messages meanwhile (another process reset it): next sync
            insert_docs(connection, row.id, [doc for doc in docs if doc[0] >= row.indexed])
            row.indexed = max(row.indexed, stop)
            if found is not None:
                row.size, row.mtime_ns, row.meta_mtime_ns = found.size, found.mtime_ns, found.meta_mtime_ns
            put_row(connection, row)
        return True

    # -- deletes and renames --------------------------------------------------------------

    def forget(self, session_id: str) -> bool:
        """Drop a deleted session (its forks take over the part they shared with it). Never raises."""
        if not self.path.exists():
            return True  # nothing indexed yet: nothing to drop (and no index file created for it)
        try:
            connection = self.connection()
            for key in [session_id, *(key for key in read_rows(connection) if owner_of(key) == session_id)]:
                self._forget(connection, key)  # its subagents' histories go with it
            return True
        except (sqlite3.Error, IndexProblem, OSError) as error:
            logger.warning("search index: could not drop session %s: %s", session_id, self.fail(error))
            return False

    def _forget(self, connection: sqlite3.Connection, session_id: str) -> None:
        with self.db.write(connection):
            row = read_row(connection, session_id)
            if row is None:
                return
            children = connection.execute("SELECT id, own_from FROM sessions WHERE parent=?", (session_id,)).fetchall()
            for child_id, child_own_from in children:
                # The child's prefix up to its parent's own start stays with the grandparent; the rest is
                # re-indexed under the child (its docs are dropped and ``sync`` re-reads it).
                own_from = min(child_own_from, row.own_from) if row.parent else 0
                delete_docs(connection, child_id)
                connection.execute("UPDATE sessions SET parent=?, own_from=?, indexed=?, size=-1 WHERE id=?",
                                   (row.parent, own_from, own_from, child_id))
            delete_docs(connection, session_id)
            connection.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    def rename(self, session_id: str, title: str) -> bool:
        """Keep the index's title in step with session.json. Never raises."""
        if not self.path.exists():
            return True
        try:
            connection = self.connection(RECORD_BUSY_MS)
            with self.db.write(connection):
                connection.execute("UPDATE sessions SET title=? WHERE id=?", (title, session_id))
            return True
        except (sqlite3.Error, IndexProblem, OSError) as error:
            logger.warning("search index: could not rename session %s: %s", session_id, self.fail(error))
            return False


def _give_way(connection: sqlite3.Connection, give_way: GiveWay | None) -> None:
    """Wait while ``give_way`` holds, after committing what the catch-up has written so far."""
    if give_way is None or not give_way.holding:
        return
    if connection.in_transaction:
        connection.execute("COMMIT")
    give_way.wait()
