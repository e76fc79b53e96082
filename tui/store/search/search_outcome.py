"""What a search answers besides its hits: how they were found (the notices), and how far a large indexing run
has got."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.store.search.index_problems import IndexProblem
    from tui.store.search.queries import SearchHit

__all__ = ["IndexingProgress", "SearchOutcome", "pending_notice", "problem_notice"]


@dataclass
class SearchOutcome:
    """Hits, best first, and what the user should know about how they were found."""

    hits: list[SearchHit]
    notice: str | None = None
    scanned_sessions: int = 0
    """Sessions searched by reading their files (not through the index)."""
    incomplete: bool = False
    """Some sessions were neither indexed nor scanned (the picker's per-keystroke budget)."""
    by_session: dict[str, SearchHit] = field(default_factory=dict)
    matching_sessions: int = 0
    """How many sessions match in all (``by_session`` may hold only the first ``limit`` of them)."""
    unchecked_sessions: int = 0
    """Sessions beyond the first ``limit`` that may match but were not checked (the picker's bound on work):
    ``matching_sessions`` is then a lower bound, ``matching_sessions + unchecked_sessions`` an upper one."""


@dataclass(frozen=True)
class IndexingProgress:
    """How far a large refresh of the index has got (the CLI prints it, the app shows it)."""

    done: int
    """Bytes of history indexed so far."""
    total: int
    started: float
    """``time.monotonic()`` when it started."""
    reason: str | None = None
    """Why everything is indexed again (``None``: a first run, or much changed)."""

    def describe(self) -> str:
        """``indexed 40 of 101 MB (40%, about 12 s left)``."""
        done, total = self.done / 1e6, self.total / 1e6
        if self.done <= 0:
            return f"indexing {total:.0f} MB of history for search" + (f" ({self.reason})" if self.reason else "")
        elapsed = time.monotonic() - self.started
        left = (self.total - self.done) * elapsed / self.done
        return f"indexed {done:.0f} of {total:.0f} MB ({100 * self.done / max(self.total, 1):.0f}%, about {left:.0f} s left)"


def problem_notice(problem: IndexProblem, scanned: int) -> str:
    """Why the index was not used, and how many sessions were searched by reading their files instead."""
    what = {"corrupt": "was corrupt and is being rebuilt", "locked": "is locked by another deep-tui",
            "read-only": "cannot be written (read-only disk?)", "unavailable": "could not be used"}[problem.kind]
    return f"the search index {what}; searched {scanned} session{'s' if scanned != 1 else ''} directly"


def pending_notice(problem: IndexProblem | None, scanned: int) -> str:
    """The notice for ``scanned`` sessions the index had not caught up with (or could not, for ``problem``)."""
    if problem is not None:
        return problem_notice(problem, scanned)
    plural = scanned != 1
    return f"{scanned} session{'s' if plural else ''} not indexed yet {'were' if plural else 'was'} searched directly"
