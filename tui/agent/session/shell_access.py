"""The user's own use of an open session's shell: a ``!command`` run in the sandbox (recorded for the model, with a
restore point), and what the user must know about how commands run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic_ai.messages import ModelMessage

from tui.agent.approval.plan_mode import USER_COMMAND_REFUSAL, ModeGuard
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.shell.execute_tool import ShellState
from tui.agent.shell.user_command import UserCommandResult, run_user_command, user_command_request
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.manager import ContextManager
from tui.store import SessionHandle


class SessionShellAccess:
    """The ``!command`` part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named
    here)."""

    settings: Settings
    handle: SessionHandle
    manager: ContextManager
    shell: ShellState
    modes: ModeGuard
    checkpoints: PromptCheckpoints
    data_root: Path
    messages: list[ModelMessage]
    _busy: bool
    _seal: Callable[[str], None]
    """Closes what a stopped turn left open (:class:`~tui.agent.session.turns.SessionTurns`)."""

    def sandbox_notice(self) -> str | None:
        """What the user must know about how commands run (no sandbox here, or ``--no-sandbox``), or ``None``.
        Runs the sandbox probe (cached per process): call it off the UI thread."""
        sandbox = self.shell.sandbox
        if not sandbox.enabled:
            return "--no-sandbox: shell commands run WITHOUT a sandbox and can read and change anything you can"
        return sandbox.unavailable()

    async def run_user_command(self, command: str, on_output: Callable[[str], Awaitable[None]]) -> UserCommandResult:
        """Run the user's ``!command`` in the sandbox; its output goes before the next prompt for the model."""
        if self._busy:
            return UserCommandResult(command, "a turn is running: run the command when it ends", ran=False)
        if self.handle.read_only:
            return UserCommandResult(command, "this session is open read-only", ran=False)
        if self.modes.planning:
            return UserCommandResult(command, USER_COMMAND_REFUSAL, ran=False)
        self._busy = True
        try:
            if self.shell.sandbox.unavailable() is None:  # it will run: its changes can be rewound
                self._seal("the previous turn stopped before an answer came")
                self.checkpoints.begin(self.handle.meta.message_count + 1, "command", detail=command[:200])
                await self.checkpoints.before_change()
            result = await run_user_command(
                self.shell.sandbox, command, on_output=on_output,
                large_results_dir=DataDir(self.data_root).large_results_dir,
                large_result_tokens=self.settings.context.large_result_tokens,
                number=self.handle.meta.message_count)
            if result.context:  # recorded at once: the model reads it with the next prompt
                self._seal("the previous turn stopped before an answer came")
                self.messages.append(user_command_request(result))
                self.manager.record_pending(self.messages)
        finally:
            try:
                await self.checkpoints.end()
            finally:
                self._busy = False
        return result
