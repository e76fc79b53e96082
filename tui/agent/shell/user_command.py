"""``!command`` typed in the prompt: run as the user (the same sandbox, no approval: the user typed it).

Its output is shown in the chat as it arrives, and the command with its output joins the conversation for the
model (as Claude Code's ``!`` does): :func:`user_command_request` is recorded in messages.json the moment the
command ends, and pydantic-ai sends it together with the next prompt. An output too large for the context (over
``large_result_tokens``, as for a tool output) is saved whole to ``large_tool_results/`` and the model gets its
head and tail and the path to read it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from tui.agent.shell.command_run import DEFAULT_TIMEOUT, CommandRun, run_command
from tui.agent.shell.sandbox import Sandbox
from tui.base.metadata_keys import USER_COMMAND_KEY
from tui.text.user_command_text import context_text

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
    saved_path: str | None = None
    """Where an output too large for the context was saved whole."""
    output_chars: int = 0
    """The size of the whole output (what the chat counted as it arrived)."""


def user_command_request(result: UserCommandResult) -> ModelRequest:
    """The request that records a ``!command`` that ran (its :attr:`~UserCommandResult.context`)."""
    return ModelRequest(parts=[UserPromptPart(result.context)], metadata={USER_COMMAND_KEY: {
        "command": result.command, "status": result.status, "saved_path": result.saved_path,
        "chars": result.output_chars}})


def is_user_command(message: ModelMessage) -> bool:
    """Whether ``message`` records a ``!command`` (it needs no answer of its own)."""
    return isinstance(message, ModelRequest) and USER_COMMAND_KEY in (message.metadata or {})


async def run_user_command(sandbox: Sandbox, command: str, *, on_output: Callable[[str], Awaitable[None]],
                           large_results_dir: Path, large_result_tokens: int, number: int) -> UserCommandResult:
    """Run ``command``; a cancellation (Esc) kills it and propagates. ``number`` names a saved large output."""
    if "\0" in command:
        return UserCommandResult(command, "the command contains a NUL byte, which no shell command can hold; "
                                          "nothing was run", ran=False)
    unavailable = sandbox.unavailable()
    if unavailable:
        return UserCommandResult(command, unavailable, ran=False)
    run = CommandRun(command)
    await run_command(sandbox, command, timeout=USER_COMMAND_TIMEOUT, on_output=on_output, run=run)
    context, saved_path = _for_model(run, large_results_dir, large_result_tokens, number)
    return UserCommandResult(command, run.status_line(), ran=True, context=context, saved_path=saved_path,
                             output_chars=len(run.output))


def _for_model(run: CommandRun, large_results_dir: Path, large_result_tokens: int,
               number: int) -> tuple[str, str | None]:
    from tui.chain.estimate import text_tokens
    from tui.chain.eviction import build_preview
    from tui.chain.safe_names import write_output

    output = run.output
    if text_tokens(output) <= large_result_tokens:
        return context_text(run.command, output, run.status_line()), None
    path: str | None = None
    error: str | None = None
    try:
        path = str(write_output(large_results_dir, f"user-command-{number}", output, ".txt"))
    except (OSError, ValueError) as failure:
        error = f"{type(failure).__name__}: {failure}"
        logger.warning("the !command's output could not be saved: %s", error)
    preview = build_preview(output, path=path, tool_name="the command", error=error)
    return context_text(run.command, preview, run.status_line()), path
