"""``!command`` typed in the prompt: run as the user (the same sandbox, no approval: the user typed it).

Its output is shown in the chat as it arrives, and the command with its output joins the conversation for the
model: it is put before the next prompt the user sends (as Claude Code's ``!`` does), and so recorded in
messages.json with that prompt. An output too large for the context (over ``large_result_tokens``, as for a tool
output) is saved whole to ``large_tool_results/`` and the model gets its head and tail and the path to read it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from tui.agent.command_run import DEFAULT_TIMEOUT, CommandRun, run_command
from tui.agent.sandbox import Sandbox

logger = logging.getLogger(__name__)

USER_COMMAND_TIMEOUT = DEFAULT_TIMEOUT
"""A ``!command`` is stopped after this many seconds too (Esc stops it sooner)."""


@dataclass(frozen=True)
class UserCommandResult:
    """A ``!command`` that ran (or could not): what the chat shows under its output."""

    command: str
    status: str
    """``[exit status 0 · 0.1 s]``, ``[timed out …]`` or why nothing ran."""
    ran: bool
    context: str = ""
    """What the model will read with the next prompt (empty when nothing ran)."""


def context_text(command: str, output: str, status: str) -> str:
    """How a ``!command`` reads to the model."""
    return (f"[The user ran this shell command themselves (not you): `{command}`. Its output:]\n"
            f"{output if output.endswith(chr(10)) or not output else output + chr(10)}{status}")


async def run_user_command(sandbox: Sandbox, command: str, *, on_output: Callable[[str], Awaitable[None]],
                           large_results_dir: Path, large_result_tokens: int, number: int) -> UserCommandResult:
    """Run ``command``; a cancellation (Esc) kills it and propagates. ``number`` names a saved large output."""
    unavailable = sandbox.unavailable()
    if unavailable:
        return UserCommandResult(command, unavailable, ran=False)
    run = CommandRun(command)
    await run_command(sandbox, command, timeout=USER_COMMAND_TIMEOUT, on_output=on_output, run=run)
    return UserCommandResult(command, run.status_line(), ran=True,
                             context=_for_model(run, large_results_dir, large_result_tokens, number))


def _for_model(run: CommandRun, large_results_dir: Path, large_result_tokens: int, number: int) -> str:
    from tui.chain.estimate import text_tokens
    from tui.chain.eviction import build_preview
    from tui.chain.safe_names import write_output

    output = run.output
    if text_tokens(output) <= large_result_tokens:
        return context_text(run.command, output, run.status_line())
    path: str | None = None
    error: str | None = None
    try:
        path = str(write_output(large_results_dir, f"user-command-{number}", output, ".txt"))
    except (OSError, ValueError) as failure:
        error = f"{type(failure).__name__}: {failure}"
        logger.warning("the !command's output could not be saved: %s", error)
    preview = build_preview(output, path=path, tool_name="the command", error=error)
    return context_text(run.command, preview, run.status_line())
