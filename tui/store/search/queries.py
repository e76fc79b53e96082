"""Queries against the search index: ranked hits, one best hit per session, and fork attribution.

A query is words (every word must occur) and ``"quoted phrases"``, each taken literally
(:func:`tui.store.search.terms.parse_query`); matching is case-insensitive and, with the trigram
tokenizer, finds any substring of 3+ characters (``parse_conf`` finds ``parse_config``, ``app.py``
finds ``src/tui/app.py``). One- and two-character CJK words are looked up in the CJK table; other
short words are checked on the text of what the longer ones found.

Every candidate the index gives is checked on its text (the index keeps no positions,
:mod:`tui.store.search.candidates`): a hit always holds what was typed. Ranking is deterministic — the
same answer every time, however loaded the machine: the newest matches where every word stands alone,
then the newest of all matches, up to :data:`CANDIDATES`, are ranked: an exact match (the whole query
as typed, then every word as a whole word or identifier) before a match inside a longer word, then the
more relevant (term counts against length, as bm25), then the newer. No Textual here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui.store.search.candidates import (
    CHECK_BATCH,
    MIN_TERM,
    Match,
    QueryTooShort,
    Row,
    SearchCancelled,
    build_match,
    candidate_pages,
    candidate_sessions,
    checked,
    read_docs,
)
from tui.store.search.database import IndexedSession
from tui.store.search.subagent_index_rows import owner_of, split_key
from tui.store.search.terms import exactness, make_excerpt, make_snippet

__all__ = ["MIN_TERM", "Match", "QueryTooShort", "SearchCancelled", "SearchHit", "build_match", "hits_for_docs", "matching_sessions",
           "ranked_hits"]

CANDIDATES = 300
"""A query ranks at most this many matches (a common word matches tens of thousands): bounded work, so
every query answers within the target and always with the same hits."""
POOL_CHARS = 1_000_000
"""…and stops reading candidates past this much text once it has enough hits to show (a few saved
outputs can be megabytes each, and a word whose trigrams are everywhere has many candidates to check)."""
SESSION_CHECK_CHARS = 500_000
"""The picker counts the sessions matching beyond those it shows by checking at most this much text;
sessions left unchecked are counted as "up to"."""
AVERAGE_CHARS = 1_000
"""A typical piece of a message, in characters: the length a relevance score is normalised against."""


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

    @property
    def owner(self) -> str:
        """The session the hit belongs to: ``session`` itself, or the session whose subagent recorded it."""
        return owner_of(self.session)

    @property
    def subagent(self) -> int | None:
        """The number of the subagent whose history holds the hit (``session`` is then ``<id>/subagents/<n>``:
        ``message`` counts in the subagent's own history); ``None`` for a session's own message."""
        return split_key(self.session)[1]


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


def _scope_members(connection: sqlite3.Connection, scope: list[tuple[str, int | None]]) -> set[int]:
    where, params = _scope_where(scope)
    return {doc_id for (doc_id,) in connection.execute(f"SELECT id FROM docs WHERE {where}", params)}


def ranked_hits(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession], *,
                session_id: str | None, limit: int, excerpts: bool = False, root: Path | None = None,
                candidates: int = CANDIDATES) -> list[SearchHit]:
    """The best ``limit`` messages, one hit per message; all sessions, or ``session_id``'s history.

    The pool ranked: the newest matches where every word stands alone (from ``words_fts``), then the
    newest of all matches (from the trigram index), every one checked on its text, until it holds
    ``candidates`` (at least ``4 × limit``), or ``limit`` once :data:`POOL_CHARS` of text was read.
    Ranked: exact matches first (:func:`tui.store.search.terms.exactness`), then by relevance
    (:func:`relevance`), then newest. Deterministic: counts, never the clock, bound the work."""
    members: set[int] | None = None
    id_range: tuple[int, int] | None = None
    if session_id is not None:
        members = _scope_members(connection, scope_of(session_id, rows))
        if not members:
            return []
        id_range = (min(members), max(members))  # one session's documents are close together
    want = max(candidates, limit * 4)
    terms = match.folded_terms
    pool: list[tuple[int, float, int, Row]] = []
    seen: set[int] = set()
    read = 0
    for words in (True, False):
        for page in candidate_pages(connection, match, words=words, id_range=id_range):
            fresh = [doc_id for doc_id in page if doc_id not in seen and (members is None or doc_id in members)]
            seen.update(fresh)
            for start in range(0, len(fresh), CHECK_BATCH):
                for doc, text, holds in checked(connection, match, fresh[start:start + CHECK_BATCH]):
                    read += len(text)
                    if holds:
                        pool.append((exactness(text, match.query), relevance(text, terms), -doc[0], doc))
                if len(pool) >= want or (read > POOL_CHARS and len(pool) >= limit):
                    return _best(pool, match, rows, limit, excerpts, root)
        if words and sum(tier < 2 for tier, *_ in pool) >= limit:
            # Every exact match is among the word index's candidates, all checked: a match inside a longer
            # word (tier 2) cannot rank above them.
            return _best(pool, match, rows, limit, excerpts, root)
    return _best(pool, match, rows, limit, excerpts, root)


def _best(pool: list[tuple[int, float, int, Row]], match: Match, rows: dict[str, IndexedSession], limit: int,
          excerpts: bool, root: Path | None) -> list[SearchHit]:
    pool.sort(key=lambda item: item[:3])
    best: dict[tuple[str, int], tuple[int, Row]] = {}
    for tier, score, _, doc in pool:
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


@dataclass
class SessionMatches:
    """What the picker shows: the first matching sessions in its order, each with its newest matching
    document, and how many match in all."""

    newest: dict[str, int]
    matching: int
    """Sessions known to match (all of those in ``newest``, and more beyond ``limit``)."""
    unchecked: int = 0
    """Sessions with candidates left unchecked (the count is "up to" ``matching + unchecked``)."""


def matching_sessions(connection: sqlite3.Connection, match: Match, *, order: Sequence[str] | None = None,
                      limit: int | None = None, skip: Collection[str] = (),
                      budget: int = SESSION_CHECK_CHARS, cancelled: Callable[[], bool] | None = None,
                      candidates: Sequence[tuple[int, str]] | None = None) -> SessionMatches:
    """Sessions with a match in what they recorded themselves, in ``order`` (then the rest, sorted), each with
    the document of its newest matching message: its candidates are checked newest first until one holds
    the query. The first ``limit`` matching sessions are always found; the rest are counted until
    ``budget`` characters of text were read. Sessions in ``skip`` (not indexed yet) are left out.
    Raises :class:`SearchCancelled` when ``cancelled()`` says so (checked between windows of sessions).
    ``candidates``: (document id, session) newest first, when the caller narrowed them already
    (:func:`tui.store.search.candidates.narrowed_candidate_sessions`); else the trigram index's."""
    owners: dict[str, list[int]] = {}
    if candidates is None:
        candidates = candidate_sessions(connection, match)
    for doc_id, session in candidates:  # newest first
        if session not in skip:  # a subagent's match is its session's
            owners.setdefault(owner_of(session), []).append(doc_id)
    listed = [session for session in order if session in owners] if order is not None else []
    known = set(listed)
    listed += sorted(session for session in owners if session not in known)
    newest: dict[str, int] = {}
    matching = read = 0
    step = min(CHECK_BATCH, max(limit, 1)) if limit is not None else CHECK_BATCH
    for start in range(0, len(listed), step):
        if limit is not None and matching >= limit and read > budget:
            return SessionMatches(newest, matching, len(listed) - start)
        if cancelled is not None and cancelled():
            raise SearchCancelled("the picker's filter changed")
        window = listed[start:start + step]
        found, spent = _newest_matches(connection, match, window, owners)
        read += spent
        for session in window:  # in list order
            if session in found:
                matching += 1
                if limit is None or len(newest) < limit:
                    newest[session] = found[session]
    return SessionMatches(newest, matching)


def _newest_matches(connection: sqlite3.Connection, match: Match, sessions: list[str],
                    owners: dict[str, list[int]]) -> tuple[dict[str, int], int]:
    """Each session's newest candidate that holds the query (the newest candidates of all of them checked
    together, then the next ones of those still open…), and the characters of text read."""
    found: dict[str, int] = {}
    read = depth = 0
    open_sessions = list(sessions)
    while open_sessions:
        holder = {owners[session][depth]: session for session in open_sessions}
        for doc, text, holds in checked(connection, match, list(holder)):
            read += len(text)
            if holds:
                found[holder[doc[0]]] = doc[0]
        depth += 1
        open_sessions = [session for session in open_sessions
                         if session not in found and depth < len(owners[session])]
    return found, read


def hits_for_docs(connection: sqlite3.Connection, match: Match, rows: dict[str, IndexedSession],
                  doc_ids: Sequence[int], *, root: Path | None = None) -> list[SearchHit]:
    """Hits (with snippets) for chosen documents, in the order given."""
    docs = read_docs(connection, doc_ids)
    return _hits([(*docs[doc_id], None) for doc_id in doc_ids if doc_id in docs], match, rows, root=root)


def _hits(chosen: list[Row], match: Match, rows: dict[str, IndexedSession], *, excerpts: bool = False,
          root: Path | None = None) -> list[SearchHit]:
    """``chosen``: (id, session, message, role, tool, path, text, score) rows."""
    children = _children(rows)
    terms = list(match.terms)
    hits: list[SearchHit] = []
    for _, session, message, role, tool, path, body, score in chosen:
        row = rows.get(owner_of(session))  # a subagent's hit is titled with its session's title
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
