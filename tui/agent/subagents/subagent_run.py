"""One subagent's run: a fresh history, the parent's tools (minus ``task``), its own context chain on its own
window, its whole history in ``sessions/<id>/subagents/<n>/messages.json``.

The subagent's agent is built for the one task: the parent's tool sets (filtered by the definition's ``tools``),
capabilities the session builds per subagent (the workspace, the approval gate naming the subagent, the tool time
limit), a :class:`~tui.chain.manager.ContextManager` of its own (eviction, tier 2, summaries and pre-flight
against the subagent's model's window, recording into its own file), and cost capabilities pricing every
response into the session's totals and its own. Nothing of the parent's history goes into its requests: the
history starts with its instructions and the prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResult
from pydantic_ai.toolsets import AbstractToolset

from tui.agent.models.cost import CostCapability, CostTracker, chat_input_rate, price_compaction
from tui.agent.models.provider_http import provider_failure
from tui.agent.subagents.progress import SubagentProgress, SubagentStatus
from tui.agent.subagents.subagent_definitions import SubagentDefinition
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.base.redaction import redact
from tui.chain.calibration import CALIBRATION_FILE_NAME
from tui.chain.estimate import text_tokens
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, UsageEvent
from tui.chain.manager import RECOVERY_INSTRUCTIONS, ContextManager
from tui.chain.summary_hooks import SummaryHooks
from tui.store.cost_totals import CostTotals
from tui.store.subagent_histories import SubagentHistory
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

TASK_TOOL_NAME = "task"

SUBAGENT_INSTRUCTIONS = """\
You are a subagent of deep-tui's assistant: it gave you one task. Do it with your tools, then answer. Your final
answer is all it will see of your work (not your tool calls, nor their outputs): make it complete and
self-contained — the facts, file paths, line numbers and values it needs — and no longer than that. You cannot ask
the user or the assistant anything: when something is unclear, make the most reasonable choice and say which."""


class RunEvents(Protocol):
    """:func:`tui.agent.session.run_events.run_events`: a run's stream events, then its result."""

    def __call__(self, agent: Agent[None, Any], prompt: str, *, message_history: Sequence[ModelMessage],
                 workspace: Literal["new"] | None = None) -> AsyncIterator[AgentStreamEvent | AgentRunResult[Any]]: ...


@dataclass
class SubagentEnvironment:
    """What the session lends its subagents (callables: the session's model and tools may change between turns)."""

    settings: Settings
    data_dir: DataDir
    chat_model: Callable[[], Model]
    summarizer_model: Callable[[], Model | None]
    toolsets: Callable[[], Sequence[AbstractToolset[None]]]
    """The session's tool sets, ``task`` not among them."""
    capabilities: Callable[[str], list[AbstractCapability[None]]]
    """Per subagent (its label): the workspace, the approval gate naming it, the tool time limit…"""
    instructions: Callable[[], list[str]]
    """What every subagent is told besides its own instructions (the project's AGENTS.md)."""
    cost: CostTracker
    """The session's: every subagent response is added to it."""
    record_event: Callable[[ChainEvent], None]
    """The session's event history (events.jsonl and the subscribers)."""
    run_events: RunEvents
    file_writing_tools: frozenset[str] = frozenset()
    """The tools that write files (the chain's tier 2 points their old arguments at the files)."""
    summary_hooks: Callable[[str], SummaryHooks | None] = lambda label: None
    """Per subagent (its label): told around each of its summaries (the session's pre_compact / post_compact
    hooks), or ``None``."""


@dataclass(frozen=True)
class SubagentOutcome:
    """How a subagent's run ended: its answer, or why there is none."""

    state: Literal["finished", "failed", "cancelled"]
    answer: str = ""
    reason: str = ""


Emit = Callable[[SubagentProgress], Awaitable[None]]


class SubagentRun:
    """One subagent, run once."""

    def __init__(self, env: SubagentEnvironment, definition: SubagentDefinition, model: Model,
                 history: SubagentHistory, status: SubagentStatus, emit: Emit) -> None:
        self.env = env
        self.definition = definition
        self.history = history
        self.status = status
        self._emit = emit
        self.user_cancelled = False
        self.totals = CostTotals()
        self.cost = CostTracker(None, had_history=False, emit=self._on_cost, persist=lambda _totals: None,
                                input_rate=lambda: chat_input_rate(model))
        summarizer = env.summarizer_model()
        settings = env.settings
        self.manager = ContextManager(
            settings=settings.context,
            large_results_dir=env.data_dir.large_results_dir,
            recorder=_HistoryRecorder(history),
            event_sink=self._on_chain_event,
            summarizer_model=summarizer if summarizer is not None else None,
            config_window=settings.context.window if model is env.chat_model() else None,
            chat_model=model,
            calibration_path=env.data_dir.root / CALIBRATION_FILE_NAME,
            file_writing_tools=env.file_writing_tools,
        )
        self.manager.summary_hooks = env.summary_hooks(self.label)
        allowed = set(definition.tools) if definition.tools is not None else None
        toolsets = [toolset.filtered(_tool_filter(allowed)) for toolset in env.toolsets()]
        instructions = [SUBAGENT_INSTRUCTIONS, RECOVERY_INSTRUCTIONS, *env.instructions()]
        if definition.prompt:
            instructions.append(definition.prompt)
        self.agent: Agent[None, str] = Agent(
            model,
            instructions=instructions,
            toolsets=toolsets,
            capabilities=[*env.capabilities(self.label), *self.manager.capabilities(), CostCapability(env.cost),
                          CostCapability(self.cost)],
        )
        self._pending: list[asyncio.Task[None]] = []
        self._prompt = ""
        self.final_messages: list[ModelMessage] = []
        """Its whole history once it ended."""

    @property
    def label(self) -> str:
        """How the approval dialogs name it: ``subagent 2 (explore): find the config loader``."""
        status = self.status
        return visible(f"subagent {status.number} ({status.name}): {status.description}")

    # -- running -----------------------------------------------------------------------

    async def run(self, prompt: str) -> SubagentOutcome:
        """Run the subagent to its answer. A cancellation by the user (:meth:`cancel`) ends it with a
        ``cancelled`` outcome; one of the parent's turn is recorded, then raised on."""
        self.manager.begin_user_turn()
        self._prompt = prompt
        messages: list[ModelMessage] = []
        self.status.state = "running"
        await self._tell()
        prompt_tokens = text_tokens(prompt)
        if prompt_tokens > self.manager.limit // 2:  # its own window could not hold the task and the work on it
            try:
                return self._end("failed", [], reason=(
                    f"the prompt is about {prompt_tokens:,} tokens, more than half of what the subagent's window lets "
                    f"a request carry ({self.manager.limit:,}): point it to files instead of pasting them"))
            finally:
                await self._settle()
        try:
            result: AgentRunResult[str] | None = None
            with capture_run_messages() as messages:
                async for event in self.env.run_events(self.agent, prompt, message_history=[], workspace="new"):
                    if isinstance(event, AgentRunResult):
                        result = event
                    elif isinstance(event, FunctionToolCallEvent):
                        self.status.tool = visible(event.part.tool_name)
                        self.status.tools_used.append(self.status.tool)
                        await self._tell()
                    elif isinstance(event, FunctionToolResultEvent):
                        self.status.tool = None
                        await self._tell()
            if result is None:
                return self._end("failed", messages, reason="the run ended without a result")
            answer = str(result.output)
            return self._end("finished", list(result.all_messages()), answer=answer)
        except asyncio.CancelledError as cancellation:
            stopped = RunCancelled.from_cancellation(cancellation)
            self._end("cancelled", list(stopped.all_messages()) if stopped else messages,
                      reason="cancelled by the user" if self.user_cancelled else "the parent's turn was cancelled")
            if self.user_cancelled:
                return SubagentOutcome("cancelled", reason="cancelled by the user")
            raise
        except RunCancelled as stopped:
            return self._end("cancelled", list(stopped.all_messages()), reason="cancelled")
        except Exception as error:  # a provider or tool failure ends the subagent, never the parent's turn
            failure = provider_failure(error)
            reason = str(failure) if failure is not None else f"{type(error).__name__}: {_first_line(str(error))}"
            if failure is None:
                logger.warning("subagent %d failed", self.status.number, exc_info=True)
            return self._end("failed", messages, reason=redact(reason))
        finally:
            await self._settle()

    def cancel(self) -> None:
        """The user stopped this subagent (the parent reads that it was cancelled)."""
        self.user_cancelled = True

    def _end(self, state: Literal["finished", "failed", "cancelled"], messages: list[ModelMessage], *,
             answer: str = "", reason: str = "") -> SubagentOutcome:
        """Record what the run exchanged (never raising: a failure to save is logged), update the status."""
        if not messages:  # stopped before its first request: what it was given is kept all the same
            messages = [ModelRequest(parts=[UserPromptPart(self._prompt)])]
        self.final_messages = messages
        try:
            self.manager.record_pending(messages)
        except Exception:  # a full disk must not turn an answer into a failure: the parent still gets it
            logger.warning("subagent %d: its history could not be saved whole", self.status.number, exc_info=True)
        status = self.status
        status.state, status.tool, status.reason = state, None, visible(reason)
        status.answer_chars = len(answer)
        self._schedule_tell(answer if state == "finished" else reason)
        self.manager.close()
        self.history.close()
        return SubagentOutcome(state, answer=answer, reason=reason)

    def recorded_responses(self) -> list[ModelResponse]:
        """The model's responses in its history (their usage: tokens in and out)."""
        return [message for message in self.final_messages if isinstance(message, ModelResponse)]

    # -- what it reports ------------------------------------------------------------------

    def _on_chain_event(self, event: ChainEvent) -> None:
        status = self.status
        if isinstance(event, (CompactionFinished, CompactionFailed)) and event.strategy == "summary":
            event = price_compaction(event, self.env.cost, self.manager.summarizer)
            if event.cost_usd is not None and status.cost_usd is not None:
                status.cost_usd += event.cost_usd
            elif event.cost_requests:
                status.cost_usd = None
        if isinstance(event, CompactionFinished):
            status.compactions += 1
        if isinstance(event, UsageEvent):
            status.tokens, status.window = event.tokens, event.window
            status.peak_tokens = max(status.peak_tokens, event.tokens)
            self._schedule_tell()
        try:
            self.history.events.append(event.to_record())
        except OSError as error:
            logger.info("subagent %d: could not record a chain event: %s", status.number, error)

    def _on_cost(self, update: object) -> None:
        totals = self.cost.session
        status = self.status
        status.requests = totals.requests + totals.unpriced_requests
        status.cost_usd = None if totals.unpriced_requests else totals.total_usd

    def _schedule_tell(self, answer: str = "") -> None:
        """Tell the parent's run from a synchronous hook (the chain's events): the emit runs as a task."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # from a worker thread: the next news told from the loop carries this too
            return
        self._pending.append(loop.create_task(self._tell(answer)))

    async def _tell(self, answer: str = "") -> None:
        try:
            await self._emit(self.status.progress(answer[-2_000:]))
        except Exception:  # the screen's news is never worth the subagent's run
            logger.debug("subagent progress not delivered", exc_info=True)

    async def _settle(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


class _HistoryRecorder:
    """The chain's recorder on the subagent's own messages.json."""

    def __init__(self, history: SubagentHistory) -> None:
        self._history = history

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        return self._history.messages.append(messages)


def _tool_filter(allowed: set[str] | None) -> Callable[[Any, Any], bool]:
    def keep(ctx: Any, tool_def: Any) -> bool:
        name = tool_def.name
        return name != TASK_TOOL_NAME and (allowed is None or name in allowed)

    return keep


def _first_line(text: str) -> str:
    stripped = text.strip()
    return visible(stripped.splitlines()[0]) if stripped else "unknown error"
