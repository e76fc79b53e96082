"""One open session: its agent, its context chain, its history on disk."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from pathlib import Path

from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.exceptions import AgentRunError, RunCancelled, UserError
from pydantic_ai.messages import (
    ModelMessage,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import ToolDefinition

from tui.agent.command_approval import CommandApprover
from tui.agent.context_report import build_breakdown
from tui.agent.cost import CostCapability, CostTracker, chat_input_rate, price_compaction
from tui.agent.event_history import EventHistory
from tui.agent.file_mentions import MentionAttacher
from tui.agent.history_seal import seal
from tui.agent.mcp_servers import McpServers
from tui.agent.memory import MemoryFile, memory_instructions
from tui.agent.model_switch import build_for_switch, summarizer_after_switch
from tui.agent.models import OFFLINE_MODEL_NAME, ModelChoice, ModelConfigError
from tui.agent.path_policy import PathPolicy
from tui.agent.project_instructions import ProjectInstructionsSource
from tui.agent.provider_http import ProviderConnection, ProviderFailure, provider_failure
from tui.agent.run_events import run_events
from tui.agent.runtime_api import ContextBreakdown, EvictedOutput, InheritedEvent, ModelSwitch, RuntimeInfo
from tui.agent.toolsets import build_agent_parts
from tui.agent.turn_events import (
    PromptAttached,
    ToolCallFinished,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from tui.agent.turn_recording import HandleRecorder, HistoryWriteError, memory_overflow_note
from tui.agent.turn_translation import translate
from tui.agent.user_command import UserCommandResult, run_user_command
from tui.agent.write_approval import WriteApprover
from tui.chain.calibration import CALIBRATION_FILE_NAME
from tui.chain.compactor import ContextOverflowError
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    MemoryChanged,
    UsageEvent,
)
from tui.chain.manager import RECOVERY_INSTRUCTIONS, ContextManager
from tui.chain.summary_plan import SummaryPlan
from tui.config import Settings
from tui.paths import DataDir
from tui.redaction import redact
from tui.store import SessionHandle
from tui.store.cost_totals import CostTotals
from tui.store.data_links import planted_links
from tui.store.search import HistorySearch
from tui.terminal_text import encodable, visible

logger = logging.getLogger(__name__)

BASE_INSTRUCTIONS = """\
You are deep-tui's assistant, working in the user's project directory with file
tools (read_file, write_file, edit_file, ls, glob, grep), shell commands (execute: sandboxed,
each asks the user first), a long-term memory
(read_memory, write_memory, update_memory), search_conversation_history (this session
or every session) and read_conversation_message (a recorded message, verbatim).
Be concise and precise; prefer reading files over guessing."""

MEMORY_WRITING_TOOLS = frozenset({"write_memory", "update_memory"})


class SessionRuntime:
    """Implements :class:`tui.agent.runtime_api.SessionRuntimeAPI` for one session."""

    def __init__(
        self,
        *,
        settings: Settings,
        data_dir: DataDir,
        workdir: Path,
        handle: SessionHandle,
        chat_model: Model,
        choice: ModelChoice,
        summarizer_model: Model | None,
        discard_empty: Callable[[], object] | None = None,
        search: HistorySearch | None = None,
        connection: ProviderConnection | None = None,
        mcp: McpServers | None = None,
    ) -> None:
        """``connection``: the HTTP clients of the models (closed with the session); its waits and retries
        reach subscribers as provider events. ``mcp``: the process's MCP servers (their tools are offered;
        they outlive the session)."""
        self.settings = settings
        self.data_root = data_dir.root
        self.workdir = workdir
        self.handle = handle
        self.choice = choice
        self._chat_model = chat_model
        self._summarizer_model = summarizer_model
        self.memory_path = data_dir.memory_file(settings.agent_name)
        self.memory = MemoryFile(self.memory_path)
        self.search = search or HistorySearch(data_dir)
        self._busy = False
        self._discard_empty = discard_empty
        self._connection = connection
        self.event_history = EventHistory(handle, data_dir.sessions_dir)
        if connection is not None:
            connection.monitor.listen(self.event_history.notify)
        self.info = RuntimeInfo(
            session_id=handle.id,
            title=handle.meta.title,
            model_name=choice.name,
            offline=choice.offline,
            parent=handle.meta.parent.session if handle.meta.parent else None,
            offline_chosen=choice.offline_chosen,
        )
        self.info.warnings.extend(handle.warnings)
        self.info.warnings.extend(planted_links(data_dir, agent_name=settings.agent_name, session_id=handle.id))
        self.manager = ContextManager(
            settings=settings.context,
            large_results_dir=data_dir.large_results_dir,
            recorder=HandleRecorder(handle, on_recorded=self._index_recorded),
            event_sink=self._on_chain_event,
            summarizer_model=summarizer_model,
            config_window=settings.context.window,
            chat_model=chat_model,
            calibration_path=data_dir.root / CALIBRATION_FILE_NAME,
        )
        self._messages: list[ModelMessage] | None = None
        self.attacher = MentionAttacher(PathPolicy(workdir=workdir, data_root=data_dir.root),
                                        data_dir.large_results_dir, lambda: self.manager.eviction_threshold,
                                        self._on_chain_event)
        """Attaches the files a prompt mentions with ``@path``."""
        parent_upto = (handle.meta.parent.index or 0) if handle.meta.parent else 0
        self.cost = CostTracker(handle.meta.cost, had_history=handle.meta.message_count > parent_upto,
                                emit=self.event_history.notify, persist=handle.record_cost,
                                input_rate=lambda: chat_input_rate(self._chat_model))
        self._turn_start = handle.meta.message_count
        parts = build_agent_parts(workdir=workdir, data_dir=data_dir, memory=self.memory, search=self.search,
                                  session_id=handle.id, turn_start=lambda: self._turn_start,
                                  writes=settings.tools.writes,  # type: ignore[arg-type]  # validated by config
                                  mcp=mcp, mcp_default=settings.tools.mcp,  # type: ignore[arg-type]
                                  tool_timeout=settings.tools.timeout,
                                  commands=settings.tools.commands,  # type: ignore[arg-type]  # validated by config
                                  network=settings.tools.network, sandboxed=settings.tools.sandbox)
        self.mcp = mcp
        self.write_gate = parts.write_gate
        self.shell = parts.shell
        self._user_commands: list[str] = []
        """``!command`` outputs the model has not seen yet: they go before the next prompt."""
        self._memory_instructions = memory_instructions(self.memory)
        self.project_instructions = ProjectInstructionsSource(workdir, data_dir.root, warn=self.info.warnings.append)
        """AGENTS.md / CLAUDE.md from the repository root down to the workdir (refused files: one warning each)."""
        self._toolsets = parts.toolsets
        self.agent: Agent[None, str] = Agent(
            chat_model,
            instructions=[BASE_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, self._memory_instructions,
                          self.project_instructions],
            toolsets=[*parts.toolsets, *parts.extra_toolsets],
            capabilities=[*parts.capabilities, *self.manager.capabilities(), CostCapability(self.cost)],
        )
        self.manager.prime_fixed_tokens(self._instructions(), self._tool_definitions())
        self.last_usage: UsageEvent | None = None
        self._last_compaction: CompactionFinished | CompactionFailed | None = None
        """The newest compaction event as recorded (with its cost), for :meth:`compact` to return."""
        known = handle.meta.last_usage  # the last figure recorded (a whole fork inherits its parent's)
        if known is not None:
            self.last_usage = dataclasses.replace(self.manager.estimate_usage([]), tokens=known.tokens)
        elif handle.meta.parent is not None and handle.meta.message_count:
            self.last_usage = self.manager.estimate_usage(self.messages)  # a partial fork counts its own messages
            # and keeps the figure, so its row in `deep-tui sessions` and the picker shows it (written at close)
            handle.record_usage(self.last_usage.tokens, self.last_usage.window, self.last_usage.window_source)

    # -- state -----------------------------------------------------------------

    @property
    def messages(self) -> list[ModelMessage]:
        """The working context (last summary + what followed), parsed on first use, not on open."""
        if self._messages is None:
            working, indices = self.handle.messages.load_working_context_indexed()
            self.manager.mark_recorded(working, indices)
            self._messages = working
        return self._messages

    @messages.setter
    def messages(self, value: list[ModelMessage]) -> None:
        self._messages = value

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def session_cost(self) -> CostTotals:
        return self.cost.session.copy()

    def history_count(self) -> int:
        return self.handle.messages.count()

    async def switch_model(self, name: str, *, model: Model | None = None) -> ModelSwitch:
        """Talk to ``name`` from the next request on (``/model``); ``model`` replaces the one built from the name
        (tests, library use). The model is built in a thread (a provider's SDK is imported then), the switch is
        made here. The window and prices are resolved again and the usage is reported at once against the new
        window; the session's session.json records the model. A bad name or a missing key raises
        :class:`~tui.agent.models.ModelConfigError` and changes nothing."""
        if self._busy:
            raise ModelConfigError("a turn is running; switch the model when it has finished")
        name = name.strip()
        chat_model: Model = model if model is not None else await asyncio.to_thread(
            build_for_switch, name, self.settings, self._connection)
        if self._busy:  # a turn started while the model was being built
            raise ModelConfigError("a turn is running; switch the model when it has finished")
        summarizer = summarizer_after_switch(name, chat_model, self.settings, self._summarizer_model)
        previous = self.choice.name
        self._chat_model, self._summarizer_model = chat_model, summarizer
        self.agent.model = chat_model
        self.manager.use_model(chat_model, summarizer)
        self.cost.use_input_rate(lambda: chat_input_rate(chat_model))
        self.choice = ModelChoice(name, "command")
        self.info.model_name, self.info.offline = name, name == OFFLINE_MODEL_NAME
        self.handle.meta.model = name
        if not self.handle.read_only:
            self.handle.save_meta_or_log()
        self._report_fixed_change()
        return ModelSwitch(previous=previous, name=name, window=self.manager.window,
                           window_source=self.manager.window_source, over_window=self._over_window())

    def _over_window(self) -> bool:
        """Whether the context now measures more than the compaction threshold of the (new) window."""
        usage = self.last_usage
        return usage is not None and usage.tokens >= self.manager.budget.at(self.settings.context.compaction_threshold)

    def set_write_approver(self, approver: WriteApprover | None) -> None:
        """Who is asked before a file write (the app's dialog); ``None``: nobody, so an ``ask`` is refused."""
        self.write_gate.approver = approver

    def set_command_approver(self, approver: CommandApprover | None) -> None:
        """Who is asked before a shell command runs (the app's dialog); ``None``: an ``ask`` is refused."""
        if self.write_gate.commands is not None:
            self.write_gate.commands.approver = approver

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]:
        return self.handle.messages.load_range(start, stop)

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
        self._busy = True
        try:
            result = await run_user_command(
                self.shell.sandbox, command, on_output=on_output,
                large_results_dir=DataDir(self.data_root).large_results_dir,
                large_result_tokens=self.settings.context.large_result_tokens,
                number=self.handle.meta.message_count * 100 + len(self._user_commands))
        finally:
            self._busy = False
        if result.context:
            self._user_commands.append(result.context)
        return result

    def rename(self, title: str) -> None:
        self.handle.rename(title)
        self.info.title = title
        self.search.rename(self.handle.id, self.handle.meta.title)

    # -- events ----------------------------------------------------------------

    def subscribe(self, listener: Callable[[ChainEvent], None]) -> Callable[[], None]:
        return self.event_history.subscribe(listener)

    def _on_chain_event(self, event: ChainEvent) -> None:
        if isinstance(event, (CompactionFinished, CompactionFailed)) and event.strategy == "summary":
            event = price_compaction(event, self.cost, self.manager.summarizer)
        if isinstance(event, (CompactionFinished, CompactionFailed)):
            self._last_compaction = event
        if isinstance(event, UsageEvent):
            self.last_usage = event
        self.event_history.add(event)

    def _index_recorded(self, first: int, messages: Sequence[ModelMessage]) -> None:
        """What was just appended to messages.json goes into the search index, in the index's writer thread: the
        turn never waits for it, nor fails because of it."""
        meta = self.handle.meta
        self.search.record_soon(meta.id, first, messages, title=meta.title, parent=meta.parent)


    def past_events(self) -> list[ChainEvent]:
        return self.event_history.past()

    def evicted_outputs(self) -> list[EvictedOutput]:
        return self.event_history.evicted_outputs()

    def inherited_events(self) -> list[InheritedEvent]:
        return list(self.event_history.inherited)

    # -- turns -----------------------------------------------------------------

    async def run_turn(self, prompt: str) -> AsyncGenerator[TurnEvent]:
        """Run one user turn, streaming text deltas and tool activity."""
        if self._busy:
            yield TurnFailed("a turn is already running")
            return
        if self.handle.read_only:
            yield TurnFailed("this session is open read-only")
            return
        prompt = encodable(prompt)  # invalid UTF-8 from argv arrives as lone surrogates (surrogateescape)
        if self._user_commands:  # the user's !commands since the last turn, for the model to read first
            prompt = "\n\n".join([*self._user_commands, prompt])
            self._user_commands = []
        self._busy = True
        self.manager.begin_user_turn()
        self.cost.begin_turn()
        self._turn_start = self.handle.meta.message_count  # the search tool leaves out this turn's own messages
        result: AgentRunResult[str] | None = None
        run_messages: list[ModelMessage] = []
        try:
            self._seal("the previous turn stopped before an answer came")
            attached = await asyncio.to_thread(self.attacher.attach, prompt)  # up to 20 files: off the loop
            if attached.attachments:
                yield PromptAttached(tuple(item.describe() for item in attached.attachments))
            # workspace="new": the workspace is always this process's --workdir, even when the history
            # was recorded in another directory (a resumed or copied session).
            with capture_run_messages() as run_messages:
                async for event in run_events(self.agent, attached.content, message_history=self.messages,
                                              workspace="new"):
                    if isinstance(event, AgentRunResult):
                        result = event
                        continue
                    translated = translate(event)
                    if translated is None:
                        continue
                    if isinstance(translated, ToolCallFinished) and translated.tool_name in MEMORY_WRITING_TOOLS:
                        self._on_chain_event(MemoryChanged(path=str(self.memory_path)))
                    yield translated
            if result is None:
                yield TurnFailed("the run ended without a result")
                return
            self.messages = list(result.all_messages())
            self.manager.record_pending(self.messages)
            self._refresh_title()
            usage = result.usage
            yield TurnFinished(output=visible(str(result.output)), input_tokens=usage.input_tokens,
                               output_tokens=usage.output_tokens)
        except asyncio.CancelledError as cancellation:
            cancelled_run = RunCancelled.from_cancellation(cancellation)
            self._keep_failed(list(cancelled_run.all_messages()) if cancelled_run else [], "cancelled")
            raise
        except RunCancelled as cancelled:
            self._keep_failed(list(cancelled.all_messages()), "cancelled")
            yield TurnFailed("cancelled", cancelled=True)
        except HistoryWriteError as error:
            self._keep_failed(run_messages, "the session could not be saved")
            yield TurnFailed(str(error))
        except AgentRunError as error:
            if (failure := provider_failure(error)) is not None:
                yield self._provider_failed(run_messages, failure)
                return
            logger.warning("turn failed: %s", error, exc_info=True)
            reason = f"{type(error).__name__}: {_first_line(str(error))}"
            self._keep_failed(run_messages, reason)
            yield TurnFailed(reason + self._memory_note(error))
        except UserError as error:
            logger.warning("turn failed (configuration): %s", error, exc_info=True)
            reason = f"configuration problem: {_first_line(str(error))}"
            self._keep_failed(run_messages, reason)
            yield TurnFailed(reason)
        except Exception as error:  # a provider SDK or tool bug must end the turn, not the app
            if (failure := provider_failure(error)) is not None:  # an SDK that let it through unwrapped
                yield self._provider_failed(run_messages, failure)
                return
            logger.error("turn failed unexpectedly", exc_info=True)
            reason = f"unexpected {type(error).__name__}: {_first_line(str(error))}"
            self._keep_failed(run_messages, reason)
            yield TurnFailed(reason)
        finally:
            self._busy = False
            self.handle.flush_meta()
            for notice in self.handle.take_notices():
                self.info.warnings.append(notice)

    def _provider_failed(self, run_messages: list[ModelMessage], failure: ProviderFailure) -> TurnFailed:
        """The provider timed out or failed after the retries (each already reported): one line says it."""
        logger.info("turn failed: %s", failure)
        self._keep_failed(run_messages, str(failure))
        return TurnFailed(str(failure))

    def _keep_failed(self, run_messages: list[ModelMessage], reason: str) -> None:
        """Record what a stopped or failed run exchanged, and close what it left open, so disk and working
        context agree and the next prompt can be sent. Never raises: a failure to save is logged, and what
        was not saved stays in the working context to be saved with the next turn."""
        reason = redact(reason)  # the note is shown and stored; a provider's error may echo the key
        while run_messages and not run_messages[-1].parts:
            # the response the error interrupted before any part arrived, or the tool-results request a cancel
            # interrupted before any result (e.g. while the user was asked to approve a write): pydantic-ai
            # drops an empty request from the next run's history, so recording it would put disk and context
            # out of step
            run_messages = run_messages[:-1]
        if run_messages:
            self.messages = list(run_messages)
        try:
            self._seal(reason)
        except HistoryWriteError as error:  # the caller reports the turn's failure; this is the detail
            logger.info("%s", error)
        self._refresh_title()

    def _seal(self, reason: str) -> None:
        """Close unanswered tool calls and a history ending in a request (see :mod:`history_seal`), then
        record whatever of the working context is not on disk yet."""
        messages = self.messages
        messages.extend(seal(messages, reason, returns=self.shell.take_interrupted()))
        self.manager.record_pending(messages)

    def _memory_note(self, error: AgentRunError) -> str:
        if not isinstance(error, ContextOverflowError):
            return ""
        return memory_overflow_note(self._memory_instructions(), self.memory_path, self.manager.window)

    def _refresh_title(self) -> None:
        self.info.title = self.handle.meta.title

    # -- compaction ------------------------------------------------------------

    async def compact(self, focus: str | None = None) -> CompactionFinished | CompactionFailed:
        """Run tiers 2-3 now on the working context (the /compact command)."""
        if self._busy:
            return CompactionFailed(strategy="summary", trigger="manual", reason="a turn is running",
                                    tokens=self.last_usage.tokens if self.last_usage else 0, focus=focus)
        self._busy = True
        self._last_compaction = None
        try:
            outcome = await self.manager.compact(self.messages, focus=focus)
            self.messages = list(outcome.messages)
            return self._as_recorded(outcome.event)
        finally:
            self._busy = False
            self.handle.flush_meta()

    def _as_recorded(self, event: CompactionFinished | CompactionFailed) -> CompactionFinished | CompactionFailed:
        """``event`` as it went to events.jsonl and the subscribers: priced (what the summarizer cost, what it
        saves per later request) when it was a summary."""
        recorded = self._last_compaction
        if recorded is not None and type(recorded) is type(event) and recorded.timestamp == event.timestamp:
            return recorded
        return event

    def request_compact(self, focus: str | None = None) -> None:
        self.manager.request_compact(focus)

    def compaction_plan(self) -> SummaryPlan:
        """What ``/compact`` would summarize and keep verbatim, before it runs."""
        return self.manager.plan_compaction(self.messages)

    def _instructions(self) -> list[str]:
        return [BASE_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, self._memory_instructions(), self.project_instructions()]

    def refresh_instructions(self) -> bool:
        """Look at the project instruction files again; when they changed, count them again and report the usage
        (the gauge follows an edited AGENTS.md before the next request). True when they changed."""
        if self._busy or not self.project_instructions.changed():
            return False
        self._report_fixed_change()
        return True

    def _report_fixed_change(self) -> None:
        """Re-count the instructions and tool definitions and report the usage with the new count (and the
        manager's current window)."""
        before = self.manager.fixed_tokens
        self.manager.prime_fixed_tokens(self._instructions(), self._tool_definitions())
        estimate = self.manager.estimate_usage([])
        if self.last_usage is not None:
            tokens = max(0, self.last_usage.tokens + self.manager.fixed_tokens - before)
            self._on_chain_event(dataclasses.replace(estimate, tokens=tokens))
        else:
            self._on_chain_event(self.manager.estimate_usage(self.messages))

    def _tool_definitions(self) -> list[ToolDefinition]:
        own = [tool.tool_def for toolset in self._toolsets for tool in toolset.tools.values()]
        return own + (self.mcp.tool_definitions() if self.mcp is not None else [])

    def context_breakdown(self) -> ContextBreakdown:
        """What fills the window now: instructions and memory, tool schemas, then the conversation; and
        what the session, its last turn and its last request cost."""
        project = self.project_instructions()
        breakdown = build_breakdown(
            messages=self.messages,
            instructions=[BASE_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, self._memory_instructions()],
            project_instructions=project,
            project_files=self.project_instructions.paths,
            tool_defs=self._tool_definitions(),
            window=self.manager.window,
            window_source=self.manager.window_source,
            settings=self.settings.context,
            message_count=self.handle.meta.message_count,
            compressions=self.handle.meta.compressions,
            history_file=self.handle.messages.path,
            budget=self.manager.budget,
            ratio=self.manager.accountant.ratio,
        )
        turn = self.cost.turn
        return dataclasses.replace(breakdown, session_cost=self.cost.session.copy(),
                                   turn_cost=turn.copy() if turn.requests or turn.unpriced_requests else None,
                                   last_request_usd=self.cost.last_request_usd)

    async def aclose(self) -> None:
        """Release the session; an empty new session leaves no directory behind."""
        empty = self.handle.meta.message_count == 0 and not self.handle.read_only
        await asyncio.to_thread(self.search.wait_for_records)  # the session's last messages are in the index
        self.manager.close()
        self.handle.close()
        if self._connection is not None:
            await self._connection.aclose()
        if empty and self._discard_empty is not None:
            self._discard_empty()


def _first_line(text: str) -> str:
    """An error's first line, terminal-safe (a provider's error body is hostile text too)."""
    stripped = text.strip()
    return visible(stripped.splitlines()[0]) if stripped else "unknown error"
