"""``deep-tui rewind [--session ID] [N] [--code | --conversation] [--dry-run] [--force]``.

Without N: the session's restore points, newest first, with the files each prompt changed. With N (a prompt's
message number, as ``search`` numbers messages): the files back to how they were before it (``--code``), the
conversation forked at the message before it (``--conversation``), or both (the default). A file changed outside
deep-tui since the restore point stops the rewind with one line and exit status 2, nothing written, unless
``--force`` (take the snapshot's version of every file). ``--dry-run`` prints what would change and the diff.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from tui.base.errors import EXIT_FAILURE, EXIT_USAGE, UserFacingError
from tui.text.terminal_text import visible
from tui.text.wording import plural

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from tui.agent.rewind.restore import RestoreOutcome, RestorePlan, Rewinder
    from tui.base.paths import DataDir
    from tui.store import MessagesFile, SessionHandle, SessionStore


def run_rewind_command(args: argparse.Namespace, data_dir: DataDir, workdir: Path, *,
                       max_file_bytes: int | None = None) -> int:
    """Carry out ``rewind``; returns the exit status. ``max_file_bytes``: ``[rewind] max_file_mb``."""
    from tui.agent.rewind.restore import Rewinder, RewindError
    from tui.agent.rewind.shadow_repo import ShadowRepo
    from tui.store import SessionStore
    from tui.store.store_errors import StoreError

    store = SessionStore(data_dir)
    try:
        session_id = store.resolve(args.session) if args.session else store.newest()
        if session_id is None:
            raise UserFacingError(f"no sessions in {data_dir.sessions_dir}")
        repo = ShadowRepo(data_dir.root, workdir)
        rewinder = Rewinder(repo) if max_file_bytes is None else Rewinder(repo, max_file_bytes=max_file_bytes)
        if args.message is None:
            return _list(store, rewinder, session_id)
        meta = store.meta(session_id)
        if not 1 <= args.message <= max(1, meta.message_count + 1):
            raise UserFacingError(f"session {session_id} has {plural(meta.message_count, 'message')}; "
                                  f"there is no message {args.message}")
        if args.conversation:
            return _fork_only(store, session_id, args.message, dry_run=args.dry_run)
        return _restore(store, rewinder, session_id, args)
    except RewindError as error:
        raise UserFacingError(str(error)) from None
    except StoreError as error:
        raise UserFacingError(str(error)) from None


def _list(store: SessionStore, rewinder: Rewinder, session_id: str) -> int:
    from tui.store.checkpoints_file import CheckpointsFile

    records = CheckpointsFile(store.root / session_id / "checkpoints.jsonl").read()
    if not records:
        print(f"session {session_id} has no restore points (none of its prompts changed files)")
        return 0
    from tui.store import MessagesFile

    history = MessagesFile(store.root / session_id / "messages.json")
    for point in rewinder.points(records):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(point.record.time))
        what = {"restore": f"rewind ({point.record.detail})", "command": f"!{point.record.detail}"}.get(
            point.record.kind) or _prompt_text(history, point.message)
        files = ", ".join(visible(item.label()) for item in point.files[:6])
        more = f" and {len(point.files) - 6} more" if len(point.files) > 6 else ""
        print(f"message {point.message:<5} {when}  {visible(what)}: {files or 'no files changed'}{more}")
    return 0


def _prompt_text(history: MessagesFile, message: int) -> str:
    """The prompt recorded as ``message``, on one line, cut at 60 characters."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.text.message_text import typed_text

    try:
        loaded = history.load_range(message - 1, message)
    except (OSError, ValueError):
        return "prompt"
    for request in loaded:
        if isinstance(request, ModelRequest):
            for part in request.parts:
                if isinstance(part, UserPromptPart):
                    text = " ".join(visible(typed_text(part.content)).split())
                    return repr(text[:57] + "…" if len(text) > 60 else text)
    return "prompt"


def _fork_only(store: SessionStore, session_id: str, message: int, *, dry_run: bool) -> int:
    if dry_run:
        print(f"would fork session {session_id} at message {message - 1} (messages 1–{message - 1}); "
              "no file changes")
        return 0
    handle = store.fork(session_id, upto=message - 1)
    try:
        print(f"forked session {session_id} before message {message}: {handle.id} "
              f"(continue it with: deep-tui --resume {handle.id})")
    finally:
        handle.close()
    return 0


def _restore(store: SessionStore, rewinder: Rewinder, session_id: str, args: argparse.Namespace) -> int:
    from tui.agent.rewind.restore import conflict_line
    from tui.store.checkpoints_file import CheckpointsFile

    records = CheckpointsFile(store.root / session_id / "checkpoints.jsonl").read()
    plan = rewinder.plan(records, args.message)
    if args.dry_run:
        _print_plan(plan)
        print(rewinder.preview(plan))
        return 0
    if plan.conflicts and not args.force:
        print(f"deep-tui: error: {conflict_line(plan.conflicts, args.message)} (--dry-run shows the diff, --force "
              "takes the restore point's version of every file)", file=sys.stderr)
        return EXIT_USAGE
    both = not args.code
    handle = store.fork(session_id, upto=args.message - 1) if both else store.open(session_id)
    try:
        _seal_history(handle)
        outcome = _apply(rewinder, plan, handle, force=args.force, source_session=session_id)
    finally:
        handle.close()
    event = outcome.event
    print(f"restored {plural(event.count, 'file')} to how they were before message {args.message} "
          f"of session {session_id}")
    for path in event.kept:
        print(f"  kept yours: {visible(path)}")
    if both:
        print(f"the conversation continues in session {handle.id} (messages 1–{args.message - 1}): "
              f"deep-tui --resume {handle.id}")
    print(f"undo: deep-tui rewind --session {handle.id} {event.undo} --code")
    for failure in event.failed:
        print(f"deep-tui: not restored: {visible(failure)}", file=sys.stderr)
    return EXIT_FAILURE if event.failed else 0


def _apply(rewinder: Rewinder, plan: RestorePlan, handle: SessionHandle, *, force: bool,
           source_session: str) -> RestoreOutcome:
    from tui.agent.rewind.session_rewind import apply_plan, record_restore

    outcome = apply_plan(rewinder, plan, handle, force=force, source_session=source_session)
    record_restore(outcome, handle, record=lambda request: handle.append_messages([request]),
                   emit=lambda event: handle.events.append(event.to_record()))
    handle.flush_meta()
    return outcome


def _seal_history(handle: SessionHandle) -> None:
    """Close what a stopped turn left open before the rewind's note is appended (as the app does)."""
    from tui.agent.session.history_seal import seal

    count = handle.meta.message_count
    tail = list(handle.messages.load_range(max(0, count - 4), count))
    added = seal(tail, "the previous turn stopped before an answer came")
    if added:
        handle.append_messages(added)


def _print_plan(plan: RestorePlan) -> None:
    print(f"the files as they were before message {plan.point.message} "
          f"({plural(len(plan.changes), 'file')} would change):")
    for item in plan.files:
        print(f"  {visible(item.label())}")
    for path in plan.conflicts:
        print(f"  conflict: {visible(path)} was changed outside deep-tui since the restore point")
