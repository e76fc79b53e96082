"""Search every session's history: the index when it can be used, a linear scan when it cannot.

:class:`HistorySearch` is what the agent's tool, the session picker and ``deep-tui search``
use. Searching never fails because of the index: a corrupt index is removed and rebuilt,
one locked by another deep-tui or on a read-only disk is bypassed, and sessions the index
has not caught up with are scanned directly — each time with a ``notice`` saying so.
No Textual here.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tui.base.paths import DataDir
from tui.store.meta import ParentRef
from tui.store.search.candidates import narrowed_candidate_sessions
from tui.store.search.database import DEFAULT_TOKENIZER, IndexedSession, read_rows
from tui.store.search.giving_way import GiveWay
from tui.store.search.index import QUERY_BUSY_MS, Progress, SearchIndex, SyncReport
from tui.store.search.index_problems import IndexProblem
from tui.store.search.index_writer import IndexWriter
from tui.store.search.queries import (
    Match,
    QueryTooShort,
    SearchCancelled,
    SearchHit,
    build_match,
    hits_for_docs,
    matching_sessions,
    ranked_hits,
)
from tui.store.search.scan import ScanTarget, all_targets, scan, session_chain
from tui.store.search.search_outcome import IndexingProgress, SearchOutcome, pending_notice, problem_notice
from tui.store.search.session_folders import DiskSession
from tui.store.search.terms import parse_query
from tui.store.search.vocabulary import Vocabulary
from tui.store.subagent_histories import SUBAGENTS_DIR_NAME, subagent_numbers

if TYPE_CHECKING:
    from concurrent.futures import Future

    from pydantic_ai.messages import ModelMessage

logger = logging.getLogger(__name__)

__all__ = ["HistorySearch", "IndexingProgress", "QueryTooShort", "SearchCancelled", "SearchHit", "SearchOutcome"]

QUERY_SYNC_BYTES = 8_000_000
"""Before the first query of a process, at most this much changed history is indexed; the rest is scanned."""
REFRESH_AFTER = 30.0
"""A query made this many seconds after the last look at the disk starts a refresh in the background
(for histories written by other programs: deep-tui processes index their own messages as they append);
a query itself never looks at every session folder."""
WORD_LIST_STALE_SESSIONS = 20
WORD_LIST_STALE_AFTER = 60.0
"""The picker's word list is read again (in the background) once this many sessions were indexed since it
was read, or when any was and it is this many seconds old: their pieces are checked through the trigram
index meanwhile."""


SUBAGENTS_SCANNED = 50
"""A session's newest subagents whose histories a search reads (they are not in the index)."""

INDEXING_NOTE_BYTES = 20_000_000
"""A refresh with this much history to index (a rebuild, a first run) shows its progress."""


def _record_logging_failure(index: SearchIndex, session_id: str, first: int, messages: Sequence[ModelMessage], *,
                            title: str, parent: ParentRef | None) -> bool:
    """``SearchIndex.record`` in the writer thread. It reports index trouble itself; anything else raised is logged
    here, before the write counts as done (the next search catches the session up from messages.json)."""
    try:
        return index.record(session_id, first, messages, title=title, parent=parent)
    except Exception:
        logger.exception("indexing recorded messages failed; the next search catches up from messages.json")
        return False


class HistorySearch:
    """Search over one data directory's sessions (thread-safe; one per process is enough)."""

    def __init__(self, data_dir: DataDir, *, tokenizer: str = DEFAULT_TOKENIZER) -> None:
        self.data_dir = data_dir
        self.index = SearchIndex(data_dir, tokenizer=tokenizer)
        self.busy_ms = QUERY_BUSY_MS
        """How long a search waits for an index another deep-tui is writing before scanning the files."""
        self._synced_at: float | None = None
        """``time.monotonic()`` of the last pass over every session folder (``None``: none yet)."""
        self._listing: int | None = None
        """The sessions folder's mtime at that pass: it changes when a session is created or deleted."""
        self._refreshing = threading.Lock()
        self._background: threading.Thread | None = None
        self.indexing: IndexingProgress | None = None
        """A large refresh under way (``None`` otherwise): the picker says how far it has got."""
        self._writer = IndexWriter()
        self.give_way = GiveWay()  # held while a session opens: the background refresh waits meanwhile
        self._vocabulary: Vocabulary | None = None
        """The index's word list, for the picker (:mod:`tui.store.search.vocabulary`); ``None`` until read."""
        self._vocabulary_lock = threading.Lock()
        self._vocabulary_reader: threading.Thread | None = None

    @property
    def tokenizer(self) -> str:
        return self.index.db.tokenizer

    # -- keeping the index current (delegates; none of these raise) -------------------------

    def record(self, session_id: str, first: int, messages: Sequence[ModelMessage], *, title: str,
               parent: ParentRef | None) -> bool:
        return self.index.record(session_id, first, messages, title=title, parent=parent)

    def record_soon(self, session_id: str, first: int, messages: Sequence[ModelMessage], *, title: str,
                    parent: ParentRef | None) -> Future[bool]:
        """:meth:`record` in the index's writer thread, in the order asked, so the turn that recorded the messages
        never waits for the index (a large command's saved output takes a tenth of a second and more to index).
        Searches, renames and forgets wait for what is queued before them, so they see every message recorded
        earlier; the messages are in messages.json already, so an index write that never happens (the process
        killed) is caught up from there by the next search."""
        return self._writer.submit(_record_logging_failure, self.index, session_id, first, list(messages),
                                   title=title, parent=parent)

    def wait_for_records(self, timeout: float | None = None) -> bool:
        """Wait until every :meth:`record_soon` asked so far is written (or has failed); False on ``timeout``."""
        return self._writer.wait(timeout)

    def forget(self, session_id: str) -> bool:
        self.wait_for_records()
        self._listing = None  # its forks are re-indexed on the next query
        return self.index.forget(session_id)

    def rename(self, session_id: str, title: str) -> bool:
        self.wait_for_records()  # a queued record writes the title it was given: not after this one
        return self.index.rename(session_id, title)

    def refresh(self, *, check: bool = False, progress: Progress | None = None,
                on_indexing: Callable[[IndexingProgress | None], None] | None = None,
                reason: str | None = None, giving_way: bool = False) -> SyncReport:
        """Bring the whole index up to date (a background thread in the app; the CLI before a query).
        ``check``: look for damage in the whole file first (quick_check), rebuilding a damaged index.
        ``on_indexing``: told how far a large refresh (:data:`INDEXING_NOTE_BYTES` or more) has got, and
        ``None`` when it is over; :attr:`indexing` holds the same meanwhile. ``reason``: why the caller
        knows everything is indexed again (it found the file damaged). ``giving_way``: wait while
        :attr:`give_way` holds (the background refresh)."""
        self.wait_for_records()
        with self._refreshing:
            if giving_way:
                self.give_way.wait()  # before the whole-file check, too
            if check:
                problem = self.index.check()
                if problem is not None and problem.kind == "corrupt":
                    reason = "the index was damaged"
            listing = self._listing_stamp()
            started = time.monotonic()
            shown = False

            def track(done: int, total: int) -> None:
                nonlocal shown
                if progress is not None:
                    progress(done, total)
                if total >= INDEXING_NOTE_BYTES:
                    shown = True
                    self.indexing = IndexingProgress(done, total, started, reason or self._replaced_reason())
                    if on_indexing is not None:
                        on_indexing(self.indexing)

            try:
                report = self.index.sync(progress=track, give_way=self.give_way if giving_way else None)
                if report.problem is None:
                    self.index.db.replaced_version = None  # said once
            finally:
                if shown:
                    self.indexing = None
                    if on_indexing is not None:
                        on_indexing(None)
            self._synced_at, self._listing = time.monotonic(), listing
            return report

    def _replaced_reason(self) -> str | None:
        if self.index.db.replaced_version is None:
            return None
        return "the index was made by another version of deep-tui"

    def start_refresh(self, *, check: bool = True,
                      on_indexing: Callable[[IndexingProgress | None], None] | None = None) -> threading.Thread:
        """:meth:`refresh` in a daemon thread (the app calls this once its first session is open; it also
        checks the whole index file for damage then). ``on_indexing`` is called from that thread."""
        thread = threading.Thread(target=self._refresh_quietly, args=(check, on_indexing), name="deep-tui-index",
                                  daemon=True)
        self._background = thread
        thread.start()
        return thread

    def _refresh_quietly(self, check: bool, on_indexing: Callable[[IndexingProgress | None], None] | None) -> None:
        report = self.refresh(check=check, on_indexing=on_indexing, giving_way=True)
        if report.problem is not None:
            logger.warning("search index refresh stopped: %s", report.problem)

    def _listing_stamp(self) -> int | None:
        try:
            return self.data_dir.sessions_dir.stat().st_mtime_ns
        except OSError:
            return None

    def _catch_up(self, sync_bytes: int | None) -> SyncReport:
        """Before a query: index what changed (within ``sync_bytes``) when this process has not looked at
        the session folders yet or a session was created or deleted since (one stat tells); otherwise rely
        on the index — every deep-tui indexes what it appends — and, when the last look is old, refresh it
        in the background for histories other programs wrote."""
        listing = self._listing_stamp()
        if self._synced_at is None or listing is None or listing != self._listing:
            report = self.index.sync(byte_budget=sync_bytes, busy_ms=self.busy_ms)
            if not report.pending and report.problem is None:
                self._synced_at, self._listing = time.monotonic(), listing
            return report
        stale = time.monotonic() - self._synced_at > REFRESH_AFTER
        if stale and (self._background is None or not self._background.is_alive()):
            self._synced_at = time.monotonic()
            self.start_refresh(check=False)
        return SyncReport()

    # -- searching ---------------------------------------------------------------------------

    def search(self, query: str, *, session_id: str | None = None, limit: int = 10,
               sync_bytes: int | None = QUERY_SYNC_BYTES, excerpts: bool = False) -> SearchOutcome:
        """The best ``limit`` hits in every session, or in ``session_id``'s history (with what a fork
        inherited from its parent). Raises ``ValueError`` for an empty query, :class:`QueryTooShort`."""
        parsed = parse_query(query)
        terms = list(parsed.terms)
        if not terms:
            raise ValueError("the query is empty")
        self.wait_for_records()
        match = build_match(parsed, self.tokenizer)
        if session_id is not None:  # its own folder and its ancestors': a few stat calls
            chain = session_chain(self.data_dir, session_id)
            report = self.index.sync(chain, byte_budget=sync_bytes, busy_ms=self.busy_ms)
        else:
            chain = None
            report = self._catch_up(sync_bytes)
        try:
            connection = self.index.connection(self.busy_ms)
            rows = read_rows(connection)
            hits = ranked_hits(connection, match, rows, session_id=session_id, limit=limit, excerpts=excerpts,
                               root=self.data_dir.root)
        except (sqlite3.Error, IndexProblem) as error:
            problem = self.index.fail(error)
            return self._scan_everything(terms, session_id, limit, problem, excerpts=excerpts)
        if session_id is not None and any(found.id in (chain or []) for found in report.pending):
            targets = [ScanTarget(session_id)]  # its own file holds the inherited prefix too
            hits = scan(self.data_dir, targets, terms, limit=limit, excerpts=excerpts)
            return SearchOutcome(hits, pending_notice(report.problem, 1), scanned_sessions=1)
        if report.pending:
            hits = self._merge_pending(hits, report.pending, terms, limit, excerpts)
        notice = pending_notice(report.problem, len(report.pending)) if report.pending else None
        return SearchOutcome(hits, notice, scanned_sessions=len(report.pending))

    def subagent_hits(self, query: str, session_id: str, *, limit: int = 10, excerpts: bool = False) -> list[SearchHit]:
        """Matches in the histories of ``session_id``'s subagents (``sessions/<id>/subagents/<n>/``), newest
        subagent first, found by reading their files (at most :data:`SUBAGENTS_SCANNED` of them); each hit's
        ``session`` is ``<id>/subagents/<n>``. Raises as :meth:`search` does for an empty or too short query."""
        parsed = parse_query(query)
        terms = list(parsed.terms)
        if not terms:
            raise ValueError("the query is empty")
        build_match(parsed, self.tokenizer)  # the same refusal of a too short query as the index gives
        numbers = subagent_numbers(self.data_dir.session_dir(session_id))[-SUBAGENTS_SCANNED:]
        targets = [ScanTarget(f"{session_id}/{SUBAGENTS_DIR_NAME}/{number}") for number in reversed(numbers)]
        return scan(self.data_dir, targets, terms, limit=limit, excerpts=excerpts)

    def session_hits(self, query: str, *, order: Sequence[str] | None = None, limit: int | None = None,
                     sync_bytes: int | None = 2_000_000, scan_bytes: int = 4_000_000,
                     cancelled: Callable[[], bool] | None = None) -> SearchOutcome:
        """For the picker: the sessions whose history matches, each with its newest matching message.

        ``order``: the sessions as listed (hits are made for the first ``limit`` matching ones in that
        order; ``matching_sessions`` counts them all). The disk is looked at as for :meth:`search`; changed
        sessions beyond ``sync_bytes`` are scanned directly up to ``scan_bytes``, past that the outcome is
        ``incomplete`` (the background refresh indexes them). Raises :class:`SearchCancelled` when
        ``cancelled()`` says the answer is no longer wanted.
        """
        parsed = parse_query(query)
        terms = list(parsed.terms)
        if not terms:
            return SearchOutcome([])
        self.wait_for_records()
        match = build_match(parsed, self.tokenizer)
        report = self._catch_up(sync_bytes)
        try:
            connection = self.index.connection(self.busy_ms)
            rows = read_rows(connection)
            pending_ids = {pending.id for pending in report.pending}
            found_sessions = matching_sessions(connection, match, order=order, limit=limit, skip=pending_ids,
                                               cancelled=cancelled, candidates=self._narrowed(connection, match, rows))
            newest = found_sessions.newest
        except (sqlite3.Error, IndexProblem) as error:
            problem = self.index.fail(error)
            outcome = self._scan_everything(terms, None, 10_000, problem, per_session=1)
            outcome.by_session = {hit.owner: hit for hit in reversed(outcome.hits)}
            outcome.matching_sessions = len(outcome.by_session)
            return outcome
        affordable, spent = [], 0
        for pending in sorted(report.pending, key=lambda item: item.size):
            if spent + pending.size > scan_bytes:
                break
            affordable.append(pending)
            spent += pending.size
        scanned = {hit.owner: hit for hit in scan(self.data_dir, self._targets_for(affordable), terms,
                                                    limit=10_000, per_session=1)}  # a subagent's: its session's
        listed = [session for session in (order if order is not None else sorted(newest) + sorted(scanned))
                  if session in newest or session in scanned]
        chosen = listed[:limit] if limit is not None else listed
        indexed = hits_for_docs(connection, match, rows, [newest[session] for session in chosen if session in newest],
                                root=self.data_dir.root)
        found = {hit.owner: hit for hit in indexed}
        found.update({session: scanned[session] for session in chosen if session in scanned})
        by_session = {session: found[session] for session in chosen if session in found}
        incomplete = len(affordable) < len(report.pending)
        notice = None
        if report.problem is not None:
            notice = problem_notice(report.problem, len(affordable))
        elif incomplete:
            notice = f"indexing {len(report.pending) - len(affordable)} sessions; their contents are not searched yet"
        return SearchOutcome(list(by_session.values()), notice, scanned_sessions=len(affordable),
                             incomplete=incomplete, by_session=by_session,
                             matching_sessions=found_sessions.matching + len(set(scanned) - set(newest)),
                             unchecked_sessions=found_sessions.unchecked)

    # -- the picker's word list ----------------------------------------------------------------

    def prepare_session_search(self) -> threading.Thread | None:
        """Read the index's word list in a daemon thread (unless a read is under way), so that the picker's
        queries check only the pieces that can match; the picker calls this when it opens, and
        :meth:`session_hits` when the list is missing or out of date. ``None`` when there is no index yet."""
        if not self.index.path.exists():
            return None
        with self._vocabulary_lock:
            reader = self._vocabulary_reader
            if reader is not None and reader.is_alive():
                return reader
            reader = threading.Thread(target=self._read_word_list_apart, name="deep-tui-word-list", daemon=True)
            self._vocabulary_reader = reader
            reader.start()
        return reader

    def read_word_list(self) -> bool:
        """Read the word list now (in the calling thread); False when the index could not be read."""
        try:
            vocabulary = Vocabulary.read(self.index.connection(self.busy_ms), self.index.path)
        except (sqlite3.Error, IndexProblem) as error:
            logger.info("the picker's word list could not be read (queries check every candidate): %s", error)
            return False
        self._vocabulary = vocabulary
        return True

    def _read_word_list_apart(self) -> None:
        try:
            self.read_word_list()
        finally:  # this thread's connection is not used again
            self.index.db.drop_connection()

    def _narrowed(self, connection: sqlite3.Connection, match: Match,
                  rows: dict[str, IndexedSession]) -> list[tuple[int, str]] | None:
        """The picker's candidates through the word list (``None``: take the trigram index's)."""
        vocabulary = self._vocabulary
        if vocabulary is None or not vocabulary.covers(self.index.path):
            self.prepare_session_search()
            return None
        expression = vocabulary.expression(match.query)
        uncovered = vocabulary.uncovered(rows)
        if len(uncovered) >= WORD_LIST_STALE_SESSIONS or (
                uncovered and time.monotonic() - vocabulary.read_at > WORD_LIST_STALE_AFTER):
            self.prepare_session_search()
        if expression is None:
            return None
        return narrowed_candidate_sessions(connection, match, expression, uncovered)

    # -- helpers -----------------------------------------------------------------------------

    def _targets_for(self, pending: Sequence[DiskSession]) -> list[ScanTarget]:
        if not pending:
            return []
        wanted = {found.id for found in pending}
        return [target for target in all_targets(self.data_dir) if target.session in wanted]

    def _merge_pending(self, hits: list[SearchHit], pending: Sequence[DiskSession], terms: list[str],
                       limit: int, excerpts: bool) -> list[SearchHit]:
        stale = {found.id for found in pending}
        kept = [hit for hit in hits if hit.session not in stale]
        scanned = scan(self.data_dir, self._targets_for(pending), terms, limit=limit, excerpts=excerpts)
        share = min(len(scanned), max(limit // 2, limit - len(kept)))
        return kept[:limit - share] + scanned[:share]

    def _scan_everything(self, terms: list[str], session_id: str | None, limit: int, problem: IndexProblem,
                         per_session: int | None = None, excerpts: bool = False) -> SearchOutcome:
        targets = [ScanTarget(session_id)] if session_id is not None else all_targets(self.data_dir)
        hits = scan(self.data_dir, targets, terms, limit=limit, per_session=per_session, excerpts=excerpts)
        return SearchOutcome(hits, problem_notice(problem, len(targets)), scanned_sessions=len(targets))
