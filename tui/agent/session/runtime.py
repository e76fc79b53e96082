"""One open session: its agent, its context chain, its history on disk (its turns: :mod:`tui.agent.session.turns`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from tui.agent.approval.commands import CommandApprover
from tui.agent.approval.plan_mode import USER_COMMAND_REFUSAL
from tui.agent.approval.writes import WriteApprover
from tui.agent.attachments.file_mentions import MentionAttacher
from tui.agent.hooks.hook_capability import HookCapability
from tui.agent.mcp.servers import McpServers
from tui.agent.models.choice import OFFLINE_MODEL_NAME, ModelChoice, ModelConfigError
from tui.agent.models.cost import CostCapability, CostTracker, chat_input_rate, price_compaction
from tui.agent.models.provider_http import ProviderConnection
from tui.agent.models.switch import build_for_switch, summarizer_after_switch
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.rewind.restore_point_capability import RewindCapability
from tui.agent.runtime_api import ContextBreakdown, EvictedOutput, InheritedEvent, ModelSwitch, RuntimeInfo
from tui.agent.session.context_breakdown import build_breakdown
from tui.agent.session.delegation import SessionSubagents
from tui.agent.session.event_history import EventHistory
from tui.agent.session.handle_recorder import HandleRecorder
from tui.agent.session.project_instructions import ProjectInstructionsSource
from tui.agent.session.rewinds import SessionRewinds
from tui.agent.session.task_actions import SessionTaskActions
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.session.turns import SessionTurns
from tui.agent.shell.execute_tool import ShellState
from tui.agent.shell.user_command import UserCommandResult, run_user_command, user_command_request
from tui.agent.skills.catalog import SkillCatalog, skills_instructions
from tui.agent.skills.tools import skills_toolset
from tui.agent.subagents.definitions import SubagentCatalog
from tui.agent.subagents.task_tool import task_toolset
from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.todo_tools import todo_toolset
from tui.agent.tools.memory import MemoryFile, memory_instructions
from tui.agent.tools.path_policy import PathPolicy
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.calibration import CALIBRATION_FILE_NAME
from tui.chain.estimate import CHARS_PER_TOKEN
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, SubagentRan, UsageEvent
from tui.chain.manager import RECOVERY_INSTRUCTIONS, ContextManager
from tui.chain.summary_plan import SummaryPlan
from tui.store import SessionHandle
from tui.store.cost_totals import CostTotals
from tui.store.data_links import planted_links
from tui.store.search.searcher import HistorySearch

BASE_INSTRUCTIONS = """\
You are deep-tui's assistant, working in the user's project directory with file
tools (read_file, write_file, edit_file, ls, glob, grep), shell commands (execute: sandboxed,
each asks the user first), a long-term memory
(read_memory, write_memory, update_memory), search_conversation_history (this session
or every session), read_conversation_message (a recorded message, verbatim), a todo list
(write_todos, read_todos) for any task of three steps or more, and task (a side task handed to a subagent
with a fresh context: only its answer enters yours).
Be concise and precise; prefer reading files over guessing."""

ATTACHMENT_SHARE_DIVISOR = 4
"""A prompt's attached files take at most a quarter of what a request may carry (see ``_attachment_budget``)."""
PAGE_ROOM_CHARS = 400
"""A read_file page is this much smaller than the eviction limit: its line numbers and footer fit too (a page the
chain saved to disk again would only point at itself)."""


MIN_SUBAGENT_WINDOW = 16_000
"""Below this window (tokens) the session offers no ``task`` tool."""


class SessionRuntime(SessionTaskActions, SessionRewinds, SessionTurns, SessionSubagents):
    """Implements :class:`tui.agent.runtime_api.SessionRuntimeAPI` for one session (its turns:
    :class:`~tui.agent.session.turns.SessionTurns`)."""

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
        skills: SkillCatalog | None = None,
        subagents: SubagentCatalog | None = None,
    ) -> None:
        """``connection``: the HTTP clients of the models (closed with the session); its waits and retries
        reach subscribers as provider events. ``mcp``: the process's MCP servers (their tools are offered;
        they outlive the session). ``skills``: the skills offered (their names and descriptions in the
        instructions, ``load_skill`` and ``read_skill_resource`` among the tools). ``subagents``: the subagent
        definitions the ``task`` tool offers (the user's, and a trusted project's)."""
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
        self.tasks = TaskBoard(handle.task_state, notify=self.event_history.notify, mode=lambda: self.mode)
        """The todo list and the standing instructions (/keep): in the instructions of every request."""
        if handle.meta.message_count:
            self.tasks.adopt_from_history(handle.messages)  # a pydantic-deep session keeps its list in its calls
        self.info.warnings.extend(handle.task_state.warnings)
        parts = build_agent_parts(workdir=workdir, data_dir=data_dir, memory=self.memory, search=self.search,
                                  session_id=handle.id, turn_start=lambda: self._turn_start,
                                  writes=settings.tools.writes,  # type: ignore[arg-type]  # validated by config
                                  mcp=mcp, mcp_default=settings.tools.mcp,  # type: ignore[arg-type]
                                  tool_timeout=settings.tools.timeout,
                                  commands=settings.tools.commands,  # type: ignore[arg-type]  # validated by config
                                  network=settings.tools.network, sandboxed=settings.tools.sandbox,
                                  page_chars=lambda: self.manager.eviction_threshold * CHARS_PER_TOKEN - PAGE_ROOM_CHARS,
                                  mode=settings.tools.mode, task_tools=todo_toolset(self.tasks))
        self.tool_kinds = parts.kinds
        self.manager = ContextManager(
            settings=settings.context,
            large_results_dir=data_dir.large_results_dir,
            recorder=HandleRecorder(handle, on_recorded=self._index_recorded),
            event_sink=self._on_chain_event,
            summarizer_model=summarizer_model,
            config_window=settings.context.window,
            chat_model=chat_model,
            file_writing_tools=parts.kinds.file_writing,
            calibration_path=data_dir.root / CALIBRATION_FILE_NAME,
            summary_retry_from=handle.meta.summary_retry_from,  # a `run --continue` waits as the last run did
            on_summary_backoff=handle.record_summary_backoff,
        )
        self.restore_compaction()  # the threshold and off switch set in /context for this session before
        self._messages: list[ModelMessage] | None = None
        self.attacher = MentionAttacher(PathPolicy(workdir=workdir, data_root=data_dir.root),
                                        data_dir.large_results_dir, lambda: self.manager.eviction_threshold,
                                        self._on_chain_event, budget_tokens=self._attachment_budget)
        """Attaches the files a prompt mentions with ``@path``."""
        parent_upto = (handle.meta.parent.index or 0) if handle.meta.parent else 0
        self.cost = CostTracker(handle.meta.cost, had_history=handle.meta.message_count > parent_upto,
                                emit=self.event_history.notify, persist=handle.record_cost,
                                input_rate=lambda: chat_input_rate(self._chat_model))
        self._turn_start = handle.meta.message_count
        self.mcp = mcp
        self.checkpoints = PromptCheckpoints(handle, data_dir.root, workdir, warn=self.info.warnings.append,
                                             timeout=settings.rewind.timeout,
                                             max_file_bytes=int(settings.rewind.max_file_mb * 1024 * 1024),
                                             enabled=settings.rewind.enabled)
        """The restore points: a snapshot of the workdir before each prompt's first change (``/rewind``)."""
        self.write_gate = parts.write_gate
        self.shell = parts.shell
        self.modes = parts.modes
        self._memory_instructions = memory_instructions(self.memory)
        self.project_instructions = ProjectInstructionsSource(workdir, data_dir.root, warn=self.info.warnings.append)
        """AGENTS.md / CLAUDE.md from the repository root down to the workdir (refused files: one warning each)."""
        self.skills = skills or SkillCatalog()
        self._skills_instructions = [text] if (text := skills_instructions(self.skills)) else []
        self.subagents = self._subagent_pool(parts, subagents, data_dir, connection)
        # the task tool costs its definition in every request: offered when the window can afford it (and a subagent's
        # own window would hold its work), not at a few thousand tokens
        delegating = self.manager.window >= MIN_SUBAGENT_WINDOW
        self._toolsets = [*parts.toolsets, *([skills_toolset(self.skills)] if self.skills else []),
                          *([task_toolset(self.subagents)] if delegating else [])]
        self.agent: Agent[None, str] = Agent(
            chat_model,
            instructions=[BASE_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, self._memory_instructions,
                          self.project_instructions, self.tasks.instructions, *self._skills_instructions],
            toolsets=[*self._toolsets, *parts.extra_toolsets],
            capabilities=[*parts.capabilities, RewindCapability(self.checkpoints), *self._hooks(parts.shell),
                          *self.manager.capabilities(),
                          CostCapability(self.cost)],
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

    def _hooks(self, shell: ShellState) -> list[HookCapability]:
        """The ``[[hooks.pre_tool]]`` / ``[[hooks.post_tool]]`` capability (none when no hook is configured); a
        hook runs in the commands' sandbox, and not at all when the sandbox is on but cannot run."""
        if not (self.settings.hooks.pre_tool or self.settings.hooks.post_tool):
            return []
        sandbox = shell.sandbox

        def launch(command: str) -> tuple[list[str], dict[str, str] | None]:
            if (why := sandbox.unavailable()) is not None:
                return ["/bin/sh", "-c", "echo \"$0\" >&2; exit 1", f"hooks run sandboxed, and {why}"[:300]], None
            return sandbox.argv(command), sandbox.environment()

        return [HookCapability(self.settings.hooks, launch, self.info.warnings.append, self.handle.id)]

    def _attachment_budget(self) -> int:
        """What a prompt's attached files may take together: a quarter of what a request may carry (the prompt
        is the one part of a request no compaction can cut), and at least one file's eviction limit."""
        return max(self.manager.eviction_threshold, self.manager.limit // ATTACHMENT_SHARE_DIVISOR)

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
        :class:`~tui.agent.models.choice.ModelConfigError` and changes nothing."""
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
        return [BASE_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, self._memory_instructions(), self.project_instructions(),
                self.tasks.instructions(), *self._skills_instructions]

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

    @property
    def context_window(self) -> int:
        """The window the context manager resolved for the chat model."""
        return self.manager.window

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
            settings=self.manager.settings,
            message_count=self.handle.meta.message_count,
            compressions=self.handle.meta.compressions,
            history_file=self.handle.messages.path,
            budget=self.manager.budget,
            ratio=self.manager.accountant.ratio,
            task_state=self.tasks.instructions(),
        )
        turn = self.cost.turn
        failed = [event for event in self.past_events() if isinstance(event, CompactionFailed)]
        too_little = sum(1 for event in failed if event.freed_too_little)
        subagents = tuple(event for event in self.past_events() if isinstance(event, SubagentRan))
        return dataclasses.replace(breakdown, session_cost=self.cost.session.copy(), subagents=subagents,
                                   freed_too_little=too_little, other_failed_compactions=len(failed) - too_little,
                                   counted=self.last_usage.tokens if self.last_usage is not None else None,
                                   turn_cost=turn.copy() if turn.requests or turn.unpriced_requests else None,
                                   last_request_usd=self.cost.last_request_usd,
                                   configured_threshold=self.settings.context.compaction_threshold,
                                   configured_auto=self.settings.context.auto_compact)

    async def aclose(self) -> None:
        """Release the session; an empty new session leaves no directory behind."""
        empty = self.handle.meta.message_count == 0 and not self.handle.read_only
        await self.checkpoints.settle()  # the last prompt's end snapshot is recorded before the session closes
        await asyncio.to_thread(self.search.wait_for_records)  # the session's last messages are in the index
        self.manager.close()
        self.handle.close()
        if self._connection is not None:
            await self._connection.aclose()
        if empty and self._discard_empty is not None:
            self._discard_empty()

