"""A rewind of one session's files, as the app and ``deep-tui rewind`` both make it.

The files as they are now become the restore point of the message recording the rewind (so ``rewind`` of that
number undoes it); the files are written; a note joins the conversation (the model reads, with the next
prompt, that the files went back); the event log records the restore; session.json counts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic_ai.messages import ModelRequest, UserPromptPart

from tui.agent.rewind.restore import ConflictChoice, RestoreOutcome, RestorePlan, Rewinder
from tui.base.metadata_keys import REWIND_KEY
from tui.chain.events import FilesRestored
from tui.store import SessionHandle
from tui.text.wording import plural


def rewind_request(event: FilesRestored) -> ModelRequest:
    """The request recording a rewind: what the model reads with the next prompt."""
    files = ", ".join(event.files[:20]) + (" …" if event.count > 20 else "")
    text = (f"[deep-tui] The user rewound the working directory's files to how they were before message "
            f"{event.message}: {plural(event.count, 'file')} restored ({files or 'none'}). Changes made to them "
            "since then are undone; read a file again before editing it.")
    if event.kept:
        text += f" The user kept their own version of: {', '.join(event.kept[:20])}."
    return ModelRequest(parts=[UserPromptPart(text)], metadata={REWIND_KEY: {
        "message": event.message, "session": event.source_session, "count": event.count, "undo": event.undo}})


def apply_plan(rewinder: Rewinder, plan: RestorePlan, handle: SessionHandle, *,
               choices: Mapping[str, ConflictChoice] | None = None, force: bool = False,
               source_session: str | None = None) -> RestoreOutcome:
    """Restore ``plan``'s files for ``handle``'s session (blocking: run it in a thread); then
    :func:`record_restore`. Raises ``RewindError`` (nothing written) for an unanswered conflict."""
    return rewinder.apply(plan, checkpoints=handle.checkpoints, session_id=handle.id,
                          undo_message=handle.meta.message_count + 1, choices=choices, force=force,
                          source_session=source_session, on_undo_point=handle.record_restore_point)


def record_restore(outcome: RestoreOutcome, handle: SessionHandle, *, record: Callable[[ModelRequest], object],
                   emit: Callable[[FilesRestored], None]) -> None:
    """The note into the history (``record`` appends it), the count into session.json, the event (``emit``)."""
    record(rewind_request(outcome.event))
    handle.record_restore()
    emit(outcome.event)
