"""``deep-tui sessions``: list, rename and delete sessions from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import time

from tui.paths import DataDir


def run_sessions_command(args: argparse.Namespace, data_dir: DataDir) -> int:
    """Carry out ``sessions [--json] | rename ID TITLE | delete ID [--yes]``."""
    from tui.launch import UserFacingError
    from tui.store import SessionStore
    from tui.store.errors import StoreError

    store = SessionStore(data_dir)
    try:
        if args.sessions_command == "rename":
            session_id = store.resolve(args.session)
            title = " ".join(args.title).strip()
            if not title:
                raise UserFacingError("the new title is empty")
            store.rename(session_id, title)
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
            print(f"deleted {session_id}")
            return 0
        return _list(store, as_json=args.json)
    except StoreError as error:
        raise UserFacingError(str(error)) from None


def _list(store: object, *, as_json: bool) -> int:
    sessions = store.list_sessions()  # type: ignore[attr-defined]
    rows = [
        {
            "id": meta.id,
            "title": meta.title,
            "updated": meta.updated,
            "messages": meta.message_count,
            "tokens": meta.last_usage.tokens if meta.last_usage else None,
            "model": meta.model,
            "parent": meta.parent.session if meta.parent else None,
        }
        for meta in sessions
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no sessions yet (start one with: deep-tui)")
        return 0
    print(f"{'ID':<12}  {'UPDATED':<16}  {'MSGS':>5}  {'TOKENS':>7}  {'PARENT':<12}  TITLE")
    for row in rows:
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated"]))
        tokens = "" if row["tokens"] is None else str(row["tokens"])
        parent = row["parent"] or ""
        print(f"{row['id']:<12}  {updated:<16}  {row['messages']:>5}  {tokens:>7}  {parent:<12}  {row['title']}")
    return 0
