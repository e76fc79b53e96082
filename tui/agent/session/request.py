"""Which session the command line asked for (kept apart so the app can start before pydantic-ai loads)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionRequest:
    """New session by default; ``--continue``, ``--resume ID`` and ``--fork`` as given."""

    continue_latest: bool = False
    resume: str | None = None
    fork: bool = False
