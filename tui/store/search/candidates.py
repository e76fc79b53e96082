"""From a query to the pieces of history that hold it: FTS5 expressions, candidates, and the check on the text.

The index keeps no positions (``detail=none``: a fifth of the size), so a trigram lookup gives the
pieces holding every three-character slice of a word, not necessarily the word itself:
``parse_config``'s slices all occur in a piece that says ``parse_args`` and ``load_config``. Every
candidate is therefore checked against its text (:func:`verified`) before it counts; a hit is always
a real substring match, exactly as a plain scan of the files finds it. Candidates come newest first,
a page at a time, so a query reads only as many as it needs. No Textual here.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tui.store.search.database import unpack
from tui.store.search.terms import Query, fold, is_cjk_word, matches

Row = tuple[Any, ...]
"""A row as sqlite3 returns it."""

MIN_TERM = 3
FIRST_PAGE = 200
"""Candidates read by the first step of a query; each later step reads four times more (at most
:data:`LARGEST_PAGE`)."""
LARGEST_PAGE = 20_000
CHECK_BATCH = 100
"""Candidates whose text is read and checked together."""

_WORD = re.compile(r"\w+")
"""Words and identifiers, as ``words_fts`` splits text (letters, digits, ``_``)."""


class QueryTooShort(ValueError):
    """No word of the query is long enough to look up."""


class SearchCancelled(Exception):
    """The caller no longer wants the answer (the picker's filter changed): the search stopped early."""


@dataclass(frozen=True)
class Match:
    """The FTS5 expressions for a query, and the folded terms every hit must hold."""

    expression: str | None
    """For ``docs_fts`` (words of 3+ characters); ``None`` when the query has none."""
    cjk_expression: str | None
    """For ``cjk_fts`` (one- and two-character CJK words)."""
    short_terms: tuple[str, ...]
    query: Query
    words_expression: str | None = None
    """For ``words_fts``: every word of every term, so the pieces where each term stands alone (the exact
    matches, ranked first) are found without checking every trigram candidate. ``None``: no words."""

    @property
    def terms(self) -> tuple[str, ...]:
        return self.query.terms

    @property
    def folded_terms(self) -> list[str]:
        return [fold(term) for term in self.query.terms]


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _trigrams(term: str) -> list[str]:
    """Every three-character slice of ``term`` (once each): a piece holding ``term`` holds them all."""
    return sorted({term[start:start + 3] for start in range(len(term) - 2)})


def build_match(query: Query, tokenizer: str) -> Match:
    """``parse_conf db 東京`` → the trigrams of ``parse_conf`` in the trigram index, ``"東京"`` in the CJK
    table, and ``db`` checked on the text. Raises :class:`QueryTooShort`."""
    long_terms = [term for term in query.terms if len(term) >= MIN_TERM]
    cjk_terms = [fold(term) for term in query.terms if len(term) < MIN_TERM and is_cjk_word(term)]
    short_terms = tuple(term for term in query.terms if len(term) < MIN_TERM and not is_cjk_word(term))
    if not long_terms and not cjk_terms:
        raise QueryTooShort(f"a search needs a word of at least {MIN_TERM} characters "
                            "(or a Chinese, Japanese or Korean word)")
    if tokenizer == "unicode61":  # positions kept: a prefix match on the last token of each term, as typed
        quoted = [f"{_quoted(term)} *" for term in long_terms]
    else:
        quoted = [_quoted(gram) for gram in sorted({gram for term in long_terms for gram in _trigrams(term)})]
    words = sorted({fold(word) for term in query.terms for word in _WORD.findall(term)})
    return Match(" AND ".join(quoted) if quoted else None,
                 " AND ".join(_quoted(term) for term in cjk_terms) if cjk_terms else None, short_terms, query,
                 words_expression=" AND ".join(_quoted(word) for word in words) if words else None)


def _candidates_sql(match: Match, *, words: bool, below: bool, in_range: bool) -> tuple[str, list[object]]:
    """Matching document ids, newest first (``below``: ``rowid < ?``; ``in_range``: ``BETWEEN ? AND ?``),
    ``LIMIT ?``. Constraints are added only when used: FTS5 reads its lists more slowly with them."""
    if words:
        table, expression = "words_fts", match.words_expression
    elif match.expression:
        table, expression = "docs_fts", match.expression
    else:
        table, expression = "cjk_fts", match.cjk_expression
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
    params: list[object] = [expression]
    if table != "cjk_fts" and match.cjk_expression:
        sql += " AND rowid IN (SELECT rowid FROM cjk_fts WHERE cjk_fts MATCH ?)"
        params.append(match.cjk_expression)
    sql += " AND rowid < ?" if below else ""
    sql += " AND rowid BETWEEN ? AND ?" if in_range else ""
    return sql + " ORDER BY rowid DESC LIMIT ?", params


def candidate_pages(connection: sqlite3.Connection, match: Match, *, words: bool = False,
                    id_range: tuple[int, int] | None = None) -> Iterator[list[int]]:
    """Pages of candidate document ids, newest first (from ``words_fts`` with ``words``), each page larger
    than the last; ``id_range``: only ids within it (inclusive)."""
    if words and match.words_expression is None:
        return
    below: int | None = None
    size = FIRST_PAGE
    while True:
        sql, params = _candidates_sql(match, words=words, below=below is not None, in_range=id_range is not None)
        params += [below] if below is not None else []
        params += list(id_range) if id_range is not None else []
        try:
            page = [doc_id for (doc_id,) in connection.execute(sql, [*params, size])]
        except sqlite3.OperationalError as error:
            if words and "phrase" in str(error):  # a word the index splits further: no shortcut for it
                return
            raise
        if page:
            yield page
        if len(page) < size:
            return
        below, size = page[-1], min(size * 4, LARGEST_PAGE)


def candidate_sessions(connection: sqlite3.Connection, match: Match) -> list[tuple[int, str]]:
    """Every candidate document id with its session, newest first."""
    sql, params = _candidates_sql(match, words=False, below=False, in_range=False)
    inner = sql.removesuffix(" ORDER BY rowid DESC LIMIT ?")
    return connection.execute(f"SELECT c.rowid, d.session FROM ({inner}) c JOIN docs d ON d.id = c.rowid "
                              "ORDER BY c.rowid DESC", params).fetchall()


def narrowed_candidate_sessions(connection: sqlite3.Connection, match: Match, words_expression: str,
                                uncovered: Collection[str]) -> list[tuple[int, str]]:
    """Like :func:`candidate_sessions`, narrowed by the word list (:mod:`tui.store.search.vocabulary`): the pieces
    ``words_expression`` finds in ``words_fts`` (``""``: none), except those of ``uncovered`` sessions (indexed
    since the list was read), whose trigram candidates are taken instead."""
    found: list[tuple[int, str]] = []
    if words_expression:
        sql = ("SELECT w.rowid, d.session FROM (SELECT rowid FROM words_fts WHERE words_fts MATCH ?) w "
               "JOIN docs d ON d.id = w.rowid")
        params: list[object] = [words_expression]
        if match.cjk_expression:
            sql += " WHERE w.rowid IN (SELECT rowid FROM cjk_fts WHERE cjk_fts MATCH ?)"
            params.append(match.cjk_expression)
        found = [(doc_id, session) for doc_id, session in connection.execute(sql, params) if session not in uncovered]
    if uncovered:
        wanted = sorted(uncovered)
        owner: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start:start + 500]
            owner.update(connection.execute(
                f"SELECT id, session FROM docs WHERE session IN ({','.join('?' * len(batch))})", batch).fetchall())
        if owner:
            sql, params = _candidates_sql(match, words=False, below=False, in_range=True)
            rows = connection.execute(sql, [*params, min(owner), max(owner), len(owner) + 1])
            found += [(doc_id, owner[doc_id]) for (doc_id,) in rows if doc_id in owner]
    found.sort(reverse=True)
    return found


_COLUMNS = "d.id, d.session, d.message, d.role, d.tool, d.path"


def read_docs(connection: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Row]:
    """``id → (id, session, message, role, tool, path, body)`` with the text unpacked."""
    found: dict[int, Row] = {}
    for start in range(0, len(ids), 500):
        batch = list(ids[start:start + 500])
        marks = ",".join("?" * len(batch))
        for row in connection.execute(f"SELECT {_COLUMNS}, t.body FROM docs d JOIN texts t ON t.id = d.id WHERE d.id IN ({marks})", batch):
            found[row[0]] = (*row[:6], unpack(row[6]))
    return found


def checked(connection: sqlite3.Connection, match: Match, ids: Iterable[int]) -> Iterator[tuple[Row, str, bool]]:
    """Each candidate (in the order given) with its folded text and whether that holds every term."""
    terms = match.folded_terms
    pending = list(ids)
    for start in range(0, len(pending), CHECK_BATCH):
        batch = pending[start:start + CHECK_BATCH]
        docs = read_docs(connection, batch)
        for doc_id in batch:
            doc = docs.get(doc_id)
            if doc is not None:
                text = fold(doc[6])
                yield doc, text, matches(text, terms)
