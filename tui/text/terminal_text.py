"""Text that is safe to show in a terminal: the one place hostile bytes are defused.

Every string that came from the model, a file, a tool or the network passes through
:func:`visible` before it is drawn (chat, tool blocks, viewer, log panels) or printed
(``run``, ``sessions``, ``search``). Escape sequences then cannot clear the screen, set the
window title or write the clipboard (OSC 52), and lone surrogates cannot crash an encoder.
"""

from __future__ import annotations

import re

CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0 controls except tab, newline and carriage return; DEL; the C1 range (CSI, OSC, …): what never
reaches a terminal raw."""

BIDI_CONTROLS = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional embeddings, overrides and isolates: they reorder how the text around them is drawn, so a
name or a line can look unlike what it is ("Trojan Source"). Shown as their code point, never applied."""

_SURROGATE = re.compile(r"[\ud800-\udfff]")

_PICTURES = {0x1B: "␛", 0x7F: "␡"}


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code in _PICTURES:
        return _PICTURES[code]
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␀ ␁ …
    return "\N{REPLACEMENT CHARACTER}"


def _code_point(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group()):04X}]"


def visible(text: str) -> str:
    """``text`` with control characters made visible (``ESC`` → ``␛``) and lone surrogates replaced.

    Tabs, newlines and carriage returns are kept; nothing else below U+0020, DEL or the C1
    range reaches the terminal, and bidi overrides show as ``[U+202E]``. The result is always
    encodable as UTF-8.
    """
    if text.isprintable():
        return text
    text = CONTROL_CHARACTERS.sub(_picture, text)
    text = BIDI_CONTROLS.sub(_code_point, text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SURROGATE.sub("\N{REPLACEMENT CHARACTER}", text)


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced, so it can be written as UTF-8 (records, files, stdout)."""
    return _SURROGATE.sub("\N{REPLACEMENT CHARACTER}", text)


def visible_json(json_text: str) -> str:
    """JSON text (a tool call's arguments) whose strings are made :func:`visible` *inside*, so that decoding it
    for display (``json.loads``) cannot bring an escaped ``\\u001b`` back; text that is not JSON is made visible."""
    import json  # with the first tool call shown, not for the first frame

    try:
        value = json.loads(json_text)
    except ValueError:
        return visible(json_text)
    return json.dumps(_visible_strings(value), ensure_ascii=False, separators=(",", ":"))


def _visible_strings(value: object) -> object:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [_visible_strings(item) for item in value]
    if isinstance(value, dict):
        return {visible(str(key)): _visible_strings(item) for key, item in value.items()}
    return value
