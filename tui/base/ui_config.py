"""The ``[ui]`` table: how the app tells you a long turn ended or an approval waits (desktop notifications).

Only the user's own config (or ``--config``, a chosen data dir's config) sets it: a project's config never
decides what the app writes to your terminal, so :func:`tui.base.config_layers.without_user_only_keys` drops the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

NOTIFY_POLICIES = ("always", "unfocused", "never")
"""``[ui] notify``: when a desktop notification is sent."""

NOTIFY_METHODS = ("auto", "osc9", "osc777", "bell")
"""``[ui] notify_method``: which escape the terminal gets (``auto``: chosen from the terminal's environment)."""


class UiConfigError(Exception):
    """A bad ``[ui]`` value; :mod:`tui.base.config` turns it into its ``ConfigError``."""


@dataclass(frozen=True)
class UiSettings:
    """The ``[ui]`` table."""

    notify: str = "unfocused"
    """``unfocused`` (the default): a desktop notification when a long turn ends or an approval waits while the
    terminal does not have the focus; ``always``: whether or not it has; ``never``."""
    notify_after: float = 20.0
    """A turn (or ``!command``) that took at least this many seconds is worth a notification when it ends."""
    notify_method: str = "auto"
    """``auto``, ``osc9``, ``osc777`` or ``bell`` (see :mod:`tui.app.desktop_notice`)."""

    def validate(self) -> None:
        """Raise :class:`UiConfigError` naming the first bad key."""
        if self.notify not in NOTIFY_POLICIES:
            raise UiConfigError(f"ui.notify must be one of {', '.join(NOTIFY_POLICIES)} (got {self.notify!r})")
        if self.notify_method not in NOTIFY_METHODS:
            raise UiConfigError(
                f"ui.notify_method must be one of {', '.join(NOTIFY_METHODS)} (got {self.notify_method!r})")
        if not (0 <= self.notify_after <= 86_400):
            raise UiConfigError(f"ui.notify_after must be between 0 and 86400 seconds (got {self.notify_after})")


def parse_ui_table(value: Any, source: str) -> UiSettings:
    """``[ui]`` from a parsed config file; raises :class:`UiConfigError` naming ``source`` and the key."""
    if not isinstance(value, dict):
        raise UiConfigError(f"{source}: [ui] must be a table")
    table: dict[str, Any] = {}
    for key, item in value.items():
        if key in ("notify", "notify_method"):
            if not isinstance(item, str):
                raise UiConfigError(f"{source}: ui.{key} must be a string (got {item!r})")
            table[key] = item
        elif key == "notify_after":
            if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
                raise UiConfigError(f"{source}: ui.notify_after must be a number of seconds (got {item!r})")
            table[key] = float(item)
        else:
            raise UiConfigError(f"{source}: unknown key ui.{key}")
    settings = UiSettings(**table)
    try:
        settings.validate()
    except UiConfigError as error:
        raise UiConfigError(f"{source}: {error}") from None
    return settings
