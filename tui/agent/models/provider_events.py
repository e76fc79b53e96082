"""What the HTTP layer says about a model provider while a request is out: waiting, retrying, answering.

Delivered to a session's subscribers (the app's status line, ``deep-tui run``'s stderr) like the chain's
events, but not written to events.jsonl: they describe a moment, not the history. No pydantic-ai or
httpx here, so the app can import them before either is loaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from tui.chain.events import ChainEvent


@dataclass(frozen=True, kw_only=True)
class ProviderEvent(ChainEvent):
    """Base of the provider events; ``provider`` is what the user knows it by (``openai``, a host)."""

    kind: ClassVar[str] = "provider"
    provider: str


@dataclass(frozen=True, kw_only=True)
class ProviderWaiting(ProviderEvent):
    """Nothing has come from the provider since ``since`` (a request just sent, or an answer that stalled)."""

    kind: ClassVar[str] = "provider_waiting"
    since: float
    attempt: int = 1
    attempts: int = 1
    """Attempts allowed for this request (1 + retries)."""
    mid_answer: bool = False
    """True when part of the answer had arrived before the silence."""

    def describe(self, now: float) -> str:
        """``waiting for openai… 12 s`` (with the attempt when it is a retry)."""
        waited = max(0, math.floor(now - self.since))
        attempt = f" (attempt {self.attempt}/{self.attempts})" if self.attempt > 1 else ""
        middle = " (mid-answer)" if self.mid_answer else ""
        return f"waiting for {self.provider}{middle}… {waited} s{attempt}"


@dataclass(frozen=True, kw_only=True)
class ProviderRetrying(ProviderEvent):
    """An attempt failed in a way worth trying again; the next one starts ``delay`` seconds after ``timestamp``."""

    kind: ClassVar[str] = "provider_retrying"
    reason: str
    """What went wrong, e.g. ``HTTP 429``, ``read timeout after 120 s``, ``connection reset``."""
    retry: int
    """Which retry comes next (1 for the second attempt)."""
    retries: int
    delay: float
    retry_after: bool = False
    """True when ``delay`` is what the provider asked for (Retry-After)."""

    def describe(self, now: float) -> str:
        """``HTTP 429 — retry 2/3 in 1.4 s`` (the seconds left, counting down; the provider is not named). Tenths
        below ten seconds: the wait announced is the wait (backoff adds up to a second of jitter, which a whole
        number would round away)."""
        left = max(0.0, self.timestamp + self.delay - now)
        seconds = f"{left:.1f}" if self.delay < 10 else str(round(left))
        asked = " (Retry-After)" if self.retry_after else ""
        return f"{self.reason} — retry {self.retry}/{self.retries} in {seconds} s{asked}"


@dataclass(frozen=True, kw_only=True)
class ProviderAnswering(ProviderEvent):
    """Bytes are arriving (or the request is over): nothing to wait for."""

    kind: ClassVar[str] = "provider_answering"
