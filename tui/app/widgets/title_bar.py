"""The title bar: app, session title, model (offline or not), fork parent, session id, the session's mode — fitted
to the width.

When the terminal is narrow the least useful parts go first (the session id, the long offline
notice, the fork parent), and the title is shortened; the model, "offline" and the mode always stay. The mode is
shown when it is not the default one (``⏸ plan mode``, ``⏵⏵ auto-accept writes``; ``⏸ plan``, ``⏵⏵ writes``
when narrow), as on the line above the gauge. What the user let the agent do without asking ("writes
auto-allowed", then "writes auto") stays while it fits whole: it is never cut mid-word, and only dropped when
even the shortest title leaves no room for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui.agent.tasks.modes import MODE_LABELS

if TYPE_CHECKING:
    from textual.events import Resize

    from tui.agent.runtime_api import RuntimeInfo

__all__ = ["TitleBar", "title_parts"]

MIN_TITLE = 12
MIN_MODE_TITLE = 4
"""The shortest title (``· e…``) when the mode needs the room."""
OFFLINE_LONG = "  offline — no LLM configured (type help)"
OFFLINE_CHOSEN_LONG = "  offline model, as you chose (type help)"
OFFLINE_SHORT = "  offline (type help)"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def auto_allowed_text(kinds: tuple[str, ...], *, short: bool = False) -> str:
    """``  writes auto-allowed`` (``  writes, commands auto`` when short); empty when nothing is."""
    if not kinds:
        return ""
    return f"  {', '.join(kinds)} {'auto' if short else 'auto-allowed'}"


def mode_text(mode: str, *, short: bool = False) -> tuple[str, str]:
    """The mode as the title bar shows it, with its style; empty in the default mode."""
    if mode == "plan":
        return ("  ⏸ plan" if short else "  ⏸ plan mode", "bold $warning")
    if mode in MODE_LABELS and mode != "default":
        return ("  ⏵⏵ writes" if short else f"  ⏵⏵ {MODE_LABELS[mode]}", "bold $accent")
    return ("", "")


def title_parts(info: RuntimeInfo, width: int, auto_allowed: tuple[str, ...] = (), mode: str = "default") -> Content:
    """The title bar's content for ``width`` cells (see the module docstring for what goes first).

    ``auto_allowed``: the kinds of action the agent may take without asking in this session (``writes``);
    ``mode``: the session's mode (``default``, ``accept-writes``, ``plan``)."""
    brand = ("deep-tui ", "bold $accent")
    if not info.session_id:  # still opening
        return Content.assemble(brand, (f"· {info.title}", "$text-muted"))
    model = ("", "") if info.offline else (f"· {info.model_name} ", "$text-muted")  # offline: said below
    offline = (OFFLINE_CHOSEN_LONG if info.offline_chosen else OFFLINE_LONG) if info.offline else ""
    fork = f" fork of {info.parent[:8]} " if info.parent else ""
    session = f"· {info.session_id} "
    title = f"· {info.title} "
    if mode == "accept-writes":  # the mode says it already
        auto_allowed = tuple(kind for kind in auto_allowed if kind != "writes")
    allowed = auto_allowed_text(auto_allowed)
    shown_mode = mode_text(mode)

    def length() -> int:
        return (len(brand[0]) + len(title) + len(fork) + len(model[0]) + len(session) + len(offline) + len(allowed)
                + len(shown_mode[0]))

    for drop in ("session", "offline", "allowed", "mode", "fork"):
        if length() <= width:
            break
        if drop == "session":
            session = ""
        elif drop == "offline" and offline:
            offline = OFFLINE_SHORT
        elif drop == "allowed":
            allowed = auto_allowed_text(auto_allowed, short=True)
        elif drop == "mode":
            shown_mode = mode_text(mode, short=True)
        elif drop == "fork":
            fork = ""
    if length() > width:
        room = max(MIN_TITLE, width - (length() - len(title)))
        title = _cut(title.rstrip(), room - 1) + " "
    if length() > width and allowed:
        allowed = ""  # whole or not at all: "writes au" would say something else
        room = max(MIN_TITLE, width - (length() - len(title)))
        title = _cut(f"· {info.title}", room - 1) + " "
    if length() > width and shown_mode[0]:  # the mode decides what the agent may do: the title gives way to it
        room = max(MIN_MODE_TITLE, width - (length() - len(title)))
        title = _cut(f"· {info.title}", room - 1) + " "
    parts: list[tuple[str, str]] = [brand, (title, "bold")]
    if fork:
        parts.append((fork, "$text-muted"))
    if model[0]:
        parts.append(model)
    if session:
        parts.append((session, "$text-muted"))
    if offline:
        parts.append((offline, "bold $warning"))
    if allowed:
        parts.append((allowed, "$warning"))
    if shown_mode[0]:
        parts.append(shown_mode)
    return Content.assemble(*parts)


class TitleBar(Static):
    """One line at the top; :meth:`show` sets what it says, a resize refits it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.info: RuntimeInfo | None = None
        self.auto_allowed: tuple[str, ...] = ()
        self.mode = "default"

    def show(self, info: RuntimeInfo, auto_allowed: tuple[str, ...] = (), mode: str = "default") -> None:
        """``auto_allowed``: what the agent may do without asking; ``mode``: the session's (see :func:`title_parts`)."""
        self.info = info
        self.auto_allowed = auto_allowed
        self.mode = mode
        self._fit()

    def _fit(self) -> None:
        if self.info is not None:
            width = self.content_region.width or self.app.size.width - 2
            self.update(title_parts(self.info, width, self.auto_allowed, self.mode))

    def on_resize(self, event: Resize) -> None:
        self._fit()
