"""Small human-readable formatters shared by the app's widgets and screens.

Every function here is pure (no clock read unless ``now`` is omitted), so
snapshot tests can pin the output by passing ``now``. Token counts come from
:mod:`tui.text.token_text` (the same for ``deep-tui run``), re-exported here.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, tzinfo

from textual.content import Content

from tui.text.terminal_text import visible
from tui.text.token_text import human_tokens, trim_zeros

__all__ = [
    "clock_time",
    "human_age",
    "human_duration",
    "human_percent",
    "human_size",
    "human_tokens",
    "literal",
    "short_id",
]


def human_size(size_bytes: int | None) -> str:
    """A byte count in binary units: ``512`` → ``"512 B"``, ``1536`` → ``"1.5 KiB"``, ``5 * 2**20`` → ``"5 MiB"``."""
    if size_bytes is None:
        return "–"
    value = float(size_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            if unit == "B":
                return f"{int(value)} B"
            return f"{trim_zeros(f'{value:.1f}')} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def human_duration(seconds: float) -> str:
    """A coarse duration: ``42`` → ``"42 s"``, ``300`` → ``"5 min"``, ``10_800`` → ``"3 h"``, ``3 * 86_400`` → ``"3 d"``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s"
    minutes = seconds / 60
    if minutes < 60:
        return f"{int(minutes)} min"
    hours = minutes / 60
    if hours < 48:
        return f"{int(hours)} h"
    days = hours / 24
    if days < 14:
        return f"{int(days)} d"
    if days < 60:
        return f"{int(days / 7)} w"
    if days < 365:
        return f"{int(days / 30)} mo"
    return f"{int(days / 365)} y"


def human_age(timestamp: float, now: float | None = None) -> str:
    """How long ago an epoch ``timestamp`` was: ``"just now"``, ``"5 min ago"``, ``"3 h ago"``, ``"2 d ago"``.

    ``now`` defaults to :func:`time.time`; pass it to get deterministic output.
    A timestamp in the future (clock skew between machines) reads ``"just now"``.
    """
    elapsed = (time.time() if now is None else now) - timestamp
    if elapsed < 60:
        return "just now"
    return f"{human_duration(elapsed)} ago"


def human_percent(fraction: float) -> str:
    """``0.4812`` → ``"48%"``; below 1 % but above zero → ``"<1%"``."""
    if 0 < fraction < 0.01:
        return "<1%"
    return f"{fraction * 100:.0f}%"


def clock_time(timestamp: float, *, with_date: bool = False, tz: tzinfo | None = None) -> str:
    """Local wall-clock time of an epoch ``timestamp``: ``"14:03:22"`` (or ``"2025-03-04 14:03:22"``).

    ``tz`` defaults to the local zone; tests pass :data:`datetime.timezone.utc`.
    """
    moment = datetime.fromtimestamp(timestamp, tz=tz if tz is not None else None)
    return moment.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S")


def short_id(session_id: str, length: int = 8) -> str:
    """The first ``length`` characters of a session id (any unique prefix selects a session)."""
    return session_id[:length]


def literal(text: str, style: str = "") -> Content:
    """User or model text as displayable content: never parsed as markup (``"[bold]"`` shows literally),
    control characters made visible (:func:`tui.text.terminal_text.visible`)."""
    text = visible(text)
    return Content.styled(text, style) if style else Content(text)


UTC = UTC
