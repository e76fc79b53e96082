"""The context-management chain as one object: recording, accounting, tiers 1–3, guards, events.

Order per model request (DESIGN §3): record new messages → count tokens
(usage event) → tier 2 at the compaction threshold → at the summarize threshold,
tier 2 reaching into the running turn, then tier 3 (at most once per user turn,
never retried after a failure in the same turn, nor — after one rejected for freeing too
little — until the context has grown enough for a summary to free enough) → pre-flight until the request
fits the limit (window − answer reserve − margin): the running turn's read
outputs become pointers, then the fallback cuts, re-measured after each step.
Reversible before lossy at every stage. Tier 1 (eviction) runs
after each tool, before its output enters the history. After each response the
provider's count calibrates the estimates and the usage including the answer is
reported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from tui.base.config import ContextSettings
from tui.chain.accounting import TokenAccountant, TokenCounter
from tui.chain.budget import WindowBudget, with_compaction
from tui.chain.calibration import TokenCalibration
from tui.chain.compactor import (
    AfterCompress,
    BeforeCompress,
    CompactionStats,
    Compactor,
    StepResult,
)
from tui.chain.context_capability import ContextCapability
from tui.chain.estimate import TokenEstimator
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionTrigger,
    UsageEvent,
    WindowSource,
)
from tui.chain.eviction import EvictionCapability
from tui.chain.image_tokens import image_rule
from tui.chain.model_count import ModelCountCheck
from tui.chain.outgoing import OutgoingCopies
from tui.chain.preflight import fit_to_limit
from tui.chain.recording import Recorder, RecordingLedger
from tui.chain.request_facts import ToolVocabularyCache, instruction_texts, max_tokens_setting, model_key, takes_images
from tui.chain.summarizer import Summarizer
from tui.chain.summary_hooks import SummaryHooks
from tui.chain.summary_pacing import SummaryConsent, SummaryPacing
from tui.chain.summary_plan import SummaryPlan
from tui.chain.usage_sanity import unbelievable_usage
from tui.chain.window import resolve_window

logger = logging.getLogger(__name__)

__all__ = ["RECOVERY_INSTRUCTIONS", "CompactionOutcome", "ContextManager", "SummaryConsent", "UsageCallback"]

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
    """One session's chain; ``capabilities()`` plugs it into a pydantic-ai ``Agent``.

    ``file_writing_tools``: the names of the tools that write files (tier 2 points their old arguments at the
    written file); the agent derives them from its tools' marks, the chain knows no tool by name."""

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
        file_writing_tools: frozenset[str],
        token_counter: TokenCounter | None = None,
        calibration_path: Path | None = None,
        on_usage_update: UsageCallback | None = None,
        on_before_compress: BeforeCompress | None = None,
        on_after_compress: AfterCompress | None = None,
        summary_retry_from: int | None = None,
        on_summary_backoff: Callable[[int | None], None] | None = None,
    ) -> None:
        self.settings = settings
        self.large_results_dir = large_results_dir
        self._config_window = config_window
        self.window, self.window_source = resolve_window(chat_model, config_window, self._window_origin)
        self._sink = event_sink
        self.on_usage_update = on_usage_update
        self.ledger = RecordingLedger(recorder)
        self.accountant = TokenAccountant(TokenEstimator(), token_counter,
                                          calibration=TokenCalibration(calibration_path),
                                          model_name=model_key(chat_model), window=self.window)
        self.accountant.estimator.use_image_rule(image_rule(model_key(chat_model)).tokens)
        self._takes_images = takes_images(chat_model)
        """Whether the chat model reads images (else each goes out as its placeholder)."""
        self.budget = WindowBudget.for_window(self.window, settings)
        self.compactor = Compactor(
            settings=settings, budget=self.budget, large_results_dir=large_results_dir, ledger=self.ledger,
            accountant=self.accountant,
            summarizer=Summarizer(summarizer_model, timeout=settings.summarizer_timeout,
                                  chunk_tokens=self._summarizer_window(summarizer_model, chat_model) // 2),
            emit=self._emit, file_writing_tools=file_writing_tools, on_before_compress=on_before_compress,
            on_after_compress=on_after_compress,
        )
        self.fixed_tokens = 0
        self.last_tokens: int | None = None
        self._last_raw_request = 0
        self._model_count = ModelCountCheck(self.accountant)
        self._forced = False
        self._pending_focus: str | None = None
        self._pacing = SummaryPacing(summary_retry_from, on_summary_backoff)
        self._eviction: EvictionCapability | None = None
        self._outgoing = OutgoingCopies()
        self._tool_vocabulary = ToolVocabularyCache()
        self._budget_key: tuple[object, ...] = ()
        self.ask_before_summary: SummaryConsent | None = None
        """With automatic compaction off: asked (tokens, limit) before the pre-flight summarizes a request over the
        limit (the app's dialog); ``None``: never summarize then, only make pointers and cut."""

    @property
    def _window_origin(self) -> WindowSource:
        return "flag" if self.settings.window_origin == "flag" else "config"

    def use_model(self, chat_model: Model | None, summarizer_model: Model | None) -> None:
        """The session talks to ``chat_model`` from now on (``/model``): its window is resolved again (an explicit
        ``--context-window`` / ``[context] window`` still wins), thresholds and the eviction limit follow it, the
        calibration is the new model's, and ``summarizer_model`` writes the summaries. A window smaller than the
        context is handled by the next request's chain: compaction, then the pre-flight, so no request ever goes
        over the new window."""
        self.window, self.window_source = resolve_window(chat_model, self._config_window, self._window_origin)
        self.budget = WindowBudget.for_window(self.window, self.settings)
        self.compactor.budget = self.budget
        self.compactor.summarizer = Summarizer(
            summarizer_model, timeout=self.settings.summarizer_timeout,
            chunk_tokens=self._summarizer_window(summarizer_model, chat_model) // 2)
        self.accountant.model_name = model_key(chat_model)
        self.accountant.estimator.use_image_rule(image_rule(model_key(chat_model)).tokens)
        self.accountant.invalidate(())  # the images of the history are counted by the new model's rule
        self._takes_images = takes_images(chat_model)
        self._model_count.unsupported = False
        self._pacing.set_backoff(None)  # measured against the old window
        if self._eviction is not None:
            self._eviction.large_result_tokens = self.eviction_threshold

    def _summarizer_window(self, summarizer_model: Model | None, chat_model: Model | None) -> int:
        """The summarizer's own request limit: the session's (incl. an explicit override) when it is the chat
        model, else its own window less its reserve and margin."""
        if summarizer_model is None or summarizer_model is chat_model:
            return self.budget.limit
        window = resolve_window(summarizer_model, None)[0]
        return WindowBudget.for_window(window, self.settings).limit

    @property
    def eviction_threshold(self) -> int:
        """Tool outputs above this many tokens are saved to disk: ``large_result_tokens``, but never more
        than a quarter of the limit (one output could not fit a small window otherwise)."""
        return min(self.settings.large_result_tokens, max(100, self.budget.limit // 4))

    # -- public API ----------------------------------------------------------------------

    @property
    def summary_hooks(self) -> SummaryHooks | None:
        """Told before each summary; what it adds after one joins the new context (capped, counted)."""
        return self.compactor.summary_hooks

    @summary_hooks.setter
    def summary_hooks(self, hooks: SummaryHooks | None) -> None:
        self.compactor.summary_hooks = hooks

    @property
    def stats(self) -> CompactionStats:
        return self.compactor.stats

    @property
    def summarizer(self) -> Summarizer:
        return self.compactor.summarizer

    @property
    def limit(self) -> int:
        """The most tokens a request may carry (window − answer reserve − margin)."""
        return self.budget.limit

    def capabilities(self) -> list[AbstractCapability[Any]]:
        """Eviction (after each tool) and the per-request chain (before and after each model request)."""
        self._eviction = EvictionCapability(self.large_results_dir, self.eviction_threshold, self._emit)
        return [self._eviction, ContextCapability(self)]

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

    def close(self) -> None:
        """Save what is learned but not saved yet (the token calibration)."""
        self.accountant.calibration.flush()

    def prime_fixed_tokens(self, instructions: Sequence[str], tools: Sequence[ToolDefinition]) -> None:
        """What instructions and tool definitions cost, before the first request measures them (so a
        ``/compact`` or a usage figure right after opening a session counts them)."""
        self.fixed_tokens = self.accountant.fixed_tokens(instructions, tools)
        self.compactor.tool_vocabulary = self._tool_vocabulary(tools)

    def begin_user_turn(self) -> None:
        """A new user turn: automatic summarization may run (once) again."""
        self._pacing.begin_user_turn()

    def request_compact(self, focus: str | None = None) -> None:
        """Force tiers 2–3 on the next model request, whatever the usage."""
        self._forced = True
        self._pending_focus = focus or None

    def plan_compaction(self, messages: Sequence[ModelMessage]) -> SummaryPlan:
        """What a summary of ``messages`` would replace and keep verbatim (shown before ``/compact`` runs)."""
        return self.compactor.plan_summary(messages, self.fixed_tokens)

    def estimate_usage(self, messages: Sequence[ModelMessage]) -> UsageEvent:
        """A usage figure for ``messages`` from estimates alone (a fork or a session with none recorded)."""
        return self._usage_event(self.accountant.estimate(messages, self.fixed_tokens), final=True)

    async def compact(self, messages: Sequence[ModelMessage], focus: str | None = None) -> CompactionOutcome:
        """Run tiers 2–3 now (manual), returning the new working context and what happened."""
        self.ledger.record_new(messages)
        working = list(messages)
        tokens = await self.accountant.count(working, self.fixed_tokens)
        step = await self._run_tiers(working, tokens, trigger="manual", focus=focus or None, force=True)
        event = step.event
        if event is None:
            event = CompactionFailed(strategy="summary", trigger="manual", reason="nothing to compact",
                                     tokens=tokens, focus=focus or None,
                                     message_index=self.compactor.recorded_count(step.messages))
            self._emit(event)
        return CompactionOutcome(step.messages, event)

    # -- the per-request chain ----------------------------------------------------------

    async def before_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> ModelRequestContext:
        history = ctx.messages
        self.ledger.record_new(history)
        self._set_budget(request_context.model_settings)
        parameters = request_context.model_request_parameters
        self.fixed_tokens = self.accountant.fixed_tokens(
            instruction_texts(request_context), [*parameters.function_tools, *parameters.output_tools])
        self.compactor.tool_vocabulary = self._tool_vocabulary(parameters.function_tools)
        tokens = await self.accountant.count(history, self.fixed_tokens)
        compaction_at = self.budget.at(self.settings.compaction_threshold)
        tokens = await self._checked_count(request_context, history, tokens, near=compaction_at)
        self._report_usage(tokens)
        working = history
        forced, focus = self._forced, self._pending_focus
        automatic = self.settings.auto_compact and tokens >= compaction_at
        if forced or automatic:
            self._forced, self._pending_focus = False, None
            step = await self._run_tiers(working, tokens, trigger="manual" if forced else "auto", focus=focus,
                                         force=forced)
            working, tokens = step.messages, step.tokens
        elif tokens > self.budget.limit and await self._pacing.consent(self.ask_before_summary, tokens,
                                                                        self.budget.limit):
            # compaction is off, but the user agreed to a summary rather than a cut for this request
            step = await self._run_tiers(working, tokens, trigger="preflight", focus=None, force=True)
            working, tokens = step.messages, step.tokens
        if working is not history:
            tokens = await self._checked_count(request_context, working, tokens, near=self.budget.limit)
        working, tokens = await self._preflight(request_context, working, tokens)
        self._last_raw_request = self.accountant.raw(working, self.fixed_tokens)
        if working is not history:
            history[:] = working
        sent = self._outgoing.messages(working, images=self._takes_images)  # the record stays, a copy is sent
        if sent is not history:
            request_context.messages = list(sent) if sent is working else sent
        return request_context

    def set_compaction(self, *, threshold: float | None = None, auto: bool | None = None,
                       summarize: float | None = None) -> ContextSettings:
        """Change the automatic compaction threshold (a share of the limit; the summary threshold moves with it,
        keeping their distance, unless ``summarize`` gives it) and/or turn automatic compaction on or off, for this
        session; returns the new settings (``ConfigError`` for a threshold out of range). The next usage figure
        carries them."""
        settings = with_compaction(self.settings, threshold=threshold, auto=auto, summarize=summarize)
        self.settings = settings
        self.compactor.settings = settings
        if self.last_tokens is not None:
            self._report_usage(self.last_tokens)
        return settings

    def _set_budget(self, model_settings: ModelSettings | None) -> None:
        key = (self.window, self.settings, max_tokens_setting(model_settings), self.budget)
        if key != self._budget_key:  # built again only when what it follows changed since it was last set
            budget = WindowBudget.for_window(self.window, self.settings, key[2])
            if budget != self.budget:
                self.budget = self.compactor.budget = budget
            self._budget_key = (*key[:3], self.budget)

    async def _preflight(self, request_context: ModelRequestContext, working: list[ModelMessage],
                         tokens: int) -> tuple[list[ModelMessage], int]:
        """Cut until the request fits the limit (:func:`~tui.chain.preflight.fit_to_limit`), measuring again
        after each cut with the model's own counter near the limit, where it has one."""
        if tokens <= self.budget.limit:  # what fit_to_limit returns at once (most requests), without its set-up
            return working, tokens

        async def measure(messages: list[ModelMessage]) -> int:
            measured = await self.accountant.count(messages, self.fixed_tokens)
            return await self._checked_count(request_context, messages, measured, near=self.budget.limit)

        return await fit_to_limit(working, tokens, compactor=self.compactor, accountant=self.accountant,
                                  budget=self.budget, fixed_tokens=self.fixed_tokens, window=self.window,
                                  measure=measure, report_usage=self._report_usage)

    async def _checked_count(self, request_context: ModelRequestContext, working: list[ModelMessage],
                             tokens: int, *, near: float) -> int:
        """``tokens``, or the model's own count when the estimate is within reach of ``near`` (see
        :meth:`~tui.chain.model_count.ModelCountCheck.checked`)."""
        return await self._model_count.checked(request_context, working, tokens, near=near,
                                               fixed_tokens=self.fixed_tokens, window=self.window)

    async def after_response(self, request_context: ModelRequestContext, response: ModelResponse) -> None:
        """Calibrate on the provider's count and report the usage including the answer just received."""
        reported = response.usage.input_tokens if response.provider_name else 0
        if reported and (doubt := unbelievable_usage(response.usage, self.window)) is not None:
            logger.warning("ignored a usage figure from %s: %s; the request is counted by estimate",
                           response.provider_name, doubt)
            reported = 0
        if reported > 0:
            self.accountant.observe(self._last_raw_request, reported)
        request_tokens = reported if reported > 0 else (self.last_tokens or 0)
        answer = self.accountant.scaled(self.accountant.estimator.message_tokens(response))
        self._report_usage(request_tokens + answer, final=True)

    async def _run_tiers(self, messages: list[ModelMessage], tokens: int, *, trigger: CompactionTrigger,
                         focus: str | None, force: bool) -> StepResult:
        step = self.compactor.tool_calls(messages, tokens, trigger=trigger, focus=focus, force=force)
        summarize_at = self.budget.at(self.settings.summarize_threshold)
        may_summarize = self._pacing.may_summarize(step.tokens, force=force)
        if not force and step.tokens >= summarize_at:  # reversible before lossy: reach into the running turn
            step = self.compactor.tool_calls_before_lossy(step, trigger=trigger, focus=focus,
                                                          fits_below=summarize_at if may_summarize else None)
        if step.event is not None:
            self._report_usage(step.tokens)
        if not force and (step.tokens < summarize_at or not may_summarize):
            return step
        summary = await self.compactor.summarize(step.messages, step.tokens, self.fixed_tokens, trigger=trigger,
                                                 focus=focus)
        if isinstance(summary.event, CompactionFinished):
            self._pacing.succeeded(trigger)
            self._report_usage(summary.tokens)
            return summary
        self._pacing.failed(trigger, summary.retry_from)
        if step.event is not None:  # tier 2 was applied even though the summary was not
            return StepResult(step.messages, step.tokens, summary.event)
        return summary

    # -- events ------------------------------------------------------------------------

    def _emit(self, event: ChainEvent) -> None:
        self._sink(event)

    def _usage_event(self, tokens: int, *, final: bool = False) -> UsageEvent:
        return UsageEvent(tokens=tokens, window=self.window, window_source=self.window_source,
                          compaction_threshold=self.settings.compaction_threshold,
                          summarize_threshold=self.settings.summarize_threshold,
                          auto_compact=self.settings.auto_compact,
                          reserve=self.budget.reserve, margin=self.budget.margin, final=final)

    def _report_usage(self, tokens: int, *, final: bool = False) -> None:
        self.last_tokens = tokens
        self._emit(self._usage_event(tokens, final=final))
        if self.on_usage_update is not None:
            self.on_usage_update(tokens / self.window, tokens, self.window)
