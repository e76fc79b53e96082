"""The app's answer to "may the agent change this file / run this command?" (and to the pre-flight's "may a summary
run?" when automatic compaction is off): a dialog, awaited inside the turn.

The session's :class:`~tui.agent.approval.approval_gate.ApprovalGate` calls :class:`WriteDialogApprover` (file writes
and MCP calls) from the running turn
(the turn worker); it pushes a :class:`~tui.app.screens.write_approval.WriteApprovalScreen` and waits for
the user's answer. Cancelling the turn while the dialog is open (a session switch, quitting) closes the
dialog; the unanswered call is then sealed like any stopped turn's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual import events
    from textual.app import App
    from textual.screen import ModalScreen

    from tui.agent.approval.commands import CommandDecision, CommandRequest
    from tui.agent.approval.writes import WriteDecision, WriteRequest

__all__ = ["CommandDialogApprover", "SummaryConsentAsker", "WriteDialogApprover", "granted_kind", "typed_into_prompt"]

logger = logging.getLogger(__name__)

Decision = TypeVar("Decision")


def granted_kind(request: WriteRequest) -> str:
    """What "allow for this session" grants, as the title bar names it: ``writes``, or ``MCP <server>``."""
    return f"MCP {request.server}" if request.action == "call" and request.server else "writes"


class WriteDialogApprover:
    """A :data:`~tui.agent.approval.writes.WriteApprover` that asks the user in a modal dialog."""

    def __init__(self, app: App[Any], *, on_allowed_for_session: Callable[[str], None] | None = None,
                 on_asking: Callable[[str], object] | None = None) -> None:
        """``on_allowed_for_session``: called with what was granted (:func:`granted_kind`) when the user allows
        every later write of this session, or every tool of an MCP server; ``on_asking``: called with what is
        asked (one line, hostile text) when the dialog opens."""
        self.app = app
        self.on_allowed_for_session = on_allowed_for_session
        self.on_asking = on_asking

    async def __call__(self, request: WriteRequest) -> WriteDecision:
        from tui.agent.approval.writes import WriteDecision  # with the first dialog, not for the first frame
        from tui.app.screens.write_approval import WriteApprovalScreen

        decision = await _ask(self.app, WriteApprovalScreen(request), WriteDecision.deny(),
                              asking=request.summary, on_asking=self.on_asking)
        if decision.for_session and self.on_allowed_for_session is not None:
            self.on_allowed_for_session(granted_kind(request))
        return decision


class CommandDialogApprover:
    """A :data:`~tui.agent.approval.commands.CommandApprover` that asks the user in a modal dialog."""

    def __init__(self, app: App[Any], *, on_allowed_for_session: Callable[[], None] | None = None,
                 on_asking: Callable[[str], object] | None = None) -> None:
        """``on_allowed_for_session``: called when the user allows every later command of this session;
        ``on_asking``: called with what is asked (one line, hostile text) when the dialog opens."""
        self.app = app
        self.on_allowed_for_session = on_allowed_for_session
        self.on_asking = on_asking

    async def __call__(self, request: CommandRequest) -> CommandDecision:
        from tui.agent.approval.commands import CommandDecision
        from tui.app.screens.command_approval import CommandApprovalScreen

        decision = await _ask(self.app, CommandApprovalScreen(request), CommandDecision.deny(),
                              asking=f"run {request.command}", on_asking=self.on_asking)
        if decision.allow and decision.scope == "session" and self.on_allowed_for_session is not None:
            self.on_allowed_for_session()
        return decision


class SummaryConsentAsker:
    """Asked by the pre-flight (in the turn) when automatic compaction is off and a request would not fit: may a
    summary run now? ``False`` (evict only) when the dialog is closed without an answer."""

    def __init__(self, app: App[Any], *, on_asking: Callable[[str], object] | None = None) -> None:
        """``on_asking``: called with what is asked (one line) when the dialog opens."""
        self.app = app
        self.on_asking = on_asking

    async def __call__(self, tokens: int, limit: int) -> bool:
        from tui.app.screens.summary_consent import SummaryConsentScreen

        return await _ask(self.app, SummaryConsentScreen(tokens, limit), False,
                          asking="may a summary of old turns run? The next request does not fit the window",
                          on_asking=self.on_asking)


async def _ask(app: App[Any], screen: ModalScreen[Decision], dismissed: Decision, *, asking: str = "",
               on_asking: Callable[[str], object] | None = None) -> Decision:
    """Push ``screen`` and wait for its answer (``dismissed`` when closed without one); a cancelled turn closes it.
    ``on_asking`` is told ``asking`` once the dialog is pushed."""
    answer: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

    def answered(decision: Decision | None) -> None:
        if not answer.done():
            answer.set_result(decision if decision is not None else dismissed)

    from tui.app.screens.approval_dialog import ApprovalDialog  # with the dialog, not before the first frame

    if isinstance(screen, ApprovalDialog):
        screen.typed_early = lambda key: typed_into_prompt(app, key)
    app.push_screen(screen, answered)
    if on_asking is not None:
        on_asking(asking)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_current:
            screen.dismiss(None)
        elif screen in app.screen_stack:
            logger.warning("the turn was cancelled under another dialog; the approval dialog stays until closed")
        raise


def typed_into_prompt(app: App[Any], key: events.Key) -> None:
    """A key that reached an approval dialog before it was armed: typed into the prompt, where it was meant to go."""
    from tui.app.widgets.prompt_input import PromptInput

    prompts = app.screen_stack[0].query(PromptInput)
    if prompts:
        prompts.first().take_key(key.key, key.character)
