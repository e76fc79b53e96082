"""When an automatic summary may run: at most once per user turn, not again in a turn where one failed or the
user declined one, and — after one rejected for freeing too little — not before the context has grown to where
a summary could free enough (a paid request is not rejected again turn after turn)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tui.chain.events import CompactionTrigger

__all__ = ["SummaryConsent", "SummaryPacing"]

SummaryConsent = Callable[[int, int], Awaitable[bool]]
"""Asked (tokens, limit) whether a summary may run when automatic compaction is off."""


class SummaryPacing:
    """One session's pacing of summaries. ``retry_from``: the size before which no automatic summary runs
    (``None``: no such wait), given when the session opens; ``on_backoff`` is told when it changes (the session
    keeps it on disk)."""

    def __init__(self, retry_from: int | None, on_backoff: Callable[[int | None], None] | None) -> None:
        self.summarized_this_turn = False
        self.blocked_this_turn = False
        """A summary failed, or the user declined one, in this turn: none is tried again in it."""
        self.retry_from = retry_from
        self._on_backoff = on_backoff

    def begin_user_turn(self) -> None:
        """A new user turn: automatic summarization may run (once) again."""
        self.summarized_this_turn = False
        self.blocked_this_turn = False

    def may_summarize(self, tokens: int, *, force: bool) -> bool:
        """Whether a summary may run now, for a context of ``tokens`` (``force``: asked for, not automatic)."""
        return not (self.summarized_this_turn or self.blocked_this_turn or (
            not force and self.retry_from is not None and tokens < self.retry_from))

    async def consent(self, ask: SummaryConsent | None, tokens: int, limit: int) -> bool:
        """With automatic compaction off and a request over the limit: whether the user lets a summary run now
        (``ask``: once per turn; nobody to ask: no, the pre-flight then only makes pointers and cuts)."""
        if ask is None or self.blocked_this_turn:
            return False
        allowed = await ask(tokens, limit)
        if not allowed:
            self.blocked_this_turn = True  # asked once per turn
        return allowed

    def succeeded(self, trigger: CompactionTrigger) -> None:
        """A summary was made."""
        if trigger == "auto":
            self.summarized_this_turn = True
        self.set_backoff(None)

    def failed(self, trigger: CompactionTrigger, retry_from: int | None) -> None:
        """A summary failed or was rejected (``retry_from``: the size from which one could free enough)."""
        if trigger == "auto":
            self.blocked_this_turn = True
            if retry_from is not None:
                self.set_backoff(retry_from)

    def set_backoff(self, tokens: int | None) -> None:
        """Wait for the context to reach ``tokens`` before the next automatic summary (``None``: no wait)."""
        if tokens != self.retry_from:
            self.retry_from = tokens
            if self._on_backoff is not None:
                self._on_backoff(tokens)
