"""The linear scan: search messages.json files directly, without the index.

Used for sessions the index has not caught up with yet, and for everything when the
index cannot be used (corrupt, locked by another deep-tui, read-only disk). It finds
what the index finds (the same pieces of each message, the same AND of words, the same
fork attribution), just slower; hits come newest first. No Textual here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

from tui.base.metadata_keys import EVICTED_PATH_KEY
from tui.base.nofollow import read_bytes
from tui.base.paths import DataDir
from tui.store.meta import ParentRef, read_meta, title_from
from tui.store.search.database import IndexedSession
from tui.store.search.history_reader import load_history_from
from tui.store.search.queries import SearchHit, saved_path, sharing_forks
from tui.store.search.subagent_index_rows import owner_of, subagent_key
from tui.store.search.terms import fold, make_excerpt, make_snippet, matches
from tui.store.store_errors import CorruptSessionError
from tui.store.subagent_histories import subagent_numbers

logger = logging.getLogger(__name__)

_EVICTED_MARK = EVICTED_PATH_KEY.encode()


@dataclass(frozen=True)
class ScanTarget:
    """A session to scan, from message ``own_from`` on (a fork's copied prefix belongs to ``parent``)."""

    session: str
    own_from: int = 0
    parent: str | None = None


def _meta(data_dir: DataDir, session_id: str) -> tuple[str, ParentRef | None, float]:
    path = data_dir.session_dir(session_id) / "session.json"
    try:
        meta = read_meta(path, session_id)
        return meta.title, meta.parent, meta.updated
    except (ValueError, TypeError, KeyError, OSError):
        try:
            return "", None, os.stat(data_dir.session_dir(session_id) / "messages.json").st_mtime
        except OSError:
            return "", None, 0.0


def all_targets(data_dir: DataDir) -> list[ScanTarget]:
    """Every session, newest first, each fork from where it stops sharing its parent's history, each followed by
    its subagents' histories (newest first)."""
    root = data_dir.sessions_dir
    try:
        names = [entry.name for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return []
    found: list[tuple[float, ScanTarget]] = []
    for name in names:
        if not (root / name / "messages.json").exists():
            continue
        _, parent, updated = _meta(data_dir, name)
        if parent is not None and parent.session != name and (root / parent.session / "messages.json").exists():
            target = ScanTarget(name, max(0, parent.index or 0), parent.session)
        else:
            target = ScanTarget(name)
        found.append((updated, target))
    found.sort(key=lambda item: item[0], reverse=True)
    return [each for _, target in found for each in (target, *subagent_targets(data_dir, target.session))]


def subagent_targets(data_dir: DataDir, session_id: str) -> list[ScanTarget]:
    """The subagent histories of ``session_id``, newest first (none when it has none; no link followed)."""
    try:
        numbers = subagent_numbers(data_dir.session_dir(session_id))
    except OSError:
        return []
    return [ScanTarget(subagent_key(session_id, number)) for number in reversed(numbers)]


def _could_match(data: bytes, folded_terms: list[str]) -> bool:
    """A cheap pre-check on the raw file; JSON escapes make it unreliable for some terms, and saved
    outputs live in other files, so those cases always go on to a full read."""
    if _EVICTED_MARK in data:
        return True
    if any(character in term for term in folded_terms for character in '"\\'):
        return True
    text = fold(data.decode("utf-8", errors="replace"))
    return all(term in text for term in folded_terms)


def scan(data_dir: DataDir, targets: Iterable[ScanTarget], terms: list[str], *, limit: int,
         per_session: int | None = None, excerpts: bool = False) -> list[SearchHit]:
    """Matching messages of ``targets`` (in the order given, newest message first within each)."""
    targets = list(targets)
    if not targets:
        return []
    from tui.store.search.searchable_text import message_docs  # pydantic-ai: only when files are read

    folded_terms = [fold(term) for term in terms]
    hits: list[SearchHit] = []
    lineage = {target.session: IndexedSession(target.session, "", target.parent, target.own_from, 0, 0, 0, 0)
               for target in targets}
    for target in targets:
        path = data_dir.session_dir(target.session) / "messages.json"
        try:
            data = read_bytes(path)
        except OSError as error:
            logger.debug("scan: cannot read %s: %s", path, error)
            continue
        if not _could_match(data, folded_terms):
            continue
        try:
            messages, _ = load_history_from(path, 0)
        except CorruptSessionError as error:
            logger.warning("scan: %s", error)
            continue
        title, _, _ = _meta(data_dir, owner_of(target.session))  # a subagent's: its session's title
        title = title or title_from(messages[:4]) or target.session
        found = 0
        for index in range(len(messages) - 1, target.own_from - 1, -1):
            for doc in message_docs(messages[index], data_dir.large_results_dir):
                if matches(fold(doc.text), folded_terms):
                    hits.append(SearchHit(session=target.session, title=title, message=index, role=doc.role,
                                          snippet=make_snippet(doc.text, terms), tool=doc.tool,
                                          path=saved_path(doc.path, data_dir.root),
                                          forks=sharing_forks(target.session, index, lineage),
                                          excerpt=make_excerpt(doc.text, terms) if excerpts else ""))
                    found += 1
                    break
            if len(hits) >= limit or (per_session is not None and found >= per_session):
                break
        if len(hits) >= limit:
            break
    return hits


def session_chain(data_dir: DataDir, session_id: str) -> list[str]:
    """``session_id`` and its ancestors on disk (from session.json parent links)."""
    chain = [session_id]
    current = session_id
    while True:
        _, parent, _ = _meta(data_dir, current)
        if parent is None or parent.session in chain or not data_dir.session_dir(parent.session).is_dir():
            return chain
        chain.append(parent.session)
        current = parent.session


