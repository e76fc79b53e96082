"""Running one user turn of a :class:`~tui.agent.session.runtime.SessionRuntime`, and what a stopped or failed
turn leaves behind: its messages recorded, its open tool calls closed, one line saying why."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.exceptions import AgentRunError, RunCancelled, UserError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.run import AgentRunResult

from tui.agent.approval.approval_gate import ApprovalGate
from tui.agent.attachments.file_mentions import MentionAttacher
from tui.agent.hooks.hook_runner import HookRunner
from tui.agent.mcp.servers import McpServers
from tui.agent.models.cost import CostTracker
from tui.agent.models.provider_http import ProviderFailure, provider_failure
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.runtime_api import RuntimeInfo
from tui.agent.session.handle_recorder import HistoryWriteError, memory_overflow_note
from tui.agent.session.history_seal import seal
from tui.agent.session.run_events import run_events
from tui.agent.session.translation import translate
from tui.agent.shell.execute_tool import ShellState
from tui.agent.tools.kinds import ToolKinds
from tui.agent.turn_events import (
    McpServersStarted,
    McpServersStarting,
    PromptAttached,
    ToolCallFinished,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from tui.base.redaction import redact
from tui.chain.compactor import ContextOverflowError
from tui.chain.events import ChainEvent, MemoryChanged
from tui.chain.manager import ContextManager
from tui.store import SessionHandle
from tui.text.terminal_text import encodable, visible

logger = logging.getLogger(__name__)

MAX_STOP_OUTPUT_CHARS = 8_000
"""A stop event carries at most this much of the turn's answer."""

class SessionTurns:
    """The turn part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named here)."""

    handle: SessionHandle
    agent: Agent[None, str]
    manager: ContextManager
    cost: CostTracker
    attacher: MentionAttacher
    shell: ShellState
    approval_gate: ApprovalGate
    info: RuntimeInfo
    memory_path: Path
    mcp: McpServers | None
    tool_kinds: ToolKinds
    messages: list[ModelMessage]
    checkpoints: PromptCheckpoints
    hook_runner: HookRunner
    _busy: bool
    _turn_start: int
    _memory_instructions: Callable[[], str]
    _on_chain_event: Callable[[ChainEvent], None]

    async def run_turn(self, prompt: str) -> AsyncGenerator[TurnEvent]:
        """Run one user turn, streaming text deltas and tool activity. When it ends, the ``stop`` hooks run before
        its last event (a cancelled turn's in the background): the turn is not over until they are."""
        if self._busy:
            yield TurnFailed("a turn is already running")
            return
        if self.handle.read_only:
            yield TurnFailed("this session is open read-only")
            return
        ending: TurnFinished | TurnFailed | None = None
        try:
            # aclosing: a reader that stops early (a closed pipe) ends the turn's own generator at once, not in the GC
            async with aclosing(self._turn_events(prompt)) as events:
                async for event in events:
                    if isinstance(event, (TurnFinished, TurnFailed)):
                        ending = event
                    else:
                        yield event
        except (asyncio.CancelledError, GeneratorExit):  # cancelled, or its reader went away
            self.hook_runner.run_soon("stop", self.hook_runner.matching("stop", "cancelled"),
                                      self._stop_fields("cancelled", None))
            raise
        if ending is None:
            return
        reason = "finished" if isinstance(ending, TurnFinished) else "cancelled" if ending.cancelled else "failed"
        specs = self.hook_runner.matching("stop", reason)
        if specs:
            self._busy = True  # the turn is not over until its stop hooks are (each ends at its timeout)
            try:
                await self.hook_runner.run("stop", specs, self._stop_fields(reason, ending))
            finally:
                self._busy = False
        yield ending

    def _stop_fields(self, reason: str, ending: TurnFinished | TurnFailed | None) -> dict[str, Any]:
        """A ``stop`` hook's event: how the turn ended, its answer (capped) or error, its tokens."""
        fields: dict[str, Any] = {"reason": reason, "messages": self.handle.meta.message_count}
        if isinstance(ending, TurnFinished):
            fields.update(output=ending.output[:MAX_STOP_OUTPUT_CHARS], output_chars=len(ending.output),
                          input_tokens=ending.input_tokens, output_tokens=ending.output_tokens)
        elif isinstance(ending, TurnFailed) and not ending.cancelled:
            fields["error"] = ending.message
        return fields

    async def _turn_events(self, prompt: str) -> AsyncGenerator[TurnEvent]:
        prompt = encodable(prompt)  # invalid UTF-8 from argv arrives as lone surrogates (surrogateescape)
        self._busy = True
        self.manager.begin_user_turn()
        self.cost.begin_turn()
        self._turn_start = self.handle.meta.message_count  # the search tool leaves out this turn's own messages
        if self.handle.meta.model != self.info.model_name:  # opened with another --model: session.json says so
            self.handle.meta.model = self.info.model_name
            self.handle.save_meta_or_log()
        result: AgentRunResult[str] | None = None
        run_messages: list[ModelMessage] = []
        try:
            self._seal("the previous turn stopped before an answer came")
            self.checkpoints.begin(self.handle.meta.message_count + 1)  # the prompt's number, once recorded
            attached = await asyncio.to_thread(self.attacher.attach, prompt)  # up to 20 files: off the loop
            if attached.attachments:
                yield PromptAttached(tuple(item.describe() for item in attached.attachments),
                                     tuple(item.describe() for item in attached.attachments if item.kind == "refused"))
            if self.mcp is not None and (starting := self.mcp.starting()):
                yield McpServersStarting(starting)  # the first request waits for their tools (each bounded)
                await self.mcp.wait_started()
                yield McpServersStarted(starting)
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
                    if isinstance(translated, ToolCallFinished) and translated.tool_name in self.tool_kinds.memory_writing:
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
            try:
                await self.checkpoints.end()  # the tree the prompt left, kept with its restore point
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
        messages.extend(seal(messages, reason, returns=self.shell.take_interrupted(),
                             denied=self.approval_gate.take_unanswered()))
        self.manager.record_pending(messages)

    def _memory_note(self, error: AgentRunError) -> str:
        if not isinstance(error, ContextOverflowError):
            return ""
        return memory_overflow_note(self._memory_instructions(), self.memory_path, self.manager.window)

    def _refresh_title(self) -> None:
        self.info.title = self.handle.meta.title


def _first_line(text: str) -> str:
    """An error's first line, terminal-safe (a provider's error body is hostile text too)."""
    stripped = text.strip()
    return visible(stripped.splitlines()[0]) if stripped else "unknown error"
