"""What the header, gauge and footer show of a session: its own module, so the first frame (which shows it before
the session is open) does not load the rest of :mod:`tui.agent.runtime_api`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RuntimeInfo"]


@dataclass
class RuntimeInfo:
    """Facts the header, gauge and footer show."""

    session_id: str
    title: str
    model_name: str
    offline: bool
    parent: str | None = None
    offline_chosen: bool = False
    """The offline model is the user's choice (``--model offline`` …), not the stand-in for a missing one."""
    warnings: list[str] = field(default_factory=list)
