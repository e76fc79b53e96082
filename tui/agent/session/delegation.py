"""A session's subagents (the ``task`` tool's): what the session lends them, and what the app may ask of them."""

from __future__ import annotations

from collections.abc import Callable

from pydantic_ai.models import Model

from tui.agent.hooks.compaction_hooks import CompactionHooks
from tui.agent.hooks.hook_capability import HookCapability
from tui.agent.hooks.hook_runner import HookRunner
from tui.agent.models.cost import CostTracker
from tui.agent.models.provider_http import ProviderConnection
from tui.agent.models.switch import build_for_switch
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.rewind.restore_point_capability import RewindCapability
from tui.agent.session.project_instructions import ProjectInstructionsSource
from tui.agent.session.run_events import run_events
from tui.agent.session.toolsets import AgentParts
from tui.agent.subagents.progress import SubagentStatus
from tui.agent.subagents.subagent_definitions import SubagentCatalog
from tui.agent.subagents.subagent_pool import SubagentPool
from tui.agent.subagents.subagent_run import SubagentEnvironment
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent
from tui.store import SessionHandle
from tui.store.subagent_histories import SubagentHistories


class SessionSubagents:
    """The subagent part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up what is named here)."""

    settings: Settings
    handle: SessionHandle
    subagents: SubagentPool
    cost: CostTracker
    project_instructions: ProjectInstructionsSource
    checkpoints: PromptCheckpoints
    _chat_model: Model
    _summarizer_model: Model | None
    _on_chain_event: Callable[[ChainEvent], None]
    _tool_hooks: Callable[[str | None], list[HookCapability]]
    hook_runner: HookRunner

    def _subagent_pool(self, parts: AgentParts, catalog: SubagentCatalog | None, data_dir: DataDir,
                       connection: ProviderConnection | None) -> SubagentPool:
        """The pool the ``task`` tool runs subagents in: this session's models (as they are when one starts), its
        tools but ``task``, its capabilities with the approval gate naming the subagent, the prompt's restore point
        taken before a subagent's first change too (``/rewind`` undoes what its subagents changed), its cost and
        events."""
        settings, handle = self.settings, self.handle
        environment = SubagentEnvironment(
            settings=settings, data_dir=data_dir, chat_model=lambda: self._chat_model,
            summarizer_model=lambda: self._summarizer_model,
            toolsets=lambda: [*parts.toolsets, *parts.extra_toolsets],
            capabilities=lambda label: [*parts.subagent_capabilities(label), RewindCapability(self.checkpoints),
                                        *self._tool_hooks(label)],
            instructions=lambda: [self.project_instructions()],
            cost=self.cost, record_event=self._on_chain_event, run_events=run_events,
            file_writing_tools=parts.kinds.file_writing,
            summary_hooks=lambda label: CompactionHooks(self.hook_runner, label) if (
                settings.hooks.pre_compact or settings.hooks.post_compact) else None)
        return SubagentPool(environment, SubagentHistories(handle.directory), catalog or SubagentCatalog(),
                            build_model=lambda name: build_for_switch(name, settings, connection),
                            read_only=lambda: handle.read_only)

    def cancel_subagent(self, number: int) -> bool:
        """Stop subagent ``number`` of the running turn (the model reads that the user cancelled it); False when
        it is not running."""
        return self.subagents.cancel(number)

    def running_subagents(self) -> list[SubagentStatus]:
        """The subagents running now (their number, description, tool in use, tokens…)."""
        return self.subagents.running()

    def subagent_definitions(self) -> SubagentCatalog:
        """The subagent types the ``task`` tool offers (the user's, a trusted project's) and the files skipped."""
        return self.subagents.catalog
