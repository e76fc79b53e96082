"""The context-management chain as one object: recording, accounting, tiers 1–3, guards, events.

Order per model request (DESIGN §3): record new messages → count tokens
(usage event) → tier 2 at the compaction threshold → tier 3 at the summarize
threshold (at most once per user turn, never retried after a failure in the
same turn) → pre-flight fallback if the request would still exceed the
window. Tier 1 (eviction) runs after each tool, before its output enters the
history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model, ModelRequestContext

from tui.chain.accounting import TokenAccountant, TokenCounter, request_instructions
from tui.chain.compactor import AfterCompress, BeforeCompress, CompactionStats, Compactor, StepResult
from tui.chain.estimate import TokenEstimator
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, CompactionTrigger, UsageEvent
from tui.chain.eviction import EvictionCapability
from tui.chain.recording import Recorder, RecordingLedger
from tui.chain.summarizer import Summarizer
from tui.chain.window import resolve_window
from tui.config import ContextSettings

RECOVERY_INSTRUCTIONS = """\
Context management: your context window is managed for you. Large tool outputs are saved to files and shown
as a preview with their path — read the rest with read_file(path, offset, limit). Older turns may be replaced
by a summary; every original message is still recorded, so use search_conversation_history(query) to recover
an exact detail (a value, a command, a user instruction) instead of guessing."""

UsageCallback = Callable[[float, int, int], None]


@dataclass
class CompactionOutcome:
    """What ``compact`` did: the new working context and the event describing it."""

    messages: list[ModelMessage]
    event: CompactionFinished | CompactionFailed


class ContextManager:
    """One session's chain; ``capabilities()`` plugs it into a pydantic-ai ``Agent``."""

    def __init__(
        self,
        *,
        settings: ContextSettings,
        large_results_dir: Path,
        recorder: Recorder,
        event_sink: Callable[[ChainEvent], None],
        summarizer_model: Model | None,
        config_window: int | None,
        chat_model: Model | None,
        token_counter: TokenCounter | None = None,
        on_usage_update: UsageCallback | None = None,
        on_before_compress: BeforeCompress | None = None,
        on_after_compress: AfterCompress | None = None,
    ) -> None:
        self.settings = settings
        self.large_results_dir = large_results_dir
        self.window, self.window_source = resolve_window(chat_model, config_window)
        self._sink = event_sink
        self.on_usage_update = on_usage_update
        self.ledger = RecordingLedger(recorder)
        self.accountant = TokenAccountant(TokenEstimator(), token_counter)
        self.compactor = Compactor(
            settings=settings, window=self.window, large_results_dir=large_results_dir, ledger=self.ledger,
            accountant=self.accountant,
            summarizer=Summarizer(summarizer_model, timeout=settings.summarizer_timeout,
                                  chunk_tokens=self._summarizer_window(summarizer_model, chat_model) // 2),
            emit=self._emit, on_before_compress=on_before_compress, on_after_compress=on_after_compress,
        )
        self.fixed_tokens = 0
        self.last_tokens: int | None = None
        self._forced = False
        self._pending_focus: str | None = None
        self._summarized_this_turn = False
        self._blocked_this_turn = False

    def _summarizer_window(self, summarizer_model: Model | None, chat_model: Model | None) -> int:
        """The summarizer's own window: the session's (incl. an explicit override) when it is the chat model."""
        if summarizer_model is None or summarizer_model is chat_model:
            return self.window
        return resolve_window(summarizer_model, None)[0]

    @property
    def eviction_threshold(self) -> int:
        """Tool outputs above this many tokens are saved to disk: ``large_result_tokens``, but never more
        than a quarter of the window (one output could not fit a small window otherwise)."""
        return min(self.settings.large_result_tokens, max(100, self.window // 4))

    # -- public API ----------------------------------------------------------------------

    @property
    def stats(self) -> CompactionStats:
        return self.compactor.stats

    @property
    def summarizer(self) -> Summarizer:
        return self.compactor.summarizer

    def capabilities(self) -> list[AbstractCapability[Any]]:
        """Eviction (after each tool) and the per-request chain (before each model request)."""
        return [
            EvictionCapability(self.large_results_dir, self.eviction_threshold, self._emit),
            ContextCapability(self),
        ]

    def mark_recorded(self, messages: Sequence[ModelMessage], indices: Sequence[int]) -> None:
        """Messages loaded from messages.json (resume) and where each sits in it.

        Their provider-reported token counts are not trusted: they measured the context as it was
        sent then (possibly with tier-2 pointers, which are not on disk), not the list loaded now.
        """
        self.ledger.mark_recorded(messages, indices)
        self.accountant.invalidate(messages)

    def record_pending(self, messages: Sequence[ModelMessage]) -> None:
        """Append whatever of ``messages`` is not recorded yet (the end of a run, a cancelled run)."""
        self.ledger.record_new(messages)

    def begin_user_turn(self) -> None:
        """A new user turn: automatic summarization may run (once) again."""
        self._summarized_this_turn = False
        self._blocked_this_turn = False

    def request_compact(self, focus: str | None = None) -> None:
        """Force tiers 2–3 on the next model request, whatever the usage."""
        self._forced = True
        self._pending_focus = focus or None

    async def compact(self, messages: Sequence[ModelMessage], focus: str | None = None) -> CompactionOutcome:
        """Run tiers 2–3 now (manual), returning the new working context and what happened."""
        self.ledger.record_new(messages)
        working = list(messages)
        tokens = await self.accountant.count(working, self.fixed_tokens)
        step = await self._run_tiers(working, tokens, trigger="manual", focus=focus or None, force=True)
        event = step.event
        if event is None:
            event = CompactionFailed(strategy="summary", trigger="manual", reason="nothing to compact",
                                     tokens=tokens, focus=focus or None)
            self._emit(event)
        return CompactionOutcome(step.messages, event)

    # -- the per-request chain ----------------------------------------------------------

    async def before_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> ModelRequestContext:
        history = ctx.messages
        self.ledger.record_new(history)
        parameters = request_context.model_request_parameters
        self.fixed_tokens = self.accountant.fixed_tokens(
            request_instructions(request_context.messages),
            [*parameters.function_tools, *parameters.output_tools],
        )
        tokens = await self.accountant.count(history, self.fixed_tokens)
        self._report_usage(tokens)
        working = history
        forced, focus = self._forced, self._pending_focus
        if forced or tokens >= self.settings.compaction_threshold * self.window:
            self._forced, self._pending_focus = False, None
            step = await self._run_tiers(working, tokens, trigger="manual" if forced else "auto", focus=focus,
                                         force=forced)
            working, tokens = step.messages, step.tokens
        if tokens > self.window:
            step = self.compactor.fit_window(working, tokens, self.fixed_tokens)
            working, tokens = step.messages, step.tokens
            self._report_usage(tokens)
        if working is not history:
            history[:] = working
            request_context.messages = list(working)
        return request_context

    async def _run_tiers(self, messages: list[ModelMessage], tokens: int, *, trigger: CompactionTrigger,
                         focus: str | None, force: bool) -> StepResult:
        step = self.compactor.tool_calls(messages, tokens, trigger=trigger, focus=focus, force=force)
        if step.event is not None:
            self._report_usage(step.tokens)
        summarize_at = self.settings.summarize_threshold * self.window
        if not force:
            if step.tokens < summarize_at or self._summarized_this_turn or self._blocked_this_turn:
                return step
        summary = await self.compactor.summarize(step.messages, step.tokens, self.fixed_tokens, trigger=trigger,
                                                 focus=focus)
        if isinstance(summary.event, CompactionFinished):
            if trigger == "auto":
                self._summarized_this_turn = True
            self._report_usage(summary.tokens)
        elif trigger == "auto":
            self._blocked_this_turn = True
        return summary

    # -- events ------------------------------------------------------------------------

    def _emit(self, event: ChainEvent) -> None:
        self._sink(event)

    def _report_usage(self, tokens: int) -> None:
        self.last_tokens = tokens
        self._emit(UsageEvent(tokens=tokens, window=self.window, window_source=self.window_source,
                              compaction_threshold=self.settings.compaction_threshold,
                              summarize_threshold=self.settings.summarize_threshold))
        if self.on_usage_update is not None:
            self.on_usage_update(tokens / self.window, tokens, self.window)


@dataclass
class ContextCapability(AbstractCapability[Any]):
    """Runs the chain before every model request (see :class:`ContextManager`)."""

    manager: ContextManager

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext
                                   ) -> ModelRequestContext:
        return await self.manager.before_request(ctx, request_context)
