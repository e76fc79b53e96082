"""Queries against the search index: ranked hits, one best hit per session, and fork attribution.

A query is words (every word must occur) and ``"quoted phrases"``, each taken literally
(:func:`tui.store.search_terms.parse_query`); matching is case-insensitive and, with the trigram
tokenizer, finds any substring of 3+ characters (``parse_conf`` finds ``parse_config``, ``app.py``
finds ``src/tui/app.py``). One- and two-character CJK words are looked up in the CJK table; other
short words are checked on the text of what the longer ones found.

Ranking is deterministic — the same answer every time, however loaded the machine: the newest
:data:`CANDIDATES` matches are scored (bm25), and among the best of them an exact match (the whole
query as typed, then every word as a whole word or identifier) comes before a match inside a longer
word. No Textual here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.store.search_db import IndexedSession, unpack
from tui.store.search_terms import Query, exactness, fold, is_cjk_word, make_excerpt, make_snippet, matches

Row = tuple[Any, ...]
"""A row as sqlite3 returns it."""

MIN_TERM = 3
CANDIDATES = 2_000
"""A query scores at most this many matches, the newest ones (a common word matches tens of thousands):
bounded work, so every query answers within the target and always with the same hits."""
RERANK = 200
"""At most this many of the best-scored matches are read to put exact matches first (fewer when enough of
the first ones match exactly; more only while short words leave too few hits)."""
EXAMINE_BATCH = 25


class QueryTooShort(ValueError):
    """No word of the query is long enough to look up."""


@dataclass(frozen=True)
class SearchHit:
    """One message that matches, in the session that recorded it."""

    session: str
    title: str
    message: int
    role: str
    snippet: str
    """About a line of text around the match, matches wrapped in the highlight marks."""
    tool: str | None = None
    path: str | None = None
    """A saved (evicted) output's file, for a hit inside it (where it is now)."""
    score: float | None = None
    """bm25 rank (lower is better); ``None`` for a hit from the linear scan."""
    forks: tuple[str, ...] = ()
    """Forks that copied this message with their parent's prefix (the same text, listed once)."""
    excerpt: str = ""
    """Verbatim lines around the match (only when asked for: the agent's tool)."""


@dataclass(frozen=True)
class Match:
    """The FTS5 expressions for a query, and the short words checked on the text."""

    expression: str | None
    """For ``docs_fts`` (words of 3+ characters); ``None`` when the query has none."""
    cjk_expression: str | None
    """For ``cjk_fts`` (one- and two-character CJK words)."""
    short_terms: tuple[str, ...]
    query: Query

    @property
    def terms(self) -> tuple[str, ...]:
        return self.query.terms


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def build_match(query: Query, tokenizer: str) -> Match:
    """``parse_conf db 東京`` → ``"parse_conf"`` in the trigram index, ``"東京"`` in the CJK table, and
    ``db`` checked on the text. Raises :class:`QueryTooShort`."""
    long_terms = [term for term in query.terms if len(term) >= MIN_TERM]
    cjk_terms = [fold(term) for term in query.terms if len(term) < MIN_TERM and is_cjk_word(term)]
    short_terms = tuple(term for term in query.terms if len(term) < MIN_TERM and not is_cjk_word(term))
    if not long_terms and not cjk_terms:
        raise QueryTooShort(f"a search needs a word of at least {MIN_TERM} characters "
                            "(or a Chinese, Japanese or Korean word)")
    quoted = [_quoted(term) for term in long_terms]
    if tokenizer == "unicode61":  # prefix match on the last token of each term, as typed
        quoted = [f"{term} *" for term in quoted]
    return Match(" AND ".join(quoted) if quoted else None,
                 " AND ".join(_quoted(term) for term in cjk_terms) if cjk_terms else None, short_terms, query)


def scope_of(session_id: str, rows: dict[str, IndexedSession]) -> list[tuple[str, int | None]]:
    """The sessions whose docs make up ``session_id``'s history: itself, then each ancestor up to the
    message its descendant copied (``(id, None)`` means all of it)."""
    scope: list[tuple[str, int | None]] = [(session_id, None)]
    row = rows.get(session_id)
    limit: int | None = None
    seen = {session_id}
    while row is not None and row.parent and row.parent not in seen:
        limit = row.own_from if limit is None else min(limit, row.own_from)
        scope.append((row.parent, limit))
        seen.add(row.parent)
        row = rows.get(row.parent)
    return scope


def _scope_where(scope: list[tuple[str, int | None]]) -> tuple[str, list[object]]:
    alternatives: list[str] = []
    params: list[object] = []
    for session, limit in scope:
        if limit is None:
            alternatives.append("session = ?")
            params.append(session)
        else:
            alternatives.append("(session = ? AND message < ?)")
            params.extend([session, limit])
    return " OR ".join(alternatives), params


def _candidates_sql(match: Match, *, scored: bool, rowid_range: bool = False) -> tuple[str, list[object]]:
    """Matching document ids (and their bm25 score), newest first (within ``rowid BETWEEN ? AND ?``)."""
    table, expression = ("docs_fts", match.expression) if match.expression else ("cjk_fts", match.cjk_expression)
    score = f"bm25({table})" if scored else "NULL"
    sql = f"SELECT {table}.rowid, {score} FROM {table} WHERE {table} MATCH ?"
    params: list[object] = [expression]
    if match.expression and match.cjk_expression:
        sql += " AND docs_fts.rowid IN (SELECT rowid FROM cjk_fts WHERE cjk_fts MATCH ?)"
        params.append(match.cjk_expression)
    if rowid_range:
        sql += f" AND {table}.rowid BETWEEN ? AND ?"
    return sql + f" ORDER BY {table}.rowid DESC", params


def _scored_candidates(connection: sqlite3.Connection, match: Match, scope: list[tuple[str, int | None]] | None,
                       count: int) -> list[tuple[int, float]]:
    """The newest ``count`` matches (id, bm25), in every session or in ``scope``'s documents.

    A scope's documents are found by their id range (one session's are close together) and kept by
    membership; only the kept ones are scored, so a common word costs the same in a session as overall."""
    if scope is None:
        sql, params = _candidates_sql(match, scored=True)
        return connection.execute(sql + " LIMIT ?", [*params, count]).fetchall()
    where, scope_params = _scope_where(scope)
    members = {doc_id for (doc_id,) in connection.execute(f"SELECT id FROM docs WHERE {where}", scope_params)}
    if not members:
        return []
    sql, params = _candidates_sql(match, scored=False, rowid_range=True)
    kept = [doc_id for doc_id, _ in connection.execute(sql, [*params, min(members), max(members)])
            if doc_id in members][:count]
    if not kept:
        return []
    sql, params = _candidates_sql(match, scored=True, rowid_range=True)
    wanted = set(kept)
    return [(doc_id, score) for doc_id, score in connection.execute(sql, [*params, min(kept), max(kept)])
            if doc_id in wanted]


_COLUMNS = "d.id, d.session, d.message, d.role, d.tool, d.path"


def _docs(connection: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Row]:
    """``id → (id, session, message, role, tool, path, body)`` with the text unpacked."""
    found: dict[int, Row] = {}
    for start in range(0, len(ids), 500):
        batch = list(ids[start:start + 500])
        marks = ",".join("?" * len(batch))
        for row in connection.execute(f"SELECT {_COLUMNS}, d.body FROM docs d WHERE d.id IN ({marks})", batch):
            found[row[0]] = (*row[:6], unpack(row[6]))
    return found


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def ranked_hits(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession], *,
                session_id: str | None, limit: int, excerpts: bool = False, root: Path | None = None,
                candidates: int = CANDIDATES) -> list[SearchHit]:
    """The best ``limit`` messages, one hit per message; all sessions, or ``session_id``'s history.

    Among the newest ``candidates`` matches (at least ``4 × limit``), the best by bm25 are read, exact
    matches put first (:func:`tui.store.search_terms.exactness`), then bm25, then the newest."""
    scope = scope_of(session_id, rows) if session_id is not None else None
    found = _scored_candidates(connection, match, scope, max(candidates, limit * 4))
    found.sort(key=lambda item: (item[1], -item[0]))
    short = [fold(term) for term in match.short_terms]
    ranked: list[tuple[int, float, int, Row]] = []
    exact: set[tuple[str, int]] = set()
    examined = 0
    for batch in _batches(found, max(EXAMINE_BATCH, limit)):
        docs = _docs(connection, [doc_id for doc_id, _ in batch])
        for doc_id, score in batch:
            doc = docs.get(doc_id)
            if doc is None:
                continue
            text = fold(doc[6])
            if short and not matches(text, short):
                continue
            tier = exactness(text, match.query)
            ranked.append((tier, score, -doc_id, doc))
            if tier == 0:
                exact.add((doc[1], doc[2]))
        examined += len(batch)
        # Sorted by (exactness, bm25): once ``limit`` messages match exactly, nothing later can enter the top.
        if len(exact) >= limit or (examined >= max(RERANK, limit * 4)
                                   and len({(doc[1], doc[2]) for *_, doc in ranked}) >= limit):
            break
    ranked.sort(key=lambda item: item[:3])
    best: dict[tuple[str, int], Row] = {}
    for _, score, _, doc in ranked:
        best.setdefault((doc[1], doc[2]), (*doc, score))
    return _hits(list(best.values())[:limit], match, rows, excerpts=excerpts, root=root)


def matching_sessions(connection: sqlite3.Connection, match: Match, *, checks: int = CANDIDATES) -> dict[str, int]:
    """Every session with a match in what it recorded itself → the document of its newest matching message.

    With short words to check on the text, at most ``checks`` documents are read (newest first)."""
    sql, params = _candidates_sql(match, scored=False)
    if not match.short_terms:
        return {session: doc_id for session, doc_id in connection.execute(
            f"SELECT d.session, max(d.id) FROM docs d WHERE d.id IN (SELECT rowid FROM ({sql})) GROUP BY d.session",
            params)}
    short = [fold(term) for term in match.short_terms]
    ids = [doc_id for doc_id, _ in connection.execute(sql, params)]
    newest: dict[str, int] = {}
    read = 0
    for batch in _batches(ids, 500):
        docs = _docs(connection, batch)
        for doc_id in batch:
            doc = docs.get(doc_id)
            if doc is None or doc[1] in newest:
                continue
            read += 1
            if matches(fold(doc[6]), short):
                newest[doc[1]] = doc_id
        if read >= checks:
            break
    return newest


def hits_for_docs(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession],
                  doc_ids: Sequence[int], *, root: Path | None = None) -> list[SearchHit]:
    """Hits (with snippets) for chosen documents, in the order given."""
    docs = _docs(connection, doc_ids)
    return _hits([(*docs[doc_id], None) for doc_id in doc_ids if doc_id in docs], match, rows, root=root)


def _hits(chosen: list[Row], match: Match, rows: dict[str, IndexedSession], *, excerpts: bool = False,
          root: Path | None = None) -> list[SearchHit]:
    """``chosen``: (id, session, message, role, tool, path, text, score) rows."""
    children = _children(rows)
    terms = list(match.terms)
    hits: list[SearchHit] = []
    for _, session, message, role, tool, path, body, score in chosen:
        row = rows.get(session)
        hits.append(SearchHit(
            session=session, title=row.title if row else session, message=message, role=role,
            snippet=make_snippet(body, terms), tool=tool, path=saved_path(path, root),
            score=score, forks=sharing_forks(session, message, rows, children),
            excerpt=make_excerpt(body, terms) if excerpts else ""))
    return hits


def saved_path(name: str | None, root: Path | None) -> str | None:
    """Where a saved output indexed as ``large_tool_results/…`` is now (under the data directory ``root``)."""
    if name is None or root is None:
        return name
    return str(root / name)


def _children(rows: dict[str, IndexedSession]) -> dict[str, list[IndexedSession]]:
    children: dict[str, list[IndexedSession]] = {}
    for row in rows.values():
        if row.parent:
            children.setdefault(row.parent, []).append(row)
    return children


def sharing_forks(session: str, message: int, rows: dict[str, IndexedSession],
                  children: dict[str, list[IndexedSession]] | None = None) -> tuple[str, ...]:
    """Forks (and forks of forks) whose copied prefix includes ``message`` of ``session``."""
    children = _children(rows) if children is None else children
    found: list[str] = []
    stack = [session]
    seen = {session}
    while stack:
        for child in children.get(stack.pop(), ()):
            if child.own_from > message and child.id not in seen:
                seen.add(child.id)
                found.append(child.id)
                stack.append(child.id)
    return tuple(found)
