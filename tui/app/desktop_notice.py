"""Desktop notifications through the terminal: a long turn ended, or an approval waits, while you look elsewhere.

The app writes an escape sequence the terminal turns into a desktop notification:

- **OSC 9** (``ESC ] 9 ; text BEL``): iTerm2, WezTerm, ghostty, kitty;
- **OSC 777** (``ESC ] 777 ; notify ; title ; body BEL``): foot, urxvt (its notify extension), VTE terminals
  that carry the patch (GNOME Terminal on Fedora, Ubuntu), ghostty, WezTerm;
- a **bell** (BEL) where neither is known to work: most terminals mark the tab or window, flash or beep.

``notify_method = "auto"`` picks by the terminal's environment (:func:`terminal_kind`); a terminal it does not
know gets the bell only, since some (the Linux console) print an OSC they do not know as text.

**tmux** handles no OSC 9 notification (3.3 knows no OSC 9; later versions read only OSC 9;4, a progress bar)
nor OSC 777: both are dropped. So inside tmux (``$TMUX`` set) the escape is wrapped for passthrough
(``ESC P tmux; … ESC \\``, every ESC inside doubled), which tmux hands to the outer terminal only with
``set -g allow-passthrough on``, and a bell follows in any case: tmux flags the window (``#{window_bell_flag}``,
``monitor-bell``) and, with ``bell-action`` at its default, rings the outer terminal's bell.

Everything in the text is hostile (a model's answer, a tool's name, a command): :func:`notice_text` makes it one
line of printable characters (controls shown as pictures, known secrets redacted) and caps its length, so
nothing can end the escape early or start another one.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

from tui.base.redaction import redact
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from tui.base.ui_config import UiSettings

__all__ = ["MAX_NOTICE_CHARS", "TITLE", "DesktopNotifier", "escape_sequence", "notice_text", "should_notify",
           "terminal_kind"]

logger = logging.getLogger(__name__)

TITLE = "deep-tui"
MAX_NOTICE_CHARS = 160
"""A notification's body is cut to this many characters (desktop notifications show about two lines)."""

_BELL = "\a"
_BLANKS = re.compile(r"\s+")


def notice_text(text: str, limit: int = MAX_NOTICE_CHARS) -> str:
    """``text`` as one line of printable characters, at most ``limit`` long (``…`` where cut): known secrets
    redacted, control characters shown as pictures (``ESC`` → ``␛``), line breaks and tabs as spaces."""
    text = visible(redact(text))
    text = _BLANKS.sub(" ", text).strip()  # newlines and tabs: visible() keeps them, an OSC payload may not
    text = "".join(ch for ch in text if ch.isprintable())  # nothing non-printable is left, whatever visible() keeps
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


def terminal_kind(environ: Mapping[str, str]) -> str:
    """``osc9``, ``osc777`` or ``unknown``: which notification escape the terminal is known to show, from the
    variables it sets (they survive into tmux, unlike ``TERM_PROGRAM``, which tmux replaces)."""
    program = environ.get("TERM_PROGRAM", "")
    term = environ.get("TERM", "")
    if (program in ("iTerm.app", "WezTerm", "ghostty") or "ITERM_SESSION_ID" in environ
            or "WEZTERM_PANE" in environ or "GHOSTTY_RESOURCES_DIR" in environ
            or "KITTY_WINDOW_ID" in environ or term in ("xterm-kitty", "xterm-ghostty")):
        return "osc9"
    if term.startswith(("foot", "rxvt-unicode")) or "VTE_VERSION" in environ:
        return "osc777"
    return "unknown"


def _osc(title: str, body: str, kind: str) -> str:
    if kind == "osc9":
        return f"\x1b]9;{title}: {body}{_BELL}"
    # OSC 777 splits its fields at ';': none may hold one
    return f"\x1b]777;notify;{title.replace(';', ',')};{body.replace(';', ',')}{_BELL}"


def _tmux_passthrough(sequence: str) -> str:
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def escape_sequence(title: str, body: str, *, method: str, environ: Mapping[str, str]) -> str:
    """What is written to the terminal for one notification (``title`` and ``body`` made safe here too)."""
    title, body = notice_text(title, 40), notice_text(body)
    kind = terminal_kind(environ) if method == "auto" else method
    in_tmux = bool(environ.get("TMUX"))
    if kind not in ("osc9", "osc777"):
        return _BELL
    sequence = _osc(title, body, kind)
    if in_tmux:
        return _tmux_passthrough(sequence) + _BELL
    return sequence


def should_notify(policy: str, *, focused: bool) -> bool:
    """``always``: yes; ``unfocused``: only while the terminal does not have the focus; ``never``: no."""
    return policy == "always" or (policy == "unfocused" and not focused)


class DesktopNotifier:
    """Sends the app's desktop notifications, as ``[ui]`` says (read at each one, so a session switch's settings
    apply)."""

    def __init__(self, *, settings: Callable[[], UiSettings], focused: Callable[[], bool],
                 write: Callable[[str], None], environ: Mapping[str, str] | None = None) -> None:
        """``focused``: whether the terminal has the focus now (Textual's ``App.app_focus``: the terminal
        reports focus changes once the driver asked it to); ``write``: raw text to the terminal."""
        self._settings = settings
        self._focused = focused
        self._write = write
        self._environ = environ if environ is not None else os.environ

    def turn_ended(self, seconds: float, summary: str) -> bool:
        """A turn (or ``!command``) ended after ``seconds``: a notification when it was long enough; whether
        one was sent."""
        if seconds < self._settings().notify_after:
            return False
        return self.send(summary)

    def approval_waiting(self, what: str) -> bool:
        """An approval dialog opened and waits for an answer: whether a notification was sent."""
        return self.send(f"waiting for your approval: {what}")

    def send(self, body: str) -> bool:
        """One notification, if the policy and the focus allow it; whether it was sent."""
        settings = self._settings()
        if not should_notify(settings.notify, focused=self._focused()):
            return False
        try:
            self._write(escape_sequence(TITLE, body, method=settings.notify_method, environ=self._environ))
        except OSError as error:  # the terminal went away: the app's driver says so on its own
            logger.info("the desktop notification was not written: %s", error)
            return False
        return True
