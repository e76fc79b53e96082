"""What a failure of the search index means: corrupt (rebuilt), locked by another deep-tui, read-only, or unavailable
for now — each one line a user can read. No sqlite connection is made here."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

__all__ = ["IndexProblem", "ProblemKind", "classify"]

ProblemKind = Literal["corrupt", "locked", "read-only", "unavailable"]


class IndexProblem(Exception):
    """The index cannot be used right now; ``kind`` says why, ``str()`` says it to a user."""

    def __init__(self, kind: ProblemKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


def classify(error: BaseException, path: Path) -> IndexProblem:
    """What an sqlite3 (or OS) error means for the index."""
    text = str(error).lower()
    if isinstance(error, sqlite3.OperationalError | OSError):
        if "locked" in text or "busy" in text:
            return IndexProblem("locked", f"the search index {path} is locked by another deep-tui")
        if "readonly" in text or "read-only" in text or "unable to open" in text or isinstance(error, OSError):
            return IndexProblem("read-only", f"the search index {path} cannot be written ({error})")
        if "interrupted" in text:
            return IndexProblem("unavailable", "the search took too long")
        if "disk i/o" in text:
            return IndexProblem("unavailable", f"the search index {path} could not be read ({error})")
        return IndexProblem("unavailable", f"the search index {path} failed: {error}")
    if isinstance(error, sqlite3.DatabaseError):  # "file is not a database", "malformed"
        return IndexProblem("corrupt", f"the search index {path} is corrupt ({error})")
    return IndexProblem("unavailable", f"the search index {path} failed: {error}")
