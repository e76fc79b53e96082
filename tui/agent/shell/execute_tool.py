"""The ``execute`` tool: a shell command in the sandbox, its output streamed live, then exit status and duration.

Named and shaped like pydantic-deep's (``execute(command, timeout=None)``) so adopted sessions read the same.
It asks first (:class:`~tui.agent.approval.approval_gate.ApprovalGate` with :mod:`tui.agent.approval.commands`); it runs through
:func:`tui.agent.shell.command_run.run_command` in the session's :class:`~tui.agent.shell.sandbox.Sandbox`. Each piece of
output reaches the run's event stream as a :class:`CommandOutput` event as it is read (the app appends it to the
tool block), and its end as a :class:`CommandEnded` (the block shows the exit status before the result is ready);
the whole output is the tool's return, so the chain evicts a large one like any other.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai import CustomEvent, FunctionToolset, RunContext

from tui.agent.shell.command_run import MAX_TIMEOUT, CommandRun, clamp_timeout, run_command
from tui.agent.shell.sandbox import Sandbox
from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.failures import refuse
from tui.agent.tools.kinds import RUNS_COMMANDS_METADATA
from tui.chain.safe_names import write_output

logger = logging.getLogger(__name__)

"""Tool metadata marking a tool that runs shell commands (it needs approval)."""

INTERRUPTED_KEEP_CHARS = 8_000
"""Of a cancelled command's output, what the sealed tool return keeps (head and tail)."""


@dataclass(kw_only=True)
class CommandOutput(CustomEvent, name="command_output"):
    """A piece of a running command's output (decoded, not yet made terminal-safe)."""

    text: str


@dataclass(kw_only=True)
class CommandEnded(CustomEvent, name="command_ended"):
    """The command is over (its output all delivered): how it ended, for the screen before the result is ready."""

    status: str


@dataclass
class ShellState:
    """The session's shell: its sandbox, and what cancelled commands printed (for the sealed return)."""

    sandbox: Sandbox
    saved_dir: Path | None = None
    """Where a cancelled command's long output is saved whole (the data dir's ``large_tool_results/``)."""
    interrupted: dict[str, str] = field(default_factory=dict)
    """Tool call id → what the model reads for a command the user cancelled (its output so far)."""

    def take_interrupted(self) -> dict[str, str]:
        taken, self.interrupted = self.interrupted, {}
        return taken


def command_result_text(run: CommandRun, note: str = "") -> str:
    """What the model reads: the output as the command wrote it, then how it ended (one copy of the output)."""
    pieces = run.pieces
    if not pieces:
        return f"(no output)\n{note}{run.status_line()}"
    end = "" if pieces[-1].endswith("\n") else "\n"
    return "".join([*pieces, end, note, run.status_line()])


def interrupted_text(run: CommandRun, call_id: str, saved_dir: Path | None) -> str:
    """A cancelled command's sealed return: the output so far and the status. A long output is saved whole to
    ``saved_dir`` (``large_tool_results/``) and the return keeps its head and tail with the path to read it."""
    output = run.output
    if len(output) > INTERRUPTED_KEEP_CHARS:
        half = INTERRUPTED_KEEP_CHARS // 2
        where = "not kept"
        if saved_dir is not None:
            try:
                where = f"the whole output so far is saved at {write_output(saved_dir, call_id, output, '.txt')}"
            except (OSError, ValueError) as error:
                logger.warning("the cancelled command's output could not be saved: %s", error)
        output = f"{output[:half]}\n[… {len(output) - 2 * half:,} characters: {where} …]\n{output[-half:]}"
    return command_result_text(CommandRun(run.command, pieces=[output] if output else [], ending=run.ending,
                                          started=run.started, finished=run.finished))


def shell_toolset(shell: ShellState) -> FunctionToolset[None]:
    """The ``execute`` tool, running in ``shell.sandbox``."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool(toolset, metadata=RUNS_COMMANDS_METADATA)  # asks the user first (tui.agent.approval.approval_gate)
    async def execute(ctx: RunContext[None], command: str, timeout: int | None = None) -> str:
        """Run a shell command (``/bin/sh -c``) in the working directory and return its output (stdout and stderr
        together) and exit status. ``timeout`` in seconds: 120 by default, at most 600. It runs in a sandbox:
        the rest of the filesystem is read-only, there is no network unless the user allowed it, and no secrets
        are in the environment; nothing can be typed into it (stdin is empty)."""
        if not command.strip():
            raise refuse("the command is empty")
        if "\0" in command:
            raise refuse("the command contains a NUL byte, which no shell command can hold; nothing was run")
        unavailable = shell.sandbox.unavailable()
        if unavailable:
            raise refuse(unavailable)
        note = ""
        if timeout is not None and timeout > MAX_TIMEOUT:
            note = f"[the timeout asked for ({timeout} s) was cut to {MAX_TIMEOUT} s]\n"
        if timeout is not None and timeout <= 0:
            raise refuse("timeout must be a positive number of seconds")
        run = CommandRun(command)

        async def stream(text: str) -> None:
            await ctx.emit(CommandOutput(text=text))

        try:
            await run_command(shell.sandbox, command, timeout=clamp_timeout(timeout), on_output=stream, run=run)
        except asyncio.CancelledError:
            if ctx.tool_call_id:
                shell.interrupted[ctx.tool_call_id] = interrupted_text(run, ctx.tool_call_id, shell.saved_dir)
            raise
        await ctx.emit(CommandEnded(status=run.status_line()))
        await asyncio.sleep(0)  # the screen takes it now, before the result goes through the chain
        return command_result_text(run, note)

    return toolset
