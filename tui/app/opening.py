"""Start-up without waiting: the screen shows at once while the session opens in a thread.

:class:`OpeningSession` stands in for the runtime until the real one is ready, so
every panel can be composed (empty) and typing works from the first frame.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from tui.agent.runtime_info import RuntimeInfo
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic_ai.messages import ModelMessage

    from tui.agent.runtime_api import (
        ContextBreakdown,
        EvictedOutput,
        InheritedEvent,
        ModelSwitch,
        RuntimeFactoryAPI,
        SessionRuntimeAPI,
    )
    from tui.agent.shell.user_command import UserCommandResult
    from tui.agent.subagents.subagent_definitions import SubagentCatalog
    from tui.agent.turn_events import TurnEvent
    from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, UsageEvent
    from tui.chain.summary_plan import SummaryPlan

# The stand-in's methods import what they build when called: none runs before the first frame, which needs only
# RuntimeInfo (the title bar).

OPENING_TITLE = "opening the session…"


class SessionNotReady(Exception):
    """Raised by the stand-in for requests that need the real session."""


class OpeningSession:
    """A :class:`~tui.agent.runtime_api.SessionRuntimeAPI` with nothing in it yet."""

    def __init__(self, memory_path: Path, data_root: Path, *, title: str | None = None) -> None:
        """``title``: the title of the session being opened, when known (shown with "opening…")."""
        shown = f"{visible(' '.join(title.split()))} — {OPENING_TITLE}" if title else OPENING_TITLE
        self.info = RuntimeInfo(session_id="", title=shown, model_name="", offline=False)
        self.last_usage: UsageEvent | None = None
        self.memory_path = memory_path
        self.data_root = data_root

    @property
    def busy(self) -> bool:
        return False

    @property
    def session_cost(self) -> None:
        return None

    async def run_turn(self, prompt: str) -> AsyncGenerator[TurnEvent]:
        from tui.agent.turn_events import TurnFailed

        yield TurnFailed("the session is still opening; send again in a moment")

    async def compact(self, focus: str | None = None) -> CompactionFinished | CompactionFailed:
        from tui.chain.events import CompactionFailed

        return CompactionFailed(strategy="summary", trigger="manual", reason="the session is still opening",
                                tokens=0, focus=focus)

    def compaction_plan(self) -> SummaryPlan:
        from tui.chain.summary_plan import SummaryPlan

        return SummaryPlan(0, 0, 0, 0, False)

    def request_compact(self, focus: str | None = None) -> None:
        """Nothing to compact yet."""

    def context_breakdown(self) -> ContextBreakdown:
        raise SessionNotReady("the session is still opening")

    @property
    def context_window(self) -> None:
        return None

    async def switch_model(self, name: str) -> ModelSwitch:
        raise SessionNotReady("the session is still opening")

    def refresh_instructions(self) -> bool:
        return False

    def subscribe(self, listener: Callable[[ChainEvent], None]) -> Callable[[], None]:
        return lambda: None

    def history_count(self) -> int:
        return 0

    def set_write_approver(self, approver: object) -> None:
        """No turn runs before the session is open."""

    def set_command_approver(self, approver: object) -> None:
        """No turn runs before the session is open."""

    def sandbox_notice(self) -> None:
        """Checked once the real session is open."""

    async def run_user_command(self, command: str, on_output: Callable[[str], Awaitable[None]]) -> UserCommandResult:
        from tui.agent.shell.user_command import UserCommandResult

        return UserCommandResult(command, "the session is still opening; run the command in a moment", ran=False)

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]:
        return []

    def past_events(self) -> list[ChainEvent]:
        return []

    def evicted_outputs(self) -> list[EvictedOutput]:
        return []

    def inherited_events(self) -> list[InheritedEvent]:
        return []

    def cancel_subagent(self, number: int) -> bool:
        return False

    def subagent_definitions(self) -> SubagentCatalog:
        from tui.agent.subagents.subagent_definitions import SubagentCatalog

        return SubagentCatalog()

    def rename(self, title: str) -> None:
        raise SessionNotReady("the session is still opening")

    async def aclose(self) -> None:
        """Nothing to release."""


SessionOpener: TypeAlias = "Callable[[], tuple[RuntimeFactoryAPI, SessionRuntimeAPI]]"
"""Runs in a worker thread; returns ``(factory, runtime)`` or raises an error with a one-line message."""
