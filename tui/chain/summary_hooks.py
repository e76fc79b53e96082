"""What whoever runs the chain may do around a summary (tier 3): be told before it is written, and add text to
the new context after it — the agent's ``[[hooks.pre_compact]]`` / ``[[hooks.post_compact]]``.

The chain knows only :class:`SummaryHooks`; the agent implements it (the chain never imports the agent). What a
hook adds is capped here, against the request limit, so it counts in every figure and can never push a request
over the window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tui.chain.estimate import CHARS_PER_TOKEN
from tui.chain.events import CompactionTrigger

ADDITION_SHARE_OF_LIMIT = 0.05
"""What ``after_summary`` adds to the new context takes at most this share of the request limit."""
MAX_ADDITION_TOKENS = 4_000
"""…and never more than this many tokens (a large window does not need pages of rules after a summary)."""


@dataclass(frozen=True)
class SummaryMoment:
    """One summary, as the hooks are told of it."""

    trigger: CompactionTrigger
    focus: str | None
    tokens_before: int
    """The context (in the provider's tokens) before the summary."""
    limit: int
    """The most a request may carry (window − answer reserve − margin)."""
    window: int
    messages_summarized: int
    messages_kept: int
    summary: str | None = None
    """The summary's text (after it was written; ``None`` before)."""
    tokens_after: int | None = None
    """The context after the summary, before anything is added (after it was written)."""
    room_chars: int = 0
    """The most characters ``after_summary`` may add (the rest is cut: :func:`capped_addition`)."""


class SummaryHooks(Protocol):
    """Called by the compactor around each summary it writes (not around pointers or the fallback's cut)."""

    async def before_summary(self, moment: SummaryMoment) -> None:
        """The summary is about to be written (its span is chosen). Must not raise; bounded in time."""
        ...

    async def after_summary(self, moment: SummaryMoment) -> str | None:
        """The summary was written and will replace its span: text to append to the new context, or ``None``.
        Must not raise; bounded in time."""
        ...


def addition_cap_chars(limit: int, ratio: float) -> int:
    """The characters an addition may take for a request limit of ``limit`` provider tokens (``ratio``: the
    model's provider tokens per estimated token)."""
    tokens = min(MAX_ADDITION_TOKENS, int(ADDITION_SHARE_OF_LIMIT * limit))
    return max(0, int(tokens / max(ratio, 0.1)) * CHARS_PER_TOKEN)


def capped_addition(text: str, room_chars: int) -> str:
    """``text`` cut to ``room_chars`` characters, saying how much was left out."""
    if len(text) <= room_chars:
        return text
    note = f"\n[… {len(text) - room_chars:,} more characters left out: the hooks' text is capped at {room_chars:,}]"
    if room_chars <= len(note) + 20:
        return text[:room_chars]
    return text[:room_chars - len(note)] + note
