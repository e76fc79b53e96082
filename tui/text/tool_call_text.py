"""What a tool call looked at, read from its JSON arguments: the file it read or wrote, or the pattern
it searched for, as a user would say it."""

from __future__ import annotations

import json

from tui.text.wording import clip_words

PATH_ARGUMENTS = ("path", "file_path")
PATTERN_ARGUMENTS = ("pattern", "query", "url", "command")


def _arguments(args_json: str) -> dict[str, object]:
    try:
        parsed = json.loads(args_json) if args_json else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


SHOWN_ARGUMENT_CHARS = 120
"""An argument longer than this is cut after a whole word, with ``…``."""


def _first_text(arguments: dict[str, object], names: tuple[str, ...], *, limit: int | None = None) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return clip_words(text, limit) if limit is not None else text[:SHOWN_ARGUMENT_CHARS]
    return None


def path_argument(args_json: str) -> str | None:
    """The file a tool call read or wrote (its ``path`` argument), or ``None``."""
    return _first_text(_arguments(args_json), PATH_ARGUMENTS)


def call_source(tool_name: str, args_json: str) -> str:
    """What a tool call looked at, as a user would say it: ``read_file src/app.py``, ``grep 'TODO' in src``,
    or just the tool's name when it took neither a path nor a pattern. A long argument is cut after a whole word,
    with ``…`` (never mid-word, as if the command ended there)."""
    arguments = _arguments(args_json)
    path = _first_text(arguments, PATH_ARGUMENTS, limit=SHOWN_ARGUMENT_CHARS)
    pattern = _first_text(arguments, PATTERN_ARGUMENTS, limit=SHOWN_ARGUMENT_CHARS)
    if pattern is not None:
        return f"{tool_name} '{pattern}'" + (f" in {path}" if path else "")
    return f"{tool_name} {path}" if path else tool_name
