"""``deep-tui run``: one turn without the app.

The answer streams to stdout; notes (offline model, session id) and one line
per compaction event go to stderr, so stdout stays the answer alone. Every turn event arrives terminal-safe (``SessionRuntime`` makes it so); what
this module adds itself (warnings, chain events) passes through :func:`visible` here.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TextIO

from tui.agent.hooks.hook_events import HookNotice
from tui.agent.models.provider_events import ProviderRetrying
from tui.agent.tasks.modes import MODE_HINTS, MODE_LABELS
from tui.agent.tasks.task_events import TaskStateChanged
from tui.agent.turn_events import (
    McpServersStarting,
    PromptAttached,
    SubagentActivity,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
)
from tui.base.errors import EXIT_USAGE, STOP_SIGNALS, stopped_by
from tui.chain.event_text import describe_event
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EvictedEvent,
    SubagentRan,
)
from tui.store.prompt_history import PromptHistory, history_path
from tui.store.task_state import TaskStateError
from tui.text.terminal_text import visible
from tui.text.wording import plural

if TYPE_CHECKING:
    import signal
    from collections.abc import Coroutine

    from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime

logger = logging.getLogger(__name__)



def run_headless(factory: RuntimeFactory, request: SessionRequest, prompt: str) -> int:
    """Run one turn and return the exit status (0 ok, 1 the turn failed, 128 + N stopped by signal N);
    ``/keep TEXT`` adds a standing instruction to the session instead, without a model request."""
    words = prompt.split(maxsplit=1)
    if words and words[0] == "/keep":
        return asyncio.run(_keep(factory, request, words[1] if len(words) > 1 else "", sys.stdout, sys.stderr))
    return asyncio.run(_stoppable(_run(factory, request, prompt, _AnswerOut(sys.stdout), sys.stderr), sys.stderr))


async def _keep(factory: RuntimeFactory, request: SessionRequest, text: str, out: TextIO, err: TextIO) -> int:
    """``/keep TEXT``: the line joins the session's standing instructions (``/keep`` alone lists them)."""
    runtime = await factory.open_request(request)
    try:
        for warning in runtime.info.warnings:
            print(f"deep-tui: warning: {visible(warning)}", file=err)
        if text.strip():
            try:
                runtime.add_keep(text)
            except (TaskStateError, OSError) as error:
                print(f"deep-tui: error: {visible(str(error))}", file=err)
                return EXIT_USAGE
            print(f"deep-tui: kept in session {runtime.info.session_id}: every later request carries it", file=err)
        lines = runtime.task_state().keep
        if not lines:
            print(f"deep-tui: session {runtime.info.session_id} has no standing instructions (/keep TEXT adds one)",
                  file=err)
        for number, line in enumerate(lines, start=1):
            out.write(f"{number}. {visible(line.text)}\n")
        return 0
    finally:
        await runtime.aclose()


async def _stoppable(run: Coroutine[Any, Any, int], err: TextIO) -> int:
    """``run``, cancelled by SIGTERM or SIGHUP as asyncio cancels it on SIGINT, so what the turn streamed is
    recorded (the runtime records a cancelled turn) and the session closed; returns 128 + the signal."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not received:  # a second signal must not interrupt the saving the first one started
            received.append(signum)
            task.cancel()

    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
        except (ValueError, RuntimeError, NotImplementedError) as error:  # not the main thread, or no such signal
            logger.debug("cannot handle %s: %s", signum.name, error)
    try:
        try:
            status = await run
        except asyncio.CancelledError:
            if not received:
                raise
        if received:  # cancelled, or the signal came as the turn ended: stopped by it all the same
            while task.cancelling():
                task.uncancel()
            print(f"\ndeep-tui: stopped by {received[0].name}; what was answered so far is kept in the session "
                  "(continue with: deep-tui --continue)", file=err, flush=True)
            return stopped_by(received[0])
        return status
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


class _AnswerOut:
    """stdout for the answer; when its reader goes away (``| head``) the turn still runs to the end
    and is recorded, the rest of the answer is just not printed."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def write(self, text: str) -> None:
        if self.closed_by_reader:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except BrokenPipeError:
            self.closed_by_reader = True
            from tui.base.console import silence_stdout

            silence_stdout()

    def flush(self) -> None:
        self.write("")


async def _run(
    factory: RuntimeFactory, request: SessionRequest, prompt: str, out: TextIO | _AnswerOut, err: TextIO
) -> int:
    mcp = factory.mcp
    stop_notices = None
    if mcp is not None:  # started before the turn; the first request waits for them (each bounded by its timeout)
        stop_notices = mcp.listen(lambda notice: print(f"deep-tui: {visible(notice.message)}", file=err, flush=True))
        mcp.start()
    try:
        return await _run_turn(factory, request, prompt, out, err)
    finally:
        if mcp is not None:
            await mcp.aclose()
        if stop_notices is not None:
            stop_notices()


async def _run_turn(
    factory: RuntimeFactory, request: SessionRequest, prompt: str, out: TextIO | _AnswerOut, err: TextIO
) -> int:
    runtime = await factory.open_request(request)
    try:
        if runtime.info.offline_chosen:
            print("deep-tui: the offline model, as you chose: it runs the tools but is no LLM (type help to it; "
                  "another model: --model, DEEP_TUI_MODEL or an API key)", file=err)
        elif runtime.info.offline:
            print("deep-tui: no LLM configured — using the offline stand-in model "
                  "(set --model, DEEP_TUI_MODEL or an API key)", file=err)
        for warning in runtime.info.warnings:
            print(f"deep-tui: warning: {visible(warning)}", file=err)
        if runtime.mode != "default":
            print(f"deep-tui: mode {MODE_LABELS[runtime.mode]}: {MODE_HINTS[runtime.mode]}", file=err)
        warned = len(runtime.info.warnings)
        _remember_prompt(runtime, prompt)

        def on_event(event: ChainEvent) -> None:
            if isinstance(event, (CompactionStarted, CompactionFinished, CompactionFailed, EvictedEvent, SubagentRan)):
                print(f"deep-tui: {visible(describe_event(event))}", file=err, flush=True)
            elif isinstance(event, HookNotice):
                print(f"deep-tui: {visible(event.describe())}", file=err, flush=True)
            elif isinstance(event, ProviderRetrying):
                print(f"deep-tui: {visible(event.provider)}: {event.describe(event.timestamp)}", file=err, flush=True)
            elif isinstance(event, TaskStateChanged) and (line := event.compact_line() or event.note):
                print(f"deep-tui: todos: {visible(event.note or line)}", file=err, flush=True)

        unsubscribe = runtime.subscribe(on_event)
        status = 0
        wrote_text = False
        refused = 0
        refused_mcp = 0
        refused_by_name: dict[str, int] = {}
        started: set[int] = set()
        try:
            # aclosing: a write that fails (a closed pipe) ends the turn's stream here, not later in the GC
            async with aclosing(runtime.run_turn(prompt)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        out.write(event.text)
                        out.flush()
                        wrote_text = True
                    elif isinstance(event, PromptAttached):
                        for line in event.lines:
                            how = "not attached:" if line in event.refused else "attached"
                            print(f"deep-tui: {how} {line}", file=err, flush=True)
                    elif isinstance(event, McpServersStarting):
                        print(f"deep-tui: {event.describe()}", file=err, flush=True)
                    elif isinstance(event, ToolCallStarted):
                        print(f"deep-tui: tool {event.tool_name}({_short(event.args_json)})", file=err, flush=True)
                    elif isinstance(event, SubagentActivity) and event.running and event.number not in started:
                        started.add(event.number)
                        print(f"deep-tui: subagent {event.number} ({event.name}) started: {_short(event.description)}",
                              file=err, flush=True)
                    elif isinstance(event, ToolCallFinished) and event.denied:
                        if runtime.mcp is not None and runtime.mcp.route(event.tool_name) is not None:
                            refused_mcp += 1
                        else:
                            refused += 1
                            refused_by_name[event.tool_name] = refused_by_name.get(event.tool_name, 0) + 1
                        print(f"deep-tui: refused {event.tool_name}: {visible(_short(event.preview, 300))}", file=err,
                              flush=True)
                    elif isinstance(event, ToolCallFinished) and event.is_error:
                        print(f"deep-tui: tool {event.tool_name} failed: {_short(event.preview)}", file=err)
                    elif isinstance(event, TurnFinished):
                        if not wrote_text and event.output:
                            out.write(event.output)
                    elif isinstance(event, TurnFailed):
                        print(f"deep-tui: error: {visible(event.message)}", file=err)
                        status = 1
        finally:
            unsubscribe()
        if wrote_text or status == 0:
            out.write("\n")
        commands = runtime.approval_gate.commands
        refused_commands = commands.refused if commands is not None else 0  # asked for, and nobody to ask here
        refused -= sum(refused_by_name.get(name, 0) for name in runtime.approval_gate.command_tools)
        if refused_commands:
            print(f"deep-tui: {plural(refused_commands, 'shell command')} refused: 'run' runs commands only with "
                  "--allow-commands (or [tools] commands = \"always\" in config.toml)", file=err)
        if refused and runtime.approval_gate.writes == "ask":
            print(f"deep-tui: {plural(refused, 'file write')} refused: 'run' changes files only with --allow-writes "
                  "(or [tools] writes = \"always\" in config.toml)", file=err)
        if refused_mcp and runtime.approval_gate.mcp is not None:
            print(f"deep-tui: {plural(refused_mcp, 'MCP tool call')} refused: 'run' calls an MCP server's tools only "
                  "with [tools] mcp = \"always\" (or [mcp.servers.NAME] approval = \"always\") in config.toml",
                  file=err)
        if runtime.modes.refused:
            print(f"deep-tui: plan mode: {plural(runtime.modes.refused, 'change')} refused (the agent only planned; "
                  "run again without --mode plan to carry the plan out)", file=err)
        for warning in runtime.info.warnings[warned:]:  # said during the turn (a snapshot left out, …)
            print(f"deep-tui: warning: {visible(warning)}", file=err)
        point = runtime.checkpoints.last_point
        if point is not None:
            print(f"deep-tui: the files as they were before this prompt are kept: deep-tui rewind --session "
                  f"{runtime.info.session_id} {point.message} --code takes its changes back", file=err)
        print(f"deep-tui: session {runtime.info.session_id} "
              f"(continue with: deep-tui --resume {runtime.info.session_id})", file=err)
        return status
    finally:
        await runtime.aclose()


def _remember_prompt(runtime: SessionRuntime, prompt: str) -> None:
    """The prompt joins the session's prompt history, so Up recalls it in the app (a fork starts from its
    parent's history, as in the app)."""
    info = runtime.info
    parent = history_path(runtime.data_root, info.parent) if info.parent else None
    PromptHistory.load(history_path(runtime.data_root, info.session_id), inherit_from=parent).add(prompt)


def _short(text: str, limit: int = 120) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
