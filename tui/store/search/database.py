"""The SQLite side of the search index: connections, schema, the tables' rows (what a failure means:
:mod:`tui.store.search.index_problems`).

``<data>/index.sqlite`` holds:

- ``sessions``: per session, its title, the ancestor its inherited prefix is attributed to
  (``parent``), the first message it owns (``own_from``; a fork's copied prefix is indexed
  once, under the session that recorded it), how many messages are indexed, and the size and
  mtime of messages.json / session.json when last indexed (to find what changed on disk);
- ``docs``: one row per searchable piece of a message (session, message number, role, tool,
  saved-output path relative to the data directory); ``texts``: its text, zlib-compressed (apart, so
  that finding the session of thousands of candidates reads a few pages, not the text);
- ``docs_fts``: a contentless FTS5 trigram index over the text that records only *which* pieces hold
  each trigram (``detail=none``, no positions: a fifth of the size). It gives candidates; every
  candidate is checked against the text in ``texts`` before it is a hit;
- ``words_fts``: the same for whole words and identifiers (``parse_config`` is one word): it finds the
  exact matches that rank first without reading every piece that merely holds the same trigrams;
- ``cjk_fts``: for the few pieces holding Chinese, Japanese or Korean text, each CJK character and
  pair of characters (the trigram index cannot find a two-character word).

No Textual here.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tui.base.nofollow import check_no_links, make_dirs
from tui.store.search.index_problems import classify
from tui.store.search.terms import cjk_grams, fold

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
"""3: the FTS tables keep no positions (``detail=none``), ``words_fts`` added, the text apart in ``texts``."""
TOKENIZERS = {"trigram": 1, "unicode61": 2}
DEFAULT_TOKENIZER = "trigram"
"""Chosen by measurement (docs/search.md): substrings of identifiers, paths and commands match."""

WORDS_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
"""Words and identifiers as ``words_fts`` splits them: letters, digits and ``_`` (what ``\\w`` matches)."""
MERGING = (("automerge", 16), ("crisismerge", 64))
"""FTS5 merges its segments less often than by default (4 and 16): a cold build spends a fifth less time
merging, and a query reads a few more segments (a millisecond or two at 100 MB)."""
PAGE_SIZE = 8192
"""Bytes per page of a new index file: pieces of a few KB leave less of each page unused than with 4 KB."""

_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")
"""Files SQLite makes next to the database."""


@dataclass
class IndexedSession:
    """A row of the ``sessions`` table."""

    id: str
    title: str
    parent: str | None
    own_from: int
    indexed: int
    size: int
    mtime_ns: int
    meta_mtime_ns: int


def _schema(tokenizer: str) -> list[str]:
    return [
        """CREATE TABLE sessions(
            id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', parent TEXT, own_from INTEGER NOT NULL DEFAULT 0,
            indexed INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL DEFAULT -1, mtime_ns INTEGER NOT NULL DEFAULT 0,
            meta_mtime_ns INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX sessions_parent ON sessions(parent)",
        """CREATE TABLE docs(
            id INTEGER PRIMARY KEY, session TEXT NOT NULL, message INTEGER NOT NULL, role TEXT NOT NULL,
            tool TEXT, path TEXT)""",
        "CREATE TABLE texts(id INTEGER PRIMARY KEY, body BLOB NOT NULL)",
        "CREATE INDEX docs_session ON docs(session, message)",
        # unicode61 (compared with trigram by the benchmark) keeps positions: its queries are phrases.
        f"CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='', tokenize='{tokenizer}', "
        f"detail={'none' if tokenizer == 'trigram' else 'full'}, columnsize=0)",
        f"CREATE VIRTUAL TABLE words_fts USING fts5(body, content='', tokenize=\"{WORDS_TOKENIZER}\", detail=none, "
        "columnsize=0)",
        "CREATE VIRTUAL TABLE cjk_fts USING fts5(grams, content='', tokenize='unicode61', detail=none, columnsize=0)",
        *(f"INSERT INTO {table}({table}, rank) VALUES ('{setting}', {value})" for table in ("docs_fts", "words_fts")
          for setting, value in MERGING),
        "CREATE TABLE checks(name TEXT PRIMARY KEY, at REAL NOT NULL)",
    ]


def pack(text: str) -> bytes:
    """A document's text as stored (zlib: a third of the size or less for code, logs and prose)."""
    return zlib.compress(text.encode("utf-8", errors="replace"), 1)


def unpack(body: bytes | str) -> str:
    return body if isinstance(body, str) else zlib.decompress(body).decode("utf-8", errors="replace")


class Database:
    """One index file: a connection per thread (SQLite connections are not shared across threads)."""

    def __init__(self, path: Path, tokenizer: str = DEFAULT_TOKENIZER) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}")
        self.path = path
        self.tokenizer = tokenizer
        self.version = SCHEMA_VERSION * 100 + TOKENIZERS[tokenizer]
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: dict[sqlite3.Connection, threading.Thread] = {}
        """Every open connection and the thread that uses it."""
        self._generation = 0
        """Raised by :meth:`close`: a thread whose connection is of an older generation opens a new one."""
        self.replaced_version: int | None = None
        """Set when this object found an index written by another version of deep-tui (its
        ``user_version``) and emptied it: everything is indexed again."""

    def connection(self, busy_ms: int) -> sqlite3.Connection:
        """This thread's connection (opened, and the schema created or rebuilt, on first use).

        Raises :class:`IndexProblem`.
        """
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and getattr(self._local, "generation", None) != self._generation:
            self.drop_connection()  # closed by close() while this thread used it: this thread closes it now
            connection = None
        try:
            if connection is None:
                connection = self._open(busy_ms)
                self._local.connection = connection
                self._local.generation = self._generation
            connection.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        except (sqlite3.Error, OSError) as error:
            self.drop_connection()
            raise classify(error, self.path) from None
        return connection

    def _open(self, busy_ms: int) -> sqlite3.Connection:
        make_dirs(self.path.parent)
        # SQLite opens by name: the file, its journals and the way to them must not be planted links.
        for name in (self.path.name, *(self.path.name + suffix for suffix in _SQLITE_SIDE_FILES)):
            check_no_links(self.path.with_name(name))
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0)
        try:
            connection.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if version != self.version:
                self._create(connection)
            else:
                connection.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            connection.close()
            raise
        with self._lock:
            self._connections[connection] = threading.current_thread()
        return connection

    def _create(self, connection: sqlite3.Connection) -> None:
        """Create the schema, or drop and re-create an index of another version (it is rebuilt from disk)."""
        connection.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file (or the VACUUM below) takes it
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("BEGIN IMMEDIATE")
        dropped = False
        try:
            if connection.execute("PRAGMA user_version").fetchone()[0] != self.version:  # not done by another process
                old_version = connection.execute("PRAGMA user_version").fetchone()[0]
                for (name,) in connection.execute(
                        "SELECT name FROM sqlite_master WHERE type='table' AND name IN "
                        "('docs_fts','words_fts','cjk_fts','docs','texts','sessions','checks')"
                ).fetchall():
                    connection.execute(f"DROP TABLE IF EXISTS {name}")
                    dropped = True
                if dropped:
                    self.replaced_version = old_version
                for statement in _schema(self.tokenizer):
                    connection.execute(statement)
                # A file made just now is sound: the first check is due a day later (see SearchIndex.check).
                connection.execute("INSERT INTO checks(name, at) VALUES ('quick_check', ?)", (time.time(),))
                connection.execute(f"PRAGMA user_version={self.version}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        if dropped:  # give back the old index's pages (it is rebuilt from messages.json), in today's page size
            try:  # (a WAL file keeps its page size through VACUUM: out of WAL for it, and back)
                connection.execute("PRAGMA journal_mode=DELETE")
                connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
                connection.execute("VACUUM")
            except sqlite3.OperationalError as error:  # another deep-tui reads it: the space is reused later
                logger.info("could not compact the search index %s: %s", self.path, error)
            finally:
                try:
                    connection.execute("PRAGMA journal_mode=WAL")
                except sqlite3.OperationalError as error:  # left in rollback-journal mode: still a working index
                    logger.info("the search index %s stays out of WAL mode: %s", self.path, error)
        logger.info("created the search index %s (%s)", self.path, self.tokenizer)

    @contextmanager
    def write(self, connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``: waits up to the busy timeout for other writers); inside
        one already open (a catch-up's batch), part of it."""
        if connection.in_transaction:
            yield connection
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def drop_connection(self) -> None:
        """Close this thread's connection (after an error it may be unusable; a thread that is done with
        the index calls this too)."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is None:
            return
        with self._lock:
            self._connections.pop(connection, None)
        try:
            connection.close()
        except sqlite3.Error as error:
            logger.debug("closing the index connection failed: %s", error)

    def close(self) -> None:
        """Close every connection this object opened that no other thread may be using now.

        A connection is closed only by the thread that uses it, or once that thread has ended: closing
        it under another thread's running query crashes the interpreter (seen as a segfault when a
        corrupt file was discarded while the picker's word list was being read). A live thread's
        connection is closed by that thread, at its next :meth:`connection` or :meth:`drop_connection`.
        """
        current = threading.current_thread()
        with self._lock:
            self._generation += 1
            closable = [connection for connection, owner in self._connections.items()
                        if owner is current or not owner.is_alive()]
            for connection in closable:
                del self._connections[connection]
        if getattr(self._local, "connection", None) in closable:
            self._local.connection = None
        for connection in closable:
            try:
                connection.close()
            except sqlite3.Error as error:
                logger.debug("closing an index connection failed: %s", error)

    def quick_check(self, connection: sqlite3.Connection) -> str | None:
        """SQLite's ``PRAGMA quick_check`` over the whole file (about a second per 100 MB of history; run off
        the UI thread): ``None`` when the file is sound, else what is wrong. Also records when it ran."""
        try:
            found = [row[0] for row in connection.execute("PRAGMA quick_check(5)").fetchall()]
        except sqlite3.DatabaseError as error:  # so damaged that the check itself cannot run
            return str(error)
        if found != ["ok"]:
            return "; ".join(str(line) for line in found)
        with self.write(connection):
            connection.execute("INSERT OR REPLACE INTO checks(name, at) VALUES ('quick_check', ?)", (time.time(),))
        return None

    @staticmethod
    def last_check(connection: sqlite3.Connection) -> float:
        """When :meth:`quick_check` last found the file sound (0: never)."""
        row = connection.execute("SELECT at FROM checks WHERE name='quick_check'").fetchone()
        return float(row[0]) if row else 0.0

    def discard_corrupt(self, *, known_bad: bool = False) -> bool:
        """Delete a corrupt index file (it is derived data) so the next use rebuilds it.

        Unless ``known_bad`` (a failed quick_check), checks again with a fresh connection first, so a
        file another process already rebuilt is kept. Returns True when the file was removed.
        """
        self.close()
        if known_bad:
            return self._remove_files()
        try:
            probe = sqlite3.connect(self.path, timeout=1)
            try:
                probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
                probe.execute("SELECT count(*) FROM sessions").fetchone()
                return False
            finally:
                probe.close()
        except sqlite3.OperationalError as error:
            if "no such table" not in str(error):
                return False
        except sqlite3.DatabaseError:
            pass
        return self._remove_files()

    def _remove_files(self) -> bool:
        removed = False
        for suffix in ("", "-wal", "-shm", "-journal"):
            candidate = self.path.with_name(self.path.name + suffix)
            try:
                candidate.unlink()
                removed = True
            except FileNotFoundError:
                continue
            except OSError as error:
                logger.warning("cannot remove the corrupt search index %s: %s", candidate, error)
                return False
        logger.warning("removed the corrupt search index %s; it is rebuilt from messages.json", self.path)
        return removed


def read_rows(connection: sqlite3.Connection) -> dict[str, IndexedSession]:
    rows = connection.execute(
        "SELECT id, title, parent, own_from, indexed, size, mtime_ns, meta_mtime_ns FROM sessions").fetchall()
    return {row[0]: IndexedSession(*row) for row in rows}


def read_row(connection: sqlite3.Connection, session_id: str) -> IndexedSession | None:
    row = connection.execute(
        "SELECT id, title, parent, own_from, indexed, size, mtime_ns, meta_mtime_ns FROM sessions WHERE id=?",
        (session_id,)).fetchone()
    return IndexedSession(*row) if row else None


def put_row(connection: sqlite3.Connection, row: IndexedSession) -> None:
    connection.execute(
        "INSERT OR REPLACE INTO sessions(id, title, parent, own_from, indexed, size, mtime_ns, meta_mtime_ns) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (row.id, row.title, row.parent, row.own_from, row.indexed, row.size, row.mtime_ns, row.meta_mtime_ns))


def delete_docs(connection: sqlite3.Connection, session_id: str) -> None:
    """Remove a session's documents from the table and from the FTS indexes (a contentless index is told
    the text it indexed)."""
    rows = connection.execute("SELECT t.id, t.body FROM docs d JOIN texts t ON t.id = d.id WHERE d.session=?",
                              (session_id,)).fetchall()
    for doc_id, body in rows:
        text = unpack(body)
        connection.execute("INSERT INTO docs_fts(docs_fts, rowid, body) VALUES ('delete', ?, ?)", (doc_id, text))
        connection.execute("INSERT INTO words_fts(words_fts, rowid, body) VALUES ('delete', ?, ?)", (doc_id, text))
        grams = () if text.isascii() else cjk_grams(fold(text))
        if grams:
            connection.execute("INSERT INTO cjk_fts(cjk_fts, rowid, grams) VALUES ('delete', ?, ?)",
                               (doc_id, " ".join(sorted(grams))))
    connection.execute("DELETE FROM texts WHERE id IN (SELECT id FROM docs WHERE session=?)", (session_id,))
    connection.execute("DELETE FROM docs WHERE session=?", (session_id,))


def insert_docs(connection: sqlite3.Connection, session_id: str,
                docs: list[tuple[int, str, str | None, str | None, str]]) -> None:
    """``docs``: (message, role, tool, path, body) rows for ``session_id`` (in a write transaction: their ids
    follow the largest one; one statement per table for all of them)."""
    if not docs:
        return
    first = connection.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()[0]
    ids = range(first, first + len(docs))
    connection.executemany("INSERT INTO docs(id, session, message, role, tool, path) VALUES (?,?,?,?,?,?)",
                           [(doc_id, session_id, message, role, tool, path)
                            for doc_id, (message, role, tool, path, _) in zip(ids, docs, strict=True)])
    texts = [(doc_id, doc[4]) for doc_id, doc in zip(ids, docs, strict=True)]
    connection.executemany("INSERT INTO texts(id, body) VALUES (?, ?)", [(doc_id, pack(text)) for doc_id, text in texts])
    connection.executemany("INSERT INTO docs_fts(rowid, body) VALUES (?, ?)", texts)
    connection.executemany("INSERT INTO words_fts(rowid, body) VALUES (?, ?)", texts)
    grams = [(doc_id, " ".join(sorted(found))) for doc_id, text in texts
             if not text.isascii() and (found := cjk_grams(fold(text)))]
    if grams:
        connection.executemany("INSERT INTO cjk_fts(rowid, grams) VALUES (?, ?)", grams)
