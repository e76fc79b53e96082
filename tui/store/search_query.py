"""Queries against the search index: ranked hits, one best hit per session, and fork attribution.

A query is words (every word must occur) and ``"quoted phrases"``, each taken literally
(:func:`tui.store.search_terms.parse_query`); matching is case-insensitive and, with the trigram
tokenizer, finds any substring of 3+ characters (``parse_conf`` finds ``parse_config``, ``app.py``
finds ``src/tui/app.py``). One- and two-character CJK words are looked up in the CJK table; other
short words are checked on the text of what the longer ones found.

Ranking is deterministic — the same answer every time, however loaded the machine: the newest
:data:`CANDIDATES` matches are read and an exact match (the whole query as typed, then every word as
a whole word or identifier) comes before a match inside a longer word, then the more relevant
(term counts against length, as bm25), then the newer. (SQLite's own bm25 first counts every match
of every term in the whole index: tens of milliseconds for a common word at 100 MB.) No Textual here.
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
CANDIDATES = 300
"""A query ranks at most this many matches, the newest ones (a common word matches tens of thousands):
bounded work, so every query answers within the target and always with the same hits."""
POOL_CHARS = 3_000_000
"""…and stops reading candidates past this much text (a few saved outputs can be megabytes each)."""
AVERAGE_CHARS = 1_000
"""A typical piece of a message, in characters: the length a relevance score is normalised against."""


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
    """Relevance rank (lower is better, see :func:`relevance`); ``None`` for a hit from the linear scan."""
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


def _candidates_sql(match: Match, *, rowid_range: bool = False) -> tuple[str, list[object]]:
    """Matching document ids, newest first (within ``rowid BETWEEN ? AND ?``)."""
    table, expression = ("docs_fts", match.expression) if match.expression else ("cjk_fts", match.cjk_expression)
    sql = f"SELECT {table}.rowid FROM {table} WHERE {table} MATCH ?"
    params: list[object] = [expression]
    if match.expression and match.cjk_expression:
        sql += " AND docs_fts.rowid IN (SELECT rowid FROM cjk_fts WHERE cjk_fts MATCH ?)"
        params.append(match.cjk_expression)
    if rowid_range:
        sql += f" AND {table}.rowid BETWEEN ? AND ?"
    return sql + f" ORDER BY {table}.rowid DESC", params


def _candidate_ids(connection: sqlite3.Connection, match: Match, scope: list[tuple[str, int | None]] | None,
                   count: int) -> list[int]:
    """The newest ``count`` matching document ids, in every session or in ``scope``'s documents (found by
    their id range — one session's are close together — and kept by membership)."""
    if scope is None:
        sql, params = _candidates_sql(match)
        return [doc_id for (doc_id,) in connection.execute(sql + " LIMIT ?", [*params, count])]
    where, scope_params = _scope_where(scope)
    members = {doc_id for (doc_id,) in connection.execute(f"SELECT id FROM docs WHERE {where}", scope_params)}
    if not members:
        return []
    sql, params = _candidates_sql(match, rowid_range=True)
    return [doc_id for (doc_id,) in connection.execute(sql, [*params, min(members), max(members)])
            if doc_id in members][:count]


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

    The newest ``candidates`` matches (at least ``4 × limit``; fewer when their text passes
    :data:`POOL_CHARS`) are read and ranked: exact matches first
    (:func:`tui.store.search_terms.exactness`), then by relevance (:func:`relevance`), then newest."""
    scope = scope_of(session_id, rows) if session_id is not None else None
    ids = _candidate_ids(connection, match, scope, max(candidates, limit * 4))
    short = [fold(term) for term in match.short_terms]
    terms = [fold(term) for term in match.terms]
    ranked: list[tuple[int, float, int, Row]] = []
    read = 0
    for batch in _batches(ids, 100):
        docs = _docs(connection, batch)
        for doc_id in batch:
            doc = docs.get(doc_id)
            if doc is None:
                continue
            text = fold(doc[6])
            read += len(text)
            if short and not matches(text, short):
                continue
            ranked.append((exactness(text, match.query), relevance(text, terms), -doc_id, doc))
        if read > POOL_CHARS and len(ranked) >= limit:
            break
    ranked.sort(key=lambda item: item[:3])
    best: dict[tuple[str, int], tuple[int, Row]] = {}
    for tier, score, _, doc in ranked:
        key = (doc[1], doc[2])
        if key not in best:
            best[key] = (tier, (*doc, score))
        elif doc[3] == "saved output" and best[key][0] == tier:  # the same text, whole: name its file
            best[key] = (tier, (*doc, best[key][1][7]))
    return _hits([row for _, row in best.values()][:limit], match, rows, excerpts=excerpts, root=root)


def relevance(text_folded: str, terms_folded: Sequence[str]) -> float:
    """Minus a bm25-style score of ``text_folded`` for the terms (lower is better): each term's count,
    saturated, against the text's length (every candidate holds every term, so no term weighting)."""
    length = max(len(text_folded), 1) / AVERAGE_CHARS
    score = 0.0
    for term in terms_folded:
        count = text_folded.count(term) if term else 0
        score += count * 2.2 / (count + 1.2 * (0.25 + 0.75 * length))
    return -round(score, 6)


def matching_sessions(connection: sqlite3.Connection, match: Match, *, checks: int = CANDIDATES) -> dict[str, int]:
    """Every session with a match in what it recorded itself → the document of its newest matching message.

    With short words to check on the text, at most ``checks`` documents are read (newest first)."""
    sql, params = _candidates_sql(match)
    if not match.short_terms:
        return {session: doc_id for session, doc_id in connection.execute(
            f"SELECT d.session, max(d.id) FROM docs d WHERE d.id IN (SELECT rowid FROM ({sql})) GROUP BY d.session",
            params)}
    short = [fold(term) for term in match.short_terms]
    ids = [doc_id for (doc_id,) in connection.execute(sql, params)]
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
