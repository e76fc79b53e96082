"""Which usage figures a provider reports are believed.

A provider (or a proxy in front of one) can report anything: a request of 10^12 input tokens priced at
$10,000,000, a count that would pin the token calibration at its bound. deep-tui never sends more than
its own limit (below the context window), so a figure far past the window — or past any window a model
has — is a bug on the other side. Such a figure is not used: the request is counted by estimate and its
cost is "price unknown"; the log says which figure was ignored. The response itself is recorded as it came.
"""

from __future__ import annotations

from pydantic_ai.usage import RequestUsage

MAX_BELIEVABLE_TOKENS = 100_000_000
"""More tokens than any model's context window holds, in any one field of one request's usage."""
WINDOW_SLACK = 2
"""A request's input may be counted up to this many context windows (tokenizers differ; never more)."""

_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def unbelievable_usage(usage: RequestUsage, window: int | None = None) -> str | None:
    """Why ``usage`` is not believed (one line for the log), or ``None`` when it is plausible."""
    for name in _FIELDS:
        value = getattr(usage, name, 0) or 0
        if value < 0 or value > MAX_BELIEVABLE_TOKENS:
            return f"{name.replace('_', ' ')} {value:,} on one request (at most {MAX_BELIEVABLE_TOKENS:,} are believed)"
    if window and usage.input_tokens > WINDOW_SLACK * window:
        return (f"input tokens {usage.input_tokens:,} on one request, over {WINDOW_SLACK} × the context window "
                f"of {window:,}")
    return None
