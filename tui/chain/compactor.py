"""Tiers 2 and 3 with their guards, and the pre-flight fallback.

Each step either returns a new working context with a ``CompactionFinished``
event or leaves the messages exactly as they were with ``CompactionFailed``.
All sizes are in the provider's tokens (calibrated estimates, see :class:`TokenAccountant`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.messages import ModelMessage

from tui.base.config import ContextSettings
from tui.chain.accounting import TokenAccountant
from tui.chain.budget import WindowBudget
from tui.chain.cut_points import find_cut_index, is_safe_cut
from tui.chain.events import (
    RETENTION_TARGET,
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    CompactionTrigger,
)
from tui.chain.fallback import fallback_compact
from tui.chain.overflow import describe_overflow
from tui.chain.recording import RecordingLedger
from tui.chain.retention import extract_identifiers, retention_score
from tui.chain.summarizer import Summarizer, SummarizerError
from tui.chain.summary_hooks import SummaryHooks, SummaryMoment, addition_cap_chars, capped_addition
from tui.chain.summary_message import make_summary_message, summary_info, summary_text, with_kept_from
from tui.chain.summary_plan import SummaryPlan
from tui.chain.tool_compaction import DEFAULT_PREVIEW_CHARS, compact_tool_calls

logger = logging.getLogger(__name__)

INFLATION_LIMIT = 0.70
"""An automatic summary must leave the context at most this share of its size before (or below the compaction
threshold: see ``Compactor._rejection``)."""
MAX_REPORTED_MISSING = 20
KEPT_TAIL_SHARE = 0.6
"""The instructions, tools and the tail a summary keeps verbatim take at most this share of the limit (the
summary and the answer's turn need the rest)."""
PROTECT_SHARE_OF_LIMIT = 0.25
PROTECT_MAX_TOKENS = 40_000
"""Unless configured, tier 2 never touches the newest tool output up to a quarter of the limit (≤ 40k)."""
MIN_SAVINGS_SHARE_OF_LIMIT = 0.05
MIN_SAVINGS_MAX_TOKENS = 10_000
"""Unless configured, tier 2 is applied when it frees 5 % of the limit (≤ 10k): scaled to the window so the
reversible tier works before the lossy one at every window size."""

BeforeCompress = Callable[[Sequence[ModelMessage], int], None]
AfterCompress = Callable[[Sequence[ModelMessage]], "str | None"]


@dataclass
class CompactionStats:
    """Totals for the session: tokens saved by strategy, compactions and failures."""

    saved_by_strategy: dict[str, int] = field(default_factory=dict)
    compactions: int = 0
    failures: int = 0

    def add(self, event: CompactionFinished) -> None:
        self.compactions += 1
        self.saved_by_strategy[event.strategy] = self.saved_by_strategy.get(event.strategy, 0) + event.tokens_saved


@dataclass
class StepResult:
    messages: list[ModelMessage]
    tokens: int
    event: CompactionFailed | CompactionFinished | None = None
    retry_from: int | None = None
    """After an automatic summary rejected for freeing too little: the context size (in ``tokens``' terms) from
    which a summary of the grown span could free enough (the summary and the kept tail staying about as large)."""


class ContextOverflowError(AgentRunError):
    """Even the deterministic fallback cannot fit the request into the window."""


@dataclass
class Compactor:
    settings: ContextSettings
    budget: WindowBudget
    large_results_dir: Path
    ledger: RecordingLedger
    accountant: TokenAccountant
    summarizer: Summarizer
    emit: Callable[[ChainEvent], None]
    file_writing_tools: frozenset[str] = frozenset()
    """The tools whose old arguments tier 2 turns into pointers to the written file (given by the agent)."""
    tool_vocabulary: frozenset[str] = frozenset()
    """The offered tools' names and argument names (``path``, ``limit``): not identifiers a summary must keep."""
    on_before_compress: BeforeCompress | None = None
    on_after_compress: AfterCompress | None = None
    summary_hooks: SummaryHooks | None = None
    """Told before each summary is written; may add text to the new context after it (the agent's hooks)."""
    stats: CompactionStats = field(default_factory=CompactionStats)

    @property
    def window(self) -> int:
        return self.budget.window

    def _finish(self, event: CompactionFinished) -> CompactionFinished:
        self.stats.add(event)
        self.emit(event)
        return event

    def _fail(self, *, strategy: str, trigger: CompactionTrigger, reason: str, tokens: int, focus: str | None,
              messages: Sequence[ModelMessage], would_free: int | None = None,
              tokens_estimated: int | None = None) -> CompactionFailed:
        self.stats.failures += 1
        event = CompactionFailed(strategy=strategy, trigger=trigger, reason=reason, tokens=tokens,  # type: ignore[arg-type]
                                 focus=focus, would_free=would_free, tokens_estimated=tokens_estimated,
                                 message_index=self.recorded_count(messages))
        self.emit(event)
        return event

    def recorded_count(self, messages: Sequence[ModelMessage]) -> int | None:
        """How many messages messages.json holds up to the newest recorded one of ``messages`` (where a failed
        attempt on them is shown in the chat); ``None`` when none of them is recorded."""
        for message in reversed(messages):
            index = self.ledger.index_of(message)
            if index is not None:
                return index + 1
        return None

    # -- tier 2 ------------------------------------------------------------------------

    @property
    def protect_recent_tokens(self) -> int:
        configured = self.settings.protect_recent_tokens
        if configured is not None:
            return configured
        return min(PROTECT_MAX_TOKENS, int(PROTECT_SHARE_OF_LIMIT * self.budget.limit))

    @property
    def min_savings_tokens(self) -> int:
        configured = self.settings.min_savings_tokens
        if configured is not None:
            return configured
        return min(MIN_SAVINGS_MAX_TOKENS, int(MIN_SAVINGS_SHARE_OF_LIMIT * self.budget.limit))

    def tool_calls(self, messages: list[ModelMessage], tokens: int, *, trigger: CompactionTrigger,
                   focus: str | None, force: bool, everything: bool = False, reach_current_turn: bool = False,
                   preview_chars: int = DEFAULT_PREVIEW_CHARS, fits_below: float | None = None) -> StepResult:
        """Pointers for old tool activity, applied only when it frees a meaningful amount (and, with
        ``fits_below``, only when it brings the context below that); ``reach_current_turn`` (before a lossy
        step) also takes the running turn's outputs the model has already read, outside the protection window
        counted from the end; ``everything`` (the pre-flight's last resort) includes the running turn's own
        outputs and shortens earlier pointers' previews to ``preview_chars``."""
        result = compact_tool_calls(messages, estimator=self.accountant.estimator,
                                    large_results_dir=self.large_results_dir,
                                    protect_recent_tokens=0 if everything else self.protect_recent_tokens,
                                    file_writing_tools=self.file_writing_tools,
                                    include_current_turn=everything, reach_current_turn=reach_current_turn,
                                    preview_chars=preview_chars)
        saved = self.accountant.scaled(result.tokens_saved)
        if saved <= 0 or (not force and saved < self.min_savings_tokens) or (
                fits_below is not None and tokens - saved >= fits_below):
            return StepResult(messages, tokens)
        try:
            files_created = result.save()
        except OSError as error:
            failed = self._fail(strategy="pointer", trigger=trigger, tokens=tokens, focus=focus, messages=messages,
                                reason=f"could not save tool outputs before compacting them: {error}")
            return StepResult(messages, tokens, failed)
        self.emit(CompactionStarted(trigger=trigger, tokens=tokens, focus=focus))
        for original, rewritten in zip(messages, result.messages, strict=True):
            index = self.ledger.index_of(original)
            if rewritten is not original and index is not None:
                self.ledger.remember(rewritten, index)
        self.accountant.invalidate(result.messages)
        after = max(0, tokens - saved)
        event = self._finish(CompactionFinished(
            strategy="pointer" if result.pointered_returns or result.placeholder_images else "mask", trigger=trigger,
            tokens_before=tokens, tokens_after=after,
            messages_replaced=result.pointered_returns + result.masked_args + result.placeholder_images,
            images_replaced=result.placeholder_images,
            files_created=tuple(files_created), focus=focus))
        return StepResult(result.messages, after, event)

    def tool_calls_before_lossy(self, step: StepResult, *, trigger: CompactionTrigger, focus: str | None,
                                fits_below: float | None) -> StepResult:
        """``step`` (tier 2 as usual) followed by tier 2 reaching into the running turn, for when a summary is
        next: outputs the model has already read become pointers, if that brings the context below
        ``fits_below`` (the summary is then not needed; otherwise the summarizer is given those outputs whole)."""
        deeper = self.tool_calls(step.messages, step.tokens, trigger=trigger, focus=focus, force=False,
                                 reach_current_turn=True, fits_below=fits_below)
        return deeper if isinstance(deeper.event, CompactionFinished) else step

    # -- tier 3 ------------------------------------------------------------------------

    def _cut(self, messages: Sequence[ModelMessage], fixed_tokens: int) -> int | None:
        """Where a summary's span ends: the newest ``keep_recent_fraction`` of the limit is kept verbatim — but
        never more than fits beside the instructions and a summary (:data:`KEPT_TAIL_SHARE`): a kept tail the
        request could not carry (an exchange as large as a smaller window, after ``/model``) is summarized with
        the rest, never left for the pre-flight to drop."""
        estimator = self.accountant.estimator
        keep_tokens = int(self.settings.keep_recent_fraction * self.budget.limit / self.accountant.ratio)
        cut = find_cut_index(messages, keep_tokens, estimator)
        if cut is None:
            return None
        room = int(KEPT_TAIL_SHARE * self.budget.limit / self.accountant.ratio) - fixed_tokens
        kept = estimator.total(messages[cut:])
        if kept <= room:
            return cut
        later = cut
        for index in range(cut, len(messages) - 1):  # the first later safe cut whose tail fits, else the last
            kept -= estimator.message_tokens(messages[index])
            if is_safe_cut(messages, index + 1):
                later = index + 1
                if kept <= room:
                    break
        return later

    def plan_summary(self, messages: Sequence[ModelMessage], fixed_tokens: int = 0) -> SummaryPlan:
        """What :meth:`summarize` would replace and keep verbatim, without running it."""
        cut = self._cut(messages, fixed_tokens)
        if cut is None:
            kept = self.accountant.estimate(messages, 0)
            return SummaryPlan(0, 0, len(messages), kept, False)
        earlier = summary_info(messages[0]) is not None
        return SummaryPlan(summarized_messages=cut - (1 if earlier else 0),
                           summarized_tokens=self.accountant.estimate(messages[:cut], 0),
                           kept_messages=len(messages) - cut,
                           kept_tokens=self.accountant.estimate(messages[cut:], 0),
                           has_earlier_summary=earlier)

    async def _write_summary(self, body: Sequence[ModelMessage], previous: str | None,
                             focus: str | None) -> tuple[str, float, list[str]]:
        """The summary text with its retention score and missing identifiers; a second pass is asked for
        what the first lost, and a failed second pass keeps the first (raises only if the first fails)."""
        text = await self.summarizer.summarize(body, previous_summary=previous, focus=focus)
        identifiers = extract_identifiers(body, vocabulary=self.tool_vocabulary)
        score, missing = retention_score(text, identifiers)
        if score < RETENTION_TARGET and missing:  # the extractive summary takes the list too
            try:
                second = await self.summarizer.summarize(body, previous_summary=previous, focus=focus,
                                                         must_include=missing)
            except SummarizerError as error:
                logger.warning("second summary pass failed (%s); the first pass is kept", error)
            else:
                second_score, second_missing = retention_score(second, identifiers)
                if second_score >= score:
                    text, score, missing = second, second_score, second_missing
        return text, score, missing

    async def summarize(self, messages: list[ModelMessage], tokens: int, fixed_tokens: int, *,
                        trigger: CompactionTrigger, focus: str | None) -> StepResult:
        """Replace everything before the kept tail by one summary message (or leave all as it was).

        An automatic summary must shrink the context to at most ``INFLATION_LIMIT`` of its size (no
        compaction loops); one the user asked for is applied whenever it frees tokens at all.
        """
        cut = self._cut(messages, fixed_tokens)
        if cut is None:
            failed = self._fail(strategy="summary", trigger=trigger, tokens=tokens, focus=focus, messages=messages,
                                reason="nothing to summarize: no safe cut point before the kept recent turns")
            return StepResult(messages, tokens, failed)
        span = messages[:cut]
        previous = summary_text(span[0]) if summary_info(span[0]) is not None else None
        body = span[1:] if previous is not None else span
        if self.on_before_compress is not None:
            self.on_before_compress(span, cut)
        self.emit(CompactionStarted(trigger=trigger, tokens=tokens, focus=focus))
        moment = SummaryMoment(trigger=trigger, focus=focus, tokens_before=tokens, limit=self.budget.limit,
                               window=self.budget.window, messages_summarized=len(body),
                               messages_kept=len(messages) - cut,
                               room_chars=addition_cap_chars(self.budget.limit, self.accountant.ratio))
        if self.summary_hooks is not None:
            await self.summary_hooks.before_summary(moment)
        try:
            text, score, missing = await self._write_summary(body, previous, focus)
        except SummarizerError as error:
            failed = self._fail(strategy="summary", trigger=trigger, tokens=tokens, focus=focus, reason=str(error),
                                messages=messages)
            return StepResult(messages, tokens, failed)
        kept_from = self.ledger.index_of(messages[cut])
        summary = make_summary_message(text, strategy="summary", kept_from=kept_from, replaced=len(body),
                                       focus=focus, retention=score, missing=len(missing))
        candidate = [summary, *messages[cut:]]
        extra = self.on_after_compress(candidate) if self.on_after_compress is not None else None
        if extra:
            summary = make_summary_message(text, strategy="summary", kept_from=kept_from, replaced=len(body),
                                           focus=focus, retention=score, missing=len(missing), extra=extra)
            candidate[0] = summary
        before = self.accountant.estimate(messages, fixed_tokens)
        after = self.accountant.estimate(candidate, fixed_tokens)
        rejected = self._rejection(before, after, manual=trigger == "manual",
                                   fits_below=self.budget.at(self.settings.compaction_threshold))
        if rejected is not None:
            failed = self._fail(strategy="summary", trigger=trigger, tokens=tokens, focus=focus, reason=rejected,
                                messages=messages, would_free=max(0, before - after), tokens_estimated=before)
            # before' ≥ after / INFLATION_LIMIT makes after ≤ INFLATION_LIMIT × before'; scaled to ``tokens``
            retry_from = math.ceil(tokens * after / (INFLATION_LIMIT * before)) if before > 0 else None
            return StepResult(messages, tokens, failed, retry_from=retry_from)
        if self.summary_hooks is not None:  # the summary is applied: what the hooks add is part of it, counted
            added = await self.summary_hooks.after_summary(replace(
                moment, summary=text, tokens_after=max(0, tokens - (before - after))))
            if added:
                added = capped_addition(added, moment.room_chars)
                summary = make_summary_message(text, strategy="summary", kept_from=kept_from, replaced=len(body),
                                               focus=focus, retention=score, missing=len(missing),
                                               extra="\n\n".join(filter(None, [extra, added])))
                candidate[0] = summary
                after = self.accountant.estimate(candidate, fixed_tokens)
        summary_index = self.ledger.record_one(summary)
        self.accountant.invalidate(candidate)
        tokens_after = max(0, tokens - (before - after))
        event = self._finish(CompactionFinished(
            strategy="summary", trigger=trigger, tokens_before=tokens, tokens_after=tokens_after,
            messages_replaced=len(body), retention_score=round(score, 3),
            missing_identifiers=tuple(missing[:MAX_REPORTED_MISSING]), missing_count=len(missing), focus=focus,
            summary_index=summary_index))
        return StepResult(candidate, tokens_after, event)

    @staticmethod
    def _rejection(before: int, after: int, *, manual: bool, fits_below: float) -> str | None:
        """Why a summary must not replace what it summarized, or ``None`` to apply it. An automatic one must
        shrink the context to ``INFLATION_LIMIT`` of its size — or bring it below ``fits_below`` (the compaction
        threshold): then no compaction follows at once either, and in a small window, where instructions and
        tools are most of every request, a summary that fits is not thrown away after it was paid for."""
        if manual:
            if after < before:
                return None
            return (f"summary rejected: it would not shrink the context (~{before:,} → ~{after:,} tokens); "
                    "history left unchanged")
        if after <= INFLATION_LIMIT * before or after < min(before, fits_below):
            return None
        return (f"summary rejected: the context would only shrink from ~{before:,} to ~{after:,} tokens "
                f"(an automatic summary needs ≤ {INFLATION_LIMIT:.0%}); history left unchanged")

    # -- pre-flight ----------------------------------------------------------------------

    def fit_window(self, messages: list[ModelMessage], tokens: int, fixed_tokens: int, *,
                   shrink: float = 1.0) -> StepResult:
        """Deterministic fallback so no request is sent over the limit; raises if impossible.

        The cut is chosen on raw estimates so that the calibrated request fits ``shrink`` × the budget's
        limit; the caller re-measures the result and calls again (with a smaller ``shrink``) if the
        measured request still does not fit.
        """
        ratio = self.accountant.ratio
        target = math.floor(self.budget.limit * shrink / ratio) - fixed_tokens
        fitted = fallback_compact(messages, target_tokens=target, estimator=self.accountant.estimator)
        if fitted is None:
            raise ContextOverflowError(describe_overflow(
                messages, tokens=tokens, fixed_tokens=self.accountant.scaled(fixed_tokens), budget=self.budget,
                ratio=ratio))
        new_messages, replaced = fitted
        kept_from = self.ledger.index_of(new_messages[1]) if len(new_messages) > 1 else None
        marker = with_kept_from(new_messages[0], kept_from) if kept_from is not None else new_messages[0]  # type: ignore[arg-type]
        new_messages[0] = marker
        self.emit(CompactionStarted(trigger="preflight", tokens=tokens))
        summary_index = self.ledger.record_one(marker)
        self.accountant.invalidate(new_messages)
        after = self.accountant.estimate(new_messages, fixed_tokens)
        event = self._finish(CompactionFinished(
            strategy="fallback", trigger="preflight", tokens_before=tokens, tokens_after=after,
            messages_replaced=replaced, summary_index=summary_index))
        return StepResult(new_messages, after, event)
