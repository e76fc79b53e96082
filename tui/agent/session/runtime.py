"""One open session: its agent, its context chain, its history on disk (its turns: :mod:`tui.agent.session.turns`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from tui.agent.approval.commands import CommandApprover
from tui.agent.approval.writes import WriteApprover
from tui.agent.attachments.file_mentions import MentionAttacher
from tui.agent.hooks.compaction_hooks import CompactionHooks
from tui.agent.hooks.hook_capability import HookCapability
from tui.agent.hooks.hook_runner import HookRunner
from tui.agent.mcp.servers import McpServers
from tui.agent.models.choice import ModelChoice
from tui.agent.models.cost import CostCapability, CostTracker, chat_input_rate, price_compaction
from tui.agent.models.provider_http import ProviderConnection
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.rewind.restore_point_capability import RewindCapability
from tui.agent.runtime_api import ContextBreakdown, EvictedOutput, InheritedEvent, RuntimeInfo
from tui.agent.session.compaction_actions import SessionCompaction
from tui.agent.session.context_breakdown import build_breakdown
from tui.agent.session.delegation import SessionSubagents
from tui.agent.session.event_history import EventHistory
from tui.agent.session.handle_recorder import HandleRecorder
from tui.agent.session.model_switch import SessionModelSwitch
from tui.agent.session.project_instructions import ProjectInstructionsSource
from tui.agent.session.rewinds import SessionRewinds
from tui.agent.session.shell_access import SessionShellAccess
from tui.agent.session.task_actions import SessionTaskActions
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.session.turns import SessionTurns
from tui.agent.skills.catalog import SkillCatalog, skills_instructions
from tui.agent.skills.skill_tools import skills_toolset
from tui.agent.subagents.subagent_definitions import SubagentCatalog
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
from tui.chain.request_facts import takes_images
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


class SessionRuntime(SessionTaskActions, SessionRewinds, SessionTurns, SessionSubagents, SessionCompaction,
                     SessionModelSwitch, SessionShellAccess):
    """Implements :class:`tui.agent.runtime_api.SessionRuntimeAPI` for one session. This class assembles the session;
    its parts live in the mixins it inherits (turns: :class:`~tui.agent.session.turns.SessionTurns`; rewinds, task
    actions, subagents, compaction, the model switch, the user's shell commands)."""

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
                                        self._on_chain_event, budget_tokens=self._attachment_budget,
                                        takes_images=lambda: takes_images(self._chat_model))
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
        self.approval_gate = parts.approval_gate
        self.shell = parts.shell
        self.modes = parts.modes
        self._memory_instructions = memory_instructions(self.memory)
        self.project_instructions = ProjectInstructionsSource(workdir, data_dir.root, warn=self.info.warnings.append)
        """AGENTS.md / CLAUDE.md from the repository root down to the workdir (refused files: one warning each)."""
        self.skills = skills or SkillCatalog()
        self._skills_instructions = [text] if (text := skills_instructions(self.skills)) else []
        self.hook_runner = HookRunner(settings.hooks, parts.shell.sandbox, workdir, self.event_history.notify,
                                      handle.id)
        """The user's (and a trusted project's) ``[[hooks.*]]``: their notices reach subscribers at once."""
        if settings.hooks.pre_compact or settings.hooks.post_compact:
            self.manager.summary_hooks = CompactionHooks(self.hook_runner)
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
            capabilities=[*parts.capabilities, RewindCapability(self.checkpoints), *self._tool_hooks(),
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

    def _tool_hooks(self, agent_name: str | None = None) -> list[HookCapability]:
        """The ``[[hooks.pre_tool]]`` / ``[[hooks.post_tool]]`` capability (none when no such hook is configured),
        for this session's agent or (``agent_name``) one of its subagents."""
        if not (self.settings.hooks.pre_tool or self.settings.hooks.post_tool):
            return []
        return [HookCapability(self.hook_runner, agent_name)]

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

    def set_write_approver(self, approver: WriteApprover | None) -> None:
        """Who is asked before a file write (the app's dialog); ``None``: nobody, so an ``ask`` is refused."""
        self.approval_gate.approver = approver

    def set_command_approver(self, approver: CommandApprover | None) -> None:
        """Who is asked before a shell command runs (the app's dialog); ``None``: an ``ask`` is refused."""
        if self.approval_gate.commands is not None:
            self.approval_gate.commands.approver = approver

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]:
        return self.handle.messages.load_range(start, stop)

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
            image_tokens=self.manager.accountant.estimator.image_tokens,
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
        await self.hook_runner.settle()  # a cancelled turn's stop hooks (each ends at its timeout)
        await self.checkpoints.settle()  # the last prompt's end snapshot is recorded before the session closes
        await asyncio.to_thread(self.search.wait_for_records)  # the session's last messages are in the index
        self.manager.close()
        self.handle.close()
        if self._connection is not None:
            await self._connection.aclose()
        if empty and self._discard_empty is not None:
            self._discard_empty()

