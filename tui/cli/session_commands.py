"""``deep-tui sessions``: list, rename and delete sessions from the shell."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from tui.base.config import OFFLINE_MODEL_NAME
from tui.text.cost_text import totals_label

if TYPE_CHECKING:
    import argparse

    from tui.base.paths import DataDir
    from tui.store.cost_totals import CostTotals
    from tui.store.search.searcher import HistorySearch


def run_sessions_command(args: argparse.Namespace, data_dir: DataDir) -> int:
    """Carry out ``sessions [--json] | rename ID TITLE | delete ID [--yes] | prune``."""
    from tui.base.errors import UserFacingError
    from tui.store import SessionStore
    from tui.store.store_errors import StoreError

    store = SessionStore(data_dir)
    try:
        if args.sessions_command == "rename":
            session_id = store.resolve(args.session)
            title = " ".join(args.title).strip()
            if not title:
                raise UserFacingError("the new title is empty")
            store.rename(session_id, title)
            _search(data_dir).rename(session_id, store.meta(session_id).title)
            print(f"renamed {session_id} to {title!r}")
            return 0
        if args.sessions_command == "delete":
            session_id = store.resolve(args.session)
            if not args.yes:
                if not sys.stdin.isatty():
                    raise UserFacingError(f"refusing to delete {session_id} without --yes (no terminal to ask)")
                answer = input(f"delete session {session_id}? this cannot be undone [y/N] ")
                if answer.strip().lower() not in {"y", "yes"}:
                    print("not deleted")
                    return 1
            store.delete(session_id)
            _search(data_dir).forget(session_id)
            _forget_restore_points(data_dir, session_id)
            print(f"deleted {session_id}")
            return 0
        if args.sessions_command == "prune":
            return _prune(store, data_dir)
        return _list(store, as_json=args.json)
    except StoreError as error:
        raise UserFacingError(str(error)) from None


def _forget_restore_points(data_dir: DataDir, session_id: str) -> None:
    """The deleted session's snapshots go too (a failure is said, the session is deleted all the same)."""
    from tui.agent.rewind.maintenance import forget_session
    from tui.agent.rewind.shadow_repo import ShadowRepoError

    try:
        forget_session(data_dir.root, session_id)
    except (OSError, ShadowRepoError) as error:
        print(f"deep-tui: its restore points stay in {data_dir.root / 'checkpoints'} ({error}); "
              "'deep-tui sessions prune' removes them", file=sys.stderr)


def _prune(store: object, data_dir: DataDir) -> int:
    from tui.agent.rewind.maintenance import prune
    from tui.agent.rewind.shadow_repo import ShadowRepoError
    from tui.base.errors import UserFacingError

    live = {meta.id for meta in store.list_sessions()}  # type: ignore[attr-defined]
    try:
        report = prune(data_dir.root, live)
    except (OSError, ShadowRepoError) as error:
        raise UserFacingError(f"could not prune {data_dir.root / 'checkpoints'}: {error}") from None
    print(f"removed the restore points of {report.sessions} deleted sessions; {data_dir.root / 'checkpoints'} "
          f"holds {report.bytes_after / 1e6:.1f} MB (was {report.bytes_before / 1e6:.1f} MB)")
    return 0


def _search(data_dir: DataDir) -> HistorySearch:
    from tui.store.search.searcher import HistorySearch

    return HistorySearch(data_dir)


def _list(store: object, *, as_json: bool) -> int:
    sessions = store.list_sessions()  # type: ignore[attr-defined]
    rows = [
        {
            "id": meta.id,
            "title": meta.title,
            "updated": meta.updated,
            "messages": meta.message_count,
            "tokens": meta.last_usage.tokens if meta.last_usage else None,
            "cost": _cost_record(meta.cost),
            "model": meta.model,
            "parent": meta.parent.session if meta.parent else None,
            "restore_points": meta.restore_points,
            "restores": meta.restores,
        }
        for meta in sessions
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no sessions yet (start one with: deep-tui)")
        return 0
    print(f"{'ID':<12}  {'UPDATED':<16}  {'MSGS':>5}  {'TOKENS':>7}  {'COST':>14}  {'PARENT':<12}  TITLE")
    for row, meta in zip(rows, sessions, strict=True):
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated"]))
        tokens = "" if row["tokens"] is None else str(row["tokens"])
        parent = row["parent"] or ""
        cost = totals_label(meta.cost, offline=meta.model == OFFLINE_MODEL_NAME)
        print(f"{row['id']:<12}  {updated:<16}  {row['messages']:>5}  {tokens:>7}  {cost:>14}  {parent:<12}  "
              f"{row['title']}")
    return 0


def _cost_record(cost: CostTotals | None) -> dict[str, object] | None:
    """The session's cost for ``--json``: USD sums, what is not priced, and the label the table shows.

    When none of its requests could be priced (the table's "price unknown"), the USD figures are
    ``null``, never 0.0: nothing is known about what it cost."""
    if cost is None:
        return None
    unknown = cost.requests == 0 and (cost.unpriced_requests > 0 or cost.since is not None)

    def usd(value: float) -> float | None:
        return None if unknown else round(value, 6)

    return {"usd": usd(cost.total_usd), "label": totals_label(cost), "input_usd": usd(cost.input_usd),
            "cached_input_usd": usd(cost.cached_input_usd), "output_usd": usd(cost.output_usd),
            "summarizer_usd": usd(cost.summarizer_usd), "requests": cost.requests,
            "unpriced_requests": cost.unpriced_requests, "complete": cost.complete}
