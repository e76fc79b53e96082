"""Queries against the search index: ranked hits, one best hit per session, and fork attribution.

A query is words (every word must occur) and ``"quoted phrases"``; matching is
case-insensitive and, with the trigram tokenizer, finds any substring of 3+ characters
(``parse_conf`` finds ``parse_config``, ``app.py`` finds ``src/tui/app.py``). Shorter
words are checked with ``LIKE`` on the rows the longer ones found.
No Textual here.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tui.store.search_db import IndexedSession
from tui.store.search_text import make_excerpt, make_snippet

Row = tuple[Any, ...]
"""A row as sqlite3 returns it."""

MIN_TERM = 3
RANK_BUDGET_MS = 40
"""Ranking all matches of a very common word can take long; past this, hits come newest first."""


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
    """A saved (evicted) output's file, for a hit inside it."""
    score: float | None = None
    """bm25 rank (lower is better); ``None`` for a hit from the linear scan."""
    forks: tuple[str, ...] = ()
    """Forks that copied this message with their parent's prefix (the same text, listed once)."""
    excerpt: str = ""
    """Verbatim lines around the match (only when asked for: the agent's tool)."""


@dataclass(frozen=True)
class Match:
    """The FTS5 expression for a query, and the short words checked with LIKE."""

    expression: str
    short_terms: tuple[str, ...]
    terms: tuple[str, ...]


def build_match(terms: Sequence[str], tokenizer: str) -> Match:
    """``["parse_conf", "db"]`` → ``'"parse_conf"'`` plus ``LIKE '%db%'``. Raises :class:`QueryTooShort`."""
    long_terms = [term for term in terms if len(term) >= MIN_TERM]
    short_terms = tuple(term for term in terms if len(term) < MIN_TERM)
    if not long_terms:
        raise QueryTooShort(f"a search needs a word of at least {MIN_TERM} characters")
    quoted = ['"' + term.replace('"', '""') + '"' for term in long_terms]
    if tokenizer == "unicode61":  # prefix match on the last token of each term, as typed
        quoted = [f"{term} *" for term in quoted]
    return Match(" AND ".join(quoted), short_terms, tuple(terms))


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


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


def _where(match: Match, scope: list[tuple[str, int | None]] | None) -> tuple[str, list[object]]:
    clauses = ["docs_fts MATCH ?"]
    params: list[object] = [match.expression]
    for term in match.short_terms:
        clauses.append("d.body LIKE ? ESCAPE '\\'")
        params.append(_like(term))
    if scope is not None:
        alternatives: list[str] = []
        for session, limit in scope:
            if limit is None:
                alternatives.append("d.session = ?")
                params.append(session)
            else:
                alternatives.append("(d.session = ? AND d.message < ?)")
                params.extend([session, limit])
        clauses.append("(" + " OR ".join(alternatives) + ")")
    return " AND ".join(clauses), params


def _with_budget(connection: sqlite3.Connection, budget_ms: float,
                 run: Callable[[], list[Row]]) -> list[Row] | None:
    """``run()``, or ``None`` when it took longer than ``budget_ms`` (interrupted)."""
    deadline = time.perf_counter() + budget_ms / 1000
    connection.set_progress_handler(lambda: int(time.perf_counter() > deadline), 2_000)
    try:
        return run()
    except sqlite3.OperationalError as error:
        if "interrupted" not in str(error):
            raise
        return None
    finally:
        connection.set_progress_handler(None, 0)


_COLUMNS = "d.id, d.session, d.message, d.role, d.tool, d.path"


def ranked_hits(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession], *,
                session_id: str | None, limit: int, budget_ms: float = RANK_BUDGET_MS,
                excerpts: bool = False) -> list[SearchHit]:
    """The best ``limit`` messages (bm25), one hit per message; all sessions, or ``session_id``'s history."""
    scope = scope_of(session_id, rows) if session_id is not None else None
    where, params = _where(match, scope)
    fetch = limit * 4
    ranked_sql = (f"SELECT {_COLUMNS}, bm25(docs_fts) AS score FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
                  f"WHERE {where} ORDER BY score LIMIT ?")
    found = _with_budget(connection, budget_ms, lambda: connection.execute(ranked_sql, [*params, fetch]).fetchall())
    if found is None:  # too many matches to rank in time: the newest ones
        newest_sql = (f"SELECT {_COLUMNS}, NULL FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
                      f"WHERE {where} ORDER BY docs_fts.rowid DESC LIMIT ?")
        found = connection.execute(newest_sql, [*params, fetch]).fetchall()
    best: dict[tuple[str, int], Row] = {}
    for row in found:
        best.setdefault((row[1], row[2]), row)
    chosen = list(best.values())[:limit]
    return _hits(connection, chosen, match, rows, excerpts=excerpts)


def matching_sessions(connection: sqlite3.Connection, match: Match) -> dict[str, int]:
    """Every session with a match in what it recorded itself → the document of its newest matching message."""
    where, params = _where(match, None)
    rows = connection.execute(
        f"SELECT d.session, max(d.id) FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid WHERE {where} "
        "GROUP BY d.session", params).fetchall()
    return {session: doc_id for session, doc_id in rows}


def hits_for_docs(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession],
                  doc_ids: Sequence[int]) -> list[SearchHit]:
    """Hits (with snippets) for chosen documents, in the order given."""
    chosen: dict[int, Row] = {}
    for start in range(0, len(doc_ids), 500):
        batch = list(doc_ids[start:start + 500])
        marks = ",".join("?" * len(batch))
        for row in connection.execute(f"SELECT {_COLUMNS}, NULL FROM docs d WHERE d.id IN ({marks})", batch):
            chosen[row[0]] = row
    return _hits(connection, [chosen[doc_id] for doc_id in doc_ids if doc_id in chosen], match, rows)


def _hits(connection: sqlite3.Connection, chosen: list[Row], match: Match,
          rows: dict[str, IndexedSession], *, excerpts: bool = False) -> list[SearchHit]:
    bodies = _bodies(connection, [row[0] for row in chosen])
    children = _children(rows)
    hits: list[SearchHit] = []
    for doc_id, session, message, role, tool, path, score in chosen:
        row = rows.get(session)
        body = bodies.get(doc_id, "")
        hits.append(SearchHit(
            session=session, title=row.title if row else session, message=message, role=role,
            snippet=make_snippet(body, list(match.terms)), tool=tool, path=path,
            score=score, forks=sharing_forks(session, message, rows, children),
            excerpt=make_excerpt(body, list(match.terms)) if excerpts else ""))
    return hits


def _bodies(connection: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    bodies: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        marks = ",".join("?" * len(batch))
        bodies.update(connection.execute(f"SELECT id, body FROM docs WHERE id IN ({marks})", batch).fetchall())
    return bodies


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
