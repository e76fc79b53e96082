"""A ``!command`` the user ran: how the model reads it, and how the chat shows it again after a reopen.

The command and its output are recorded as a request of their own, the moment the command ends (so a
reopened session shows them, and nothing is lost when the app quits before the next prompt). Its one
user-prompt part is :func:`context_text`; the request's metadata (``USER_COMMAND_KEY``) names the command,
its status line, where a large output was saved and the output's size (``chars``, as the chat counted it live).
"""

from __future__ import annotations


def context_text(command: str, output: str, status: str) -> str:
    """How a ``!command`` reads to the model: a line saying who ran what, the output, the status line."""
    if output and not output.endswith("\n"):
        output += "\n"
    return f"[The user ran this shell command themselves (not you): `{command}`. Its output:]\n{output}{status}"


def shown_output(context: str, status: str) -> str:
    """The output part of a :func:`context_text` (without the first line and the status line)."""
    _, _, rest = context.partition("\n")
    return rest.removesuffix(status).removesuffix("\n") if status else rest


def command_metadata(value: object) -> tuple[str, str, str | None] | None:
    """``(command, status, saved_path)`` from a request's ``USER_COMMAND_KEY`` metadata, or ``None`` when it is
    not one (metadata comes from messages.json, which may have been edited)."""
    if not isinstance(value, dict):
        return None
    command, status, saved = value.get("command"), value.get("status"), value.get("saved_path")
    if not isinstance(command, str) or not isinstance(status, str):
        return None
    return command, status, saved if isinstance(saved, str) else None


def output_chars(value: object, context: str, status: str) -> int:
    """The size of a recorded command's whole output, as the chat showed it live: the ``chars`` recorded with it,
    or (a session from before they were) the size of the output in its :func:`context_text`."""
    chars = value.get("chars") if isinstance(value, dict) else None
    if isinstance(chars, int) and not isinstance(chars, bool) and chars >= 0:
        return chars
    return len(shown_output(context, status))
