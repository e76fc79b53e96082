"""``deep-tui search QUERY [--session ID] [--json]``: find anything said in any session.

Brings the index up to date first (only what changed since it was last used; a rebuild
shows its progress on stderr), then prints ranked hits: session, message number, role,
title and a one-line snippet. Exit status 0 with hits, 1 with none (like grep), 2 for a
bad query or session id. Against an up-to-date index nothing here imports pydantic-ai
(the query answers in a fraction of a second).
"""

from __future__ import annotations

import gc
import json
import sys
import time
from typing import TYPE_CHECKING, TextIO

from tui.base.paths import DataDir
from tui.text.wording import message_number

if TYPE_CHECKING:
    import argparse

    from tui.store.search.search_outcome import IndexingProgress
    from tui.store.search.searcher import HistorySearch, SearchHit

PROGRESS_EVERY = 1.0
"""Seconds between two updates of the progress line on a terminal (ten times that between lines in a log)."""


def search_entry(args: argparse.Namespace) -> int:
    """``deep-tui search`` straight from the entry point: only the data directory matters, so no config file,
    project trust or model is read (each would cost the command's start-up, the most of its time)."""
    from tui.base.errors import UserFacingError
    from tui.base.log_setup import configure_logging

    data_dir = DataDir.resolve(getattr(args, "data_dir", None))
    unusable = data_dir.unusable_reason()
    if unusable:
        raise UserFacingError(unusable)
    configure_logging(data_dir.root, debug=bool(getattr(args, "debug", False)))
    from tui.store.search import searcher  # noqa: F401  (imported before the collector runs again)

    gc.freeze()  # what the start-up made lives as long as the process: the collector need not look at it again
    gc.enable()  # indexing a lot of changed history makes garbage
    return run_search_command(args, data_dir)


def run_search_command(args: argparse.Namespace, data_dir: DataDir) -> int:
    from tui.base.errors import UserFacingError
    from tui.store.search.searcher import HistorySearch, QueryTooShort
    from tui.store.session_ids import list_session_ids, resolve_prefix
    from tui.store.store_errors import StoreError

    query = " ".join(args.query).strip()
    if not query:
        raise UserFacingError("the query is empty")
    try:
        root = data_dir.sessions_dir
        session_id = resolve_prefix(list_session_ids(root), args.session, root) if args.session else None
    except StoreError as error:
        raise UserFacingError(str(error)) from None
    search = HistorySearch(data_dir)
    _bring_up_to_date(search, sys.stderr)
    try:
        outcome = search.search(query, session_id=session_id, limit=args.limit, sync_bytes=None)
        if session_id is not None and len(outcome.hits) < args.limit:  # what the session's subagents read and said
            outcome.hits += search.subagent_hits(query, session_id, limit=args.limit - len(outcome.hits))
    except QueryTooShort as error:
        raise UserFacingError(str(error)) from None
    except ValueError as error:
        raise UserFacingError(str(error)) from None
    finally:
        search.index.close()
    if outcome.notice:
        print(f"deep-tui: note: {outcome.notice}", file=sys.stderr)
    if args.json:
        print(json.dumps([_hit_record(hit) for hit in outcome.hits], indent=2, ensure_ascii=False))
    elif outcome.hits:
        _print_hits(outcome.hits, sys.stdout)
    else:
        where = f"session {session_id}" if session_id else "any session"
        print(f"no matches for {query!r} in {where}", file=sys.stderr)
    return 0 if outcome.hits else 1


def _bring_up_to_date(search: HistorySearch, err: TextIO) -> None:
    """Index what changed since the index was last used, showing progress when it is a lot (one line,
    rewritten in place on a terminal); once a day, look for damage anywhere in the index file first (a
    damaged index is rebuilt)."""
    from tui.store.search.index import CHECK_EVERY

    problem = search.index.check(max_age=CHECK_EVERY)
    damaged = problem is not None and problem.kind == "corrupt"
    if damaged:
        print(f"deep-tui: note: {problem}; rebuilding it", file=err, flush=True)
    in_place = err.isatty()
    every = PROGRESS_EVERY if in_place else PROGRESS_EVERY * 10
    last = 0.0
    seen: IndexingProgress | None = None

    def show(progress: IndexingProgress | None) -> None:
        nonlocal last, seen
        now = time.monotonic()
        if progress is None:
            if seen is not None:
                done = f"deep-tui: indexed {seen.total / 1e6:.0f} MB in {now - seen.started:.1f} s"
                print(f"\r\x1b[K{done}" if in_place else done, file=err, flush=True)
            return
        if seen is not None and progress.done < progress.total and now - last < every:
            return
        last, seen = now, progress
        line = f"deep-tui: {progress.describe()}"
        print(f"\r\x1b[K{line}" if in_place else line, end="" if in_place else "\n", file=err, flush=True)

    search.refresh(on_indexing=show, reason="the index was damaged" if damaged else None)


def _hit_record(hit: SearchHit) -> dict[str, object]:
    from tui.store.search.terms import plain_snippet

    return {"session": hit.owner, "subagent": hit.subagent, "title": hit.title, "message": message_number(hit.message),
            "role": hit.role,
            "tool": hit.tool,
            "saved_output": hit.path, "snippet": plain_snippet(hit.snippet, "", ""),
            "highlighted": plain_snippet(hit.snippet), "forks": list(hit.forks), "score": hit.score}


def _print_hits(hits: list[SearchHit], out: TextIO) -> None:
    from tui.store.search.terms import clean, plain_snippet

    bold, plain = ("\x1b[1m", "\x1b[0m") if out.isatty() else ("«", "»")
    for hit in hits:
        role = clean(hit.role if hit.tool is None else f"{hit.role} {hit.tool}")
        print(f"{hit.session}  message {message_number(hit.message):<5}  {role:<16}  {clean(hit.title)}", file=out)
        if hit.forks:
            print(f"    also in fork{'s' if len(hit.forks) > 1 else ''}: {', '.join(hit.forks)}", file=out)
        if hit.path:
            print(f"    saved output: {clean(hit.path)}", file=out)
        print(f"    {plain_snippet(hit.snippet, bold, plain)}", file=out)
