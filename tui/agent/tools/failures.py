"""How the agent's tools report a failure: as a failed tool result the model can react to.

``ToolFailed`` (not ``ModelRetry``) is used on purpose: a refusal or an I/O error is an answer,
not a malformed call, so it must not use up the run's retry budget and abort a long turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic_ai import ToolFailed


def refuse(message: str) -> ToolFailed:
    """The exception a tool raises to answer the model with an error."""
    return ToolFailed(message)


@contextmanager
def reported_as_tool_error(action: str) -> Iterator[None]:
    """Turn an operating-system or decoding error inside the block into a clear tool error."""
    try:
        yield
    except (UnicodeDecodeError, UnicodeEncodeError) as error:
        raise refuse(f"{action} failed: the file is not valid UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise refuse(f"{action} failed: {_reason(error)}") from None


_PLAIN_REASONS: tuple[tuple[type[OSError], str], ...] = (
    (NotADirectoryError, "a part of the path is a file, not a directory"),
    (IsADirectoryError, "it is a directory"),
    (FileNotFoundError, "no such file or directory"),
    (PermissionError, "permission denied"),
    (FileExistsError, "it already exists"),
)


def _reason(error: OSError) -> str:
    """The operating system's words when it gave some, else a plain sentence for the error's kind."""
    if error.strerror:
        return error.strerror
    for kind, words in _PLAIN_REASONS:
        if isinstance(error, kind):
            return words
    return str(error) or type(error).__name__
