"""The index's word list in memory: which pieces can hold a query, without checking every trigram candidate.

The trigram index keeps no positions, so an identifier made of common words (``parse_config``) has
thousands of candidate pieces — every piece holding ``par``, ``ars``, … ``fig`` somewhere — and only a
few hundred hold it; a word that never occurs (``the_return``) may have thousands of candidates and no
match, each one read and checked to say so. ``words_fts`` knows every word and identifier each piece
holds. A piece holding a query word ``w`` (letters, digits, ``_``) holds a word *containing* ``w``:
finding those words in the word list (every distinct word, a few MB of text, searched in memory in a
millisecond or two) and asking ``words_fts`` for the pieces holding any of them gives exactly the
pieces that can match — a superset, still checked on the text, so a hit always holds what was typed.

The list is read once (about 0.3 s of CPU for 100 MB of history, off the UI thread) and is true for
the sessions whose indexed state (``sessions`` row) is what it was then; pieces of sessions indexed
since are found through the trigram index, as before. Only words written in ASCII are looked up this
way (SQLite and Python fold other scripts differently); any other query takes the trigram path.
No Textual here.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tui.store.search.database import IndexedSession
from tui.store.search.terms import Query, fold

MAX_TOKEN_BYTES = 32_768
"""FTS5 keeps at most this many bytes of a word (a longer one, say a hex dump, is cut): such a word may
hold a query word past the cut, so the pieces holding it are always candidates."""
LONG_PREFIX_BYTES = 600
"""A cut word is looked up by this much of its start (a prefix query)."""
MAX_WORDS = 200
MAX_PIECES = 6_000
"""A query word contained in more distinct words than :data:`MAX_WORDS`, or whose words are in more pieces
than this in all (``def``, ``return``, ``migration``), is not narrowed by the list: reading that many
pieces' ids costs more than it saves, as matches of such a word are everywhere and the picker finds its
sessions among the first candidates it checks."""
_ASCII_WORD = re.compile(r"[0-9a-z_]+")

Stamp = tuple[str | None, int, int, int, int]
"""What a session's row says about the pieces indexed for it: parent, own_from, indexed, size, mtime."""


def stamp(row: IndexedSession) -> Stamp:
    return (row.parent, row.own_from, row.indexed, row.size, row.mtime_ns)


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def file_identity(path: Path) -> tuple[int, int] | None:
    """The index file's device and inode: a file removed and built again is another list's business."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


@dataclass(frozen=True)
class Vocabulary:
    """Every distinct word of ``words_fts`` when it was read, and the sessions' state then."""

    folded: str
    """``\\n`` + every word, folded as a query is (:func:`fold`), and the number of pieces holding it, one
    ``word\\tcount`` a line + ``\\n``."""
    raw: Mapping[str, tuple[str, ...]]
    """A folded word → the words as the index holds them, where folding changed them (``İ``)."""
    long_prefixes: tuple[str, ...]
    """The starts of the words FTS5 cut (:data:`MAX_TOKEN_BYTES`)."""
    stamps: Mapping[str, Stamp]
    identity: tuple[int, int] | None
    read_at: float
    """``time.monotonic()`` when it was read."""

    @classmethod
    def read(cls, connection: sqlite3.Connection, path: Path) -> Vocabulary:
        """The list and the sessions' rows, read in one transaction (so they agree)."""
        connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_vocab USING fts5vocab(main, 'words_fts', 'row')")
        identity = file_identity(path)
        connection.execute("BEGIN")
        try:
            rows = connection.execute(
                "SELECT id, title, parent, own_from, indexed, size, mtime_ns, meta_mtime_ns FROM sessions").fetchall()
            words, long_words = connection.execute(
                f"SELECT group_concat(CASE WHEN length(CAST(term AS BLOB)) < {MAX_TOKEN_BYTES} "
                "THEN term || char(9) || doc END, char(10)),"
                f" group_concat(CASE WHEN length(CAST(term AS BLOB)) >= {MAX_TOKEN_BYTES} "
                f"THEN hex(substr(CAST(term AS BLOB), 1, {LONG_PREFIX_BYTES})) END, ',') FROM temp.words_vocab"
            ).fetchone()
        finally:
            connection.execute("COMMIT")
        words = words or ""
        folded = fold(words)
        raw: dict[str, tuple[str, ...]] = {}
        if folded != words:  # rare: words that folding changes (the index lower-cases most scripts itself)
            for line in words.split("\n"):
                word = line.partition("\t")[0]
                key = fold(word)
                if key != word:
                    raw[key] = (*raw.get(key, ()), word)
        prefixes = tuple(bytes.fromhex(item).decode("utf-8", errors="ignore")[:-1]
                         for item in (long_words or "").split(",") if item)
        return cls("\n" + folded + "\n", raw, tuple(prefix for prefix in prefixes if prefix),
                   {row[0]: stamp(IndexedSession(*row)) for row in rows}, identity, time.monotonic())

    def covers(self, path: Path) -> bool:
        """Still the same index file."""
        return self.identity is not None and file_identity(path) == self.identity

    def uncovered(self, rows: Mapping[str, IndexedSession]) -> set[str]:
        """Sessions indexed differently since the list was read (new ones, appended to, re-indexed)."""
        return {session for session, row in rows.items() if self.stamps.get(session) != stamp(row)}

    def words_containing(self, word: str, limit: int = MAX_WORDS,
                         pieces: int = MAX_PIECES) -> tuple[list[str], int] | None:
        """The index's words (as it holds them) containing ``word`` (folded ASCII, no tab or line break) and
        how many pieces hold them (at most: a piece may hold several); ``None`` past ``limit`` words or
        ``pieces`` pieces."""
        found: list[str] = []
        total = 0
        text = self.folded
        position = text.find(word)
        while position >= 0:
            start = text.rfind("\n", 0, position) + 1
            stop = text.find("\n", position)
            entry, _, count = text[start:stop].partition("\t")
            if position - start + len(word) > len(entry):  # in the count (a query of digits)
                position = text.find(word, position + 1)
                continue
            found.extend(self.raw.get(entry, (entry,)))
            total += int(count)
            if len(found) > limit or total > pieces:
                return None
            position = text.find(word, stop)
        return found, total

    def expression(self, query: Query) -> str | None:
        """A ``words_fts`` expression every piece holding the query satisfies: one clause per ASCII word of
        the query, the words containing it OR-ed. ``""``: no piece can hold it; ``None``: the list cannot
        narrow this query."""
        clauses: list[str] = []
        for term in query.terms:
            folded = fold(term)
            if not folded.isascii():
                continue
            for word in sorted(set(_ASCII_WORD.findall(folded))):
                holders = self.words_containing(word)
                if holders is None:
                    continue
                alternatives = [_quoted(holder) for holder in holders[0]]
                alternatives += [f"{_quoted(prefix)} *" for prefix in self.long_prefixes]
                if not alternatives:
                    return ""  # no piece holds it
                clauses.append("(" + " OR ".join(alternatives) + ")")
        return " AND ".join(clauses) if clauses else None
