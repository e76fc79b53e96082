"""What the app does with the rewind dialog's choice (a new file; wired into the screen once the App's rebuild
has landed): the files restored here, the conversation forked at the message before the prompt, or both (the
fork holds the rewind and its undo point; the original session stays whole)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from tui.agent.runtime_api import RewindAPI, RuntimeFactoryAPI, SessionRuntimeAPI
from tui.chain.event_text import restored_line

if TYPE_CHECKING:
    from tui.app.screens.rewind_dialog import RewindChoice
    from tui.chain.events import FilesRestored


@dataclass(frozen=True)
class RewindDone:
    """The outcome: the fork to show (``None``: stay in this session), the restore, and one line for the user."""

    fork: SessionRuntimeAPI | None
    event: FilesRestored | None
    notice: str


async def carry_out(choice: RewindChoice, runtime: SessionRuntimeAPI, factory: RuntimeFactoryAPI) -> RewindDone:
    """Make the rewind ``choice`` says. Raises ``RewindError`` or a ``StoreError`` (one line each); a fork made
    for a restore that then fails is kept (its conversation is what was asked) and the error says so."""
    session_id = runtime.info.session_id
    if choice.mode == "code":
        assert choice.plan is not None
        event = await cast(RewindAPI, runtime).rewind_files(choice.plan, choice.choices)
        return RewindDone(None, event, restored_line(event))
    fork = await factory.fork_session(session_id, upto=choice.message - 1)
    forked = f"forked before message {choice.message} into {fork.info.session_id}"
    if choice.mode == "conversation":
        return RewindDone(fork, None, f"{forked}; the files are as they are")
    assert choice.plan is not None
    event = await cast(RewindAPI, fork).rewind_files(choice.plan, choice.choices, source_session=session_id)
    return RewindDone(fork, event, f"{forked}; {restored_line(event)}")
