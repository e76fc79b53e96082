"""Counted nouns in user-facing text: ``1 message``, ``2 messages`` — one helper for every layer."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``plural(1, "message")`` → ``"1 message"``; ``plural(1200, "message")`` → ``"1,200 messages"``.

    ``plural_form`` is for nouns that do not take an ``s`` (``plural(2, "summary", "summaries")``).
    """
    word = noun if count == 1 else (plural_form or f"{noun}s")
    return f"{count:,} {word}"
