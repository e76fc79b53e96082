"""``deep-tui export [ID] [--format md | json] [-o FILE]``: a session as a document to share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.errors import UserFacingError
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    import argparse

    from tui.base.paths import DataDir


def run_export_command(args: argparse.Namespace, data_dir: DataDir) -> int:
    """Print the export, or write it to ``-o FILE`` (atomically, no link followed) and say where."""
    from tui.base.atomic import write_atomic
    from tui.store import SessionStore
    from tui.store.export import export_session
    from tui.store.store_errors import StoreError

    store = SessionStore(data_dir)
    try:
        session_id = store.resolve(args.session) if args.session else store.newest()
        if session_id is None:
            raise UserFacingError(f"no sessions in {data_dir.root} to export")
        text = export_session(data_dir, session_id, args.format)
    except StoreError as error:
        raise UserFacingError(str(error)) from None
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    target = Path(args.output)
    try:
        write_atomic(target, text)
    except OSError as error:
        raise UserFacingError(f"cannot write {visible(str(target))}: {visible(str(error))}", exit_code=1) from None
    print(f"deep-tui: exported session {session_id} to {visible(str(target.resolve()))}", file=sys.stderr)
    return 0
