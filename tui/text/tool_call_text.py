"""What a tool call looked at, read from its JSON arguments: the file it read or wrote, or the pattern
it searched for, as a user would say it."""

from __future__ import annotations

import json

PATH_ARGUMENTS = ("path", "file_path")
PATTERN_ARGUMENTS = ("pattern", "query", "url", "command")


def _arguments(args_json: str) -> dict[str, object]:
    try:
        parsed = json.loads(args_json) if args_json else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _first_text(arguments: dict[str, object], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:120]
    return None


def path_argument(args_json: str) -> str | None:
    """The file a tool call read or wrote (its ``path`` argument), or ``None``."""
    return _first_text(_arguments(args_json), PATH_ARGUMENTS)


def call_source(tool_name: str, args_json: str) -> str:
    """What a tool call looked at, as a user would say it: ``read_file src/app.py``, ``grep 'TODO' in src``,
    or just the tool's name when it took neither a path nor a pattern."""
    arguments = _arguments(args_json)
    path = _first_text(arguments, PATH_ARGUMENTS)
    pattern = _first_text(arguments, PATTERN_ARGUMENTS)
    if pattern is not None:
        return f"{tool_name} '{pattern}'" + (f" in {path}" if path else "")
    return f"{tool_name} {path}" if path else tool_name
