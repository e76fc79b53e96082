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
    except UnicodeError as error:
        raise refuse(f"{action} failed: the file is not valid UTF-8 text ({error.reason})") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise refuse(f"{action} failed: {reason}") from None
