"""Counted nouns in user-facing text (``1 message``, ``2 messages``) and message numbers — one helper for every
layer."""

from __future__ import annotations

__all__ = ["clip_words", "message_index", "message_number", "plural"]


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``plural(1, "message")`` → ``"1 message"``; ``plural(1200, "message")`` → ``"1,200 messages"``.

    ``plural_form`` is for nouns that do not take an ``s`` (``plural(2, "summary", "summaries")``).
    """
    word = noun if count == 1 else (plural_form or f"{noun}s")
    return f"{count:,} {word}"


def message_number(index: int) -> int:
    """The number a message is shown and asked for by (the app, ``deep-tui search``, its ``--json``, the agent's
    history tools): "message 1" is a session's first message. ``index`` is its 0-based place in messages.json."""
    return index + 1


def message_index(number: int) -> int:
    """The 0-based place in messages.json of message ``number`` (see :func:`message_number`)."""
    return number - 1


def clip_words(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: whole when it fits, else cut after the last whole word that fits
    (mid-word only when a word alone is that long), with ``…`` saying something was cut."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    head = text[: limit - 1]
    after = text[len(head)]
    mid_word = not head[-1].isspace() and not (after.isspace() or after in ",;:.)]}'\"")
    space = head.rfind(" ")
    if mid_word and space >= limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"
