"""The pre-flight: a request still over the limit is cut until it fits — the running turn's read outputs become
pointers first (reversible), then the fallback cuts — measured again after each step. A request that cannot be
made to fit is never sent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic_ai.messages import ModelMessage

from tui.chain.accounting import TokenAccountant
from tui.chain.budget import WindowBudget
from tui.chain.compactor import Compactor, ContextOverflowError, StepResult
from tui.chain.events import CompactionFinished
from tui.chain.overflow import describe_overflow

__all__ = ["LAST_RESORT_PREVIEW_CHARS", "MAX_FIT_ROUNDS", "fit_to_limit"]

MAX_FIT_ROUNDS = 4
LAST_RESORT_PREVIEW_CHARS = (600, 150, 0)
"""Preview sizes the pre-flight's last resort tries in turn when even the newest turn does not fit."""

Measure = Callable[[list[ModelMessage]], Awaitable[int]]
"""Counts a working context (with the model's own counter near the limit, where it has one)."""


async def fit_to_limit(working: list[ModelMessage], tokens: int, *, compactor: Compactor,
                       accountant: TokenAccountant, budget: WindowBudget, fixed_tokens: int, window: int,
                       measure: Measure, report_usage: Callable[[int], None]) -> tuple[list[ModelMessage], int]:
    """Cut until the request fits ``budget.limit``, measuring again after each cut (``measure``, each figure
    reported to ``report_usage``); raises :class:`ContextOverflowError` when it cannot be made to fit."""
    shrink = 1.0
    last_resorts = list(LAST_RESORT_PREVIEW_CHARS)
    for round_number in range(1 + MAX_FIT_ROUNDS + len(LAST_RESORT_PREVIEW_CHARS)):
        if tokens <= budget.limit:
            return working, tokens
        cut = False  # first round: reversible first, the running turn's read outputs become pointers
        step = compactor.tool_calls(working, tokens, trigger="preflight", focus=None, force=True,
                                    reach_current_turn=True) if round_number == 0 else None
        if step is None or not isinstance(step.event, CompactionFinished):
            cut = True
            try:
                step = compactor.fit_window(working, tokens, fixed_tokens, shrink=shrink)
            except ContextOverflowError:
                # Even the newest turn alone is too big (e.g. parallel tool outputs, each under the eviction
                # limit): its outputs become pointers to saved copies (reversible) with ever shorter previews.
                step = _last_resort(working, tokens, last_resorts, compactor=compactor, accountant=accountant,
                                    budget=budget, fixed_tokens=fixed_tokens)
                cut = False
        working = step.messages
        measured = await measure(working)
        report_usage(measured)
        if cut:  # the cut was aimed to fit, so the estimate was low: the next cut aims lower
            shrink *= min(0.9, budget.limit / max(1, measured))
        tokens = measured
    if tokens > budget.limit:
        raise ContextOverflowError(
            f"the request still measures about {tokens:,} tokens after {MAX_FIT_ROUNDS} cuts, over the limit of "
            f"{budget.limit:,} (window {window:,}); nothing was sent")
    return working, tokens


def _last_resort(working: list[ModelMessage], tokens: int, previews: list[int], *, compactor: Compactor,
                 accountant: TokenAccountant, budget: WindowBudget, fixed_tokens: int) -> StepResult:
    """The next of the pointer rewrites with shorter previews that changes something; re-raises the
    overflow when none is left."""
    while previews:
        step = compactor.tool_calls(working, tokens, trigger="preflight", focus=None, force=True,
                                    everything=True, preview_chars=previews.pop(0))
        if isinstance(step.event, CompactionFinished):
            return step
    raise ContextOverflowError(describe_overflow(
        working, tokens=tokens, fixed_tokens=accountant.scaled(fixed_tokens), budget=budget,
        ratio=accountant.ratio))
