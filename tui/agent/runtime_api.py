"""The contract between the app and a live session (no Textual here).

:class:`tui.agent.session.factory.SessionRuntime` implements it; app tests may use a
fake with the same shape. The app only talks to a session through this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tui.agent.runtime_info import RuntimeInfo
from tui.agent.tasks.modes import MODE_HINTS, MODE_LABELS, SessionMode, next_mode
from tui.agent.tasks.task_events import TaskStateChanged

if TYPE_CHECKING:  # the app imports this module before pydantic-ai is loaded (fast first frame)
    from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
    from pathlib import Path

    from pydantic_ai.messages import ModelMessage

    from tui.agent.approval.commands import CommandApprover
    from tui.agent.approval.writes import WriteApprover
    from tui.agent.extensions import Extensions
    from tui.agent.mcp.servers import McpServers
    from tui.agent.rewind.restore import ConflictChoice, RestorePlan, RewindPoint
    from tui.agent.shell.user_command import UserCommandResult
    from tui.agent.subagents.subagent_definitions import SubagentCatalog
    from tui.agent.turn_events import TurnEvent
    from tui.chain.events import (
        ChainEvent,
        CompactionFailed,
        CompactionFinished,
        FilesRestored,
        SubagentRan,
        UsageEvent,
    )
    from tui.chain.summary_plan import SummaryPlan
    from tui.store.cost_totals import CostTotals
    from tui.store.search.searcher import HistorySearch
    from tui.store.task_state import TaskState

__all__ = ["MODE_HINTS", "MODE_LABELS", "RuntimeInfo", "SessionMode", "TaskStateAPI", "TaskStateChanged", "next_mode"]


@dataclass(frozen=True)
class ContextSlice:
    """One row of the /context breakdown."""

    label: str
    tokens: int


@dataclass(frozen=True)
class ContextBreakdown:
    """What fills the window, for /context."""

    window: int
    window_source: str
    slices: tuple[ContextSlice, ...]
    compaction_threshold: float
    summarize_threshold: float
    message_count: int
    compressions: int
    history_file: Path | None = None
    history_bytes: int = 0
    session_cost: CostTotals | None = None
    """What the session's requests cost so far (``None``: not recorded)."""
    turn_cost: CostTotals | None = None
    """The last (or running) turn's cost."""
    last_request_usd: float | None = None
    """The last request's price; ``None`` when unknown or no request yet (see ``turn_cost``)."""
    reserve: int = 0
    """Tokens kept free for the answer."""
    margin: int = 0
    """Tokens kept free for estimate error."""
    calibration: float = 1.0
    """Provider tokens per estimated token, learned from the provider's counts (1.0: not measured yet)."""
    project_files: tuple[Path, ...] = ()
    """The project instruction files (AGENTS.md / CLAUDE.md) in the instructions, outermost first."""
    freed_too_little: int = 0
    """Summaries written and then rejected for freeing too little (the history was kept as it was)."""
    other_failed_compactions: int = 0
    """Other compaction attempts that changed nothing (a summarizer error, nothing to summarize…)."""
    auto_compact: bool = True
    """False when automatic compaction is off for the session (the pre-flight still keeps requests in the window)."""
    configured_threshold: float = 0.85
    """The compaction threshold the config gives (``[context] compaction_threshold``): /context's reset goes back to it."""
    configured_auto: bool = True
    """Whether the config has automatic compaction on (``[context] auto_compact``)."""
    counted: int | None = None
    """The gauge's figure: the provider's count at the last request plus an estimate of what came after
    (``None`` before any); the slices are estimates of every part, so they may sum to a little more or less."""
    subagents: tuple[SubagentRan, ...] = ()
    """The session's subagents, oldest first: each one's own context (on its own window, none of it in this one),
    requests and cost (included in ``session_cost``)."""

    @property
    def total(self) -> int:
        """The slices' sum: each part's estimated size."""
        return sum(s.tokens for s in self.slices)

    @property
    def limit(self) -> int:
        """The most a request may carry: the window less the answer reserve and the margin."""
        return self.window - self.reserve - self.margin


@dataclass(frozen=True)
class EvictedOutput:
    """One saved tool output in large_tool_results/ belonging to this session."""

    path: Path
    tool_name: str
    size_bytes: int
    tokens: int
    timestamp: float
    tool_call_id: str = ""
    args: str = ""
    """The call's arguments as JSON (empty for outputs saved before deep-tui recorded them)."""
    inherited_from: str = ""
    """The ancestor session that saved it, for an output a fork inherited (empty: saved by this session)."""


@dataclass(frozen=True)
class InheritedEvent:
    """A chain event of a fork's ancestor session, from before the point the fork copied
    (``tui.agent.session.inherited_events``)."""

    event: ChainEvent
    session: str
    """The ancestor whose events.jsonl holds it."""


@dataclass(frozen=True)
class ModelSwitch:
    """What ``/model NAME`` did: the model before and after, the window now and where it came from."""

    previous: str
    name: str
    window: int
    window_source: str
    over_window: bool
    """The context is past the compaction threshold of the new window: the next request compacts first."""


class SessionRuntimeAPI(Protocol):
    """A session the app can drive: turns, compaction, history, events."""

    info: RuntimeInfo
    last_usage: UsageEvent | None
    memory_path: Path
    data_root: Path

    @property
    def busy(self) -> bool: ...

    @property
    def session_cost(self) -> CostTotals | None:
        """What the session's requests cost so far (``None``: not recorded, or not open yet)."""
        ...

    def run_turn(self, prompt: str) -> AsyncGenerator[TurnEvent]:
        """Run one user turn; cancelling the consuming task cancels the run (recorded up to there)."""
        ...

    async def compact(self, focus: str | None = None) -> CompactionFinished | CompactionFailed:
        """Force tiers 2-3 now (the /compact command)."""
        ...

    def request_compact(self, focus: str | None = None) -> None: ...

    def compaction_plan(self) -> SummaryPlan:
        """What ``compact`` would summarize and keep verbatim, before it runs."""
        ...

    def context_breakdown(self) -> ContextBreakdown: ...

    @property
    def context_window(self) -> int | None:
        """The window the session resolved for its model (flag, config, the model, prices), as the gauge shows it;
        ``None`` while the session opens."""
        ...

    def refresh_instructions(self) -> bool:
        """Look at the project's AGENTS.md / CLAUDE.md again; when they changed, report the new usage. True when
        they changed."""
        ...

    def subscribe(self, listener: Callable[[ChainEvent], None]) -> Callable[[], None]:
        """Call ``listener`` for every chain event; returns an unsubscribe function."""
        ...

    def history_count(self) -> int:
        """Number of messages in messages.json (cheap)."""
        ...

    async def switch_model(self, name: str) -> ModelSwitch:
        """Talk to model ``name`` from the next request on; ``tui.agent.models.choice.ModelConfigError`` (one line) when
        it cannot be used, and then nothing changed."""
        ...

    def set_write_approver(self, approver: WriteApprover | None) -> None:
        """Who is asked before the agent changes a file (the app's approval dialog)."""
        ...

    def set_command_approver(self, approver: CommandApprover | None) -> None:
        """Who is asked before the agent runs a shell command (the app's command dialog)."""
        ...

    def sandbox_notice(self) -> str | None:
        """Why commands cannot run sandboxed here (or that ``--no-sandbox`` is on), or ``None``; may block briefly."""
        ...

    async def run_user_command(self, command: str, on_output: Callable[[str], Awaitable[None]]) -> UserCommandResult:
        """Run the user's ``!command`` in the sandbox (``on_output`` gets its output as it arrives); the model reads
        it with the next prompt. Cancelling the caller kills the command."""
        ...

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]:
        """Messages ``[start:stop]`` of messages.json, for the chat pane and dividers."""
        ...

    def past_events(self) -> list[ChainEvent]:
        """The session's chain events, oldest first: events.jsonl as read when the session opened, then
        every event since (kept in memory, so asking costs no file read)."""
        ...

    def evicted_outputs(self) -> list[EvictedOutput]:
        """This session's saved outputs and, in a fork, those it inherited (``inherited_from`` set)."""
        ...

    def inherited_events(self) -> list[InheritedEvent]:
        """A fork's ancestors' chain events from before the fork point (see ``tui.agent.session.inherited_events``)."""
        ...

    def cancel_subagent(self, number: int) -> bool:
        """Stop subagent ``number`` of the running turn (its ``task`` call then tells the model that the user
        cancelled it); False when it is not running."""
        ...

    def subagent_definitions(self) -> SubagentCatalog:
        """The subagent types the ``task`` tool offers (the user's, a trusted project's) and the files skipped."""
        ...

    def rename(self, title: str) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class TaskStateAPI(Protocol):
    """What the app's Todo panel, compact line, ``/keep``, mode cycling (Shift+Tab) and ``/context``'s compaction
    controls need of a session (a :class:`SessionRuntimeAPI` that is open; changes arrive as
    :class:`~tui.agent.tasks.task_events.TaskStateChanged` and usage events)."""

    @property
    def mode(self) -> SessionMode: ...

    def set_mode(self, mode: str) -> SessionMode:
        """Switch the mode from the next tool call on (``ValueError`` for an unknown one)."""
        ...

    def task_state(self) -> TaskState: ...

    def add_keep(self, text: str) -> TaskState:
        """Add a standing instruction (``TaskStateError``: empty, too long, too many; ``OSError``: not saved)."""
        ...

    def remove_keep(self, index: int) -> TaskState: ...

    def set_compaction(self, *, threshold: float | None = None, auto: bool | None = None) -> None:
        """The automatic compaction threshold and its off switch, for this session (``ConfigError``: out of range)."""
        ...

    def reset_compaction(self) -> None:
        """The config's threshold and switch again, for this session."""
        ...

    def set_summary_consent(self, ask: Callable[[int, int], Awaitable[bool]] | None) -> None:
        """Who is asked (tokens, limit) before a summary when automatic compaction is off (``None``: nobody)."""
        ...


@runtime_checkable
class RewindAPI(Protocol):
    """A session's restore points (``/rewind``): :class:`tui.agent.session.runtime.SessionRuntime` has them, the
    stand-in shown while a session opens has none."""

    def restore_point_messages(self) -> frozenset[int]:
        """The message numbers that have a restore point (the chat marks those prompts)."""
        ...

    async def rewind_points(self) -> list[RewindPoint]:
        """The restore points, newest first, each with the files its prompt changed (``/rewind``)."""
        ...

    async def plan_rewind(self, message: int) -> RestorePlan:
        """What restoring the files to before ``message`` would change now, and its conflicts (``RewindError``)."""
        ...

    async def rewind_preview(self, plan: RestorePlan, paths: Sequence[str] = ()) -> str:
        """The diff from the files now to what ``plan`` makes them."""
        ...

    async def rewind_files(self, plan: RestorePlan, choices: Mapping[str, ConflictChoice] | None = None, *,
                           force: bool = False, source_session: str | None = None) -> FilesRestored:
        """Restore ``plan``'s files (keep mine / take the snapshot per conflicting file); recorded in this
        session with its own restore point, the undo (``RewindError`` when a conflict has no answer)."""
        ...


class RuntimeFactoryAPI(Protocol):
    """Opens sessions for the app (session switching, new, fork).

    Each call returns a runtime holding the session's lock; the caller closes
    the previous runtime (``aclose``) after the new one opened successfully,
    so a failed switch never loses the current session. Errors raise
    ``tui.store.store_errors.StoreError`` subclasses with a one-line message.
    """

    search: HistorySearch
    """The search index over every session (the picker's content search)."""
    workdir: Path
    """The working directory the sessions' agents work in (``@`` completes its files)."""

    mcp: McpServers | None
    """The process's MCP servers (``None``: none configured); the app starts them after its first frame."""
    extensions: Extensions
    """The skills and custom slash commands of the user and (when trusted) the project."""

    async def open_session(self, session_id: str) -> SessionRuntimeAPI: ...

    def use_model(self, name: str) -> None:
        """Sessions opened from now on talk to model ``name`` (after a ``/model`` switch)."""
        ...

    async def new_session(self) -> SessionRuntimeAPI: ...

    async def fork_session(self, session_id: str, upto: int | None = None) -> SessionRuntimeAPI:
        """Fork ``session_id`` (whole, or its messages ``[0:upto]``) and open the fork."""
        ...
