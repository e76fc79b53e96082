"""Where the user's place in a text goes when the text is replaced under it (an outside change reloaded).

Lines are matched old → new (difflib); a place on a line that survives stays on that line at the same
column, so lines inserted above it or at it push it down instead of landing under the cursor.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

Location = tuple[int, int]
"""(row, column), as Textual's TextArea counts them."""


def follow_location(old: Sequence[str], new: Sequence[str], location: Location) -> Location:
    """``location`` in the lines ``old``, moved to the same place in the lines ``new``.

    A line that changed keeps the place at its row within the changed block (the column clipped to the new
    line); a line that was deleted puts it at the start of what now follows. ``new`` has at least one line."""
    row, column = location
    last = len(new) - 1
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if not old_start <= row < old_end:
            continue
        if tag == "equal":
            return new_start + row - old_start, column
        if tag == "replace":
            new_row = new_start + min(row - old_start, new_end - new_start - 1)
            return new_row, min(column, len(new[new_row]))
        if new_start > last:  # deleted at the very end: the end of what is left
            return last, len(new[last])
        return new_start, 0
    return last, len(new[last])  # a place past the old text: the end
