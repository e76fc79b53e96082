"""The app's answer to "may the agent change this file?": the approval dialog, awaited inside the turn.

The session's :class:`~tui.agent.write_gate.WriteGate` calls :class:`DialogApprover` from the running turn
(the turn worker); it pushes a :class:`~tui.app.screens.write_approval.WriteApprovalScreen` and waits for
the user's answer. Cancelling the turn while the dialog is open (a session switch, quitting) closes the
dialog; the unanswered call is then sealed like any stopped turn's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from textual.app import App

from tui.agent.write_approval import WriteDecision, WriteRequest

__all__ = ["DialogApprover"]

logger = logging.getLogger(__name__)


class DialogApprover:
    """A :data:`~tui.agent.write_approval.WriteApprover` that asks the user in a modal dialog."""

    def __init__(self, app: App[Any], *, on_allowed_for_session: Callable[[], None] | None = None) -> None:
        """``on_allowed_for_session``: called when the user allows every later write of this session."""
        self.app = app
        self.on_allowed_for_session = on_allowed_for_session

    async def __call__(self, request: WriteRequest) -> WriteDecision:
        from tui.app.screens.write_approval import WriteApprovalScreen

        answer: asyncio.Future[WriteDecision] = asyncio.get_running_loop().create_future()

        def answered(decision: WriteDecision | None) -> None:
            if not answer.done():
                answer.set_result(decision if decision is not None else WriteDecision.deny())

        screen = WriteApprovalScreen(request)
        self.app.push_screen(screen, answered)
        try:
            decision = await answer
        except asyncio.CancelledError:
            if screen.is_current:
                screen.dismiss(None)
            elif screen in self.app.screen_stack:
                logger.warning("the turn was cancelled under another dialog; the approval dialog stays until closed")
            raise
        if decision.for_session and self.on_allowed_for_session is not None:
            self.on_allowed_for_session()
        return decision
