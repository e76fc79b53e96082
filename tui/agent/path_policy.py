"""Which paths the agent's file tools may touch: the working directory, never deep-tui's own data.

The data directory (config.toml, sessions, MEMORY.md, the index, the log) belongs to deep-tui, even when
it sits inside the working directory (the default ``./.deep-tui``): the file tools never write, edit,
list or search in it. The one thing the agent may read there is a saved tool output the chain pointed
it to (``large_tool_results/``), through ``read_file`` only.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.tool_errors import refuse
from tui.terminal_text import BIDI_CONTROLS, visible

PATH_CHAR_LIMIT = 4096
"""The longest path a tool accepts (Linux's PATH_MAX): a longer one cannot name a file."""

SAVED_OUTPUTS_DIR = "large_tool_results"
"""The data directory's sub-directory of evicted tool outputs (``DataDir.large_results_dir``)."""


@dataclass(frozen=True)
class PathPolicy:
    """Resolves tool paths and refuses anything outside the working directory or inside the data directory.

    Paths are resolved through symlinks and ``..`` first, so a link inside the workdir that points
    elsewhere (or into the data directory) is refused like the path it points to.
    """

    workdir: Path
    data_root: Path
    _workdir: Path = field(init=False, repr=False, compare=False)
    _data_root: Path = field(init=False, repr=False, compare=False)
    _saved_outputs: Path = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The roots are resolved once: every check compares against them (a grep match, a listing row)
        object.__setattr__(self, "_workdir", self.workdir.resolve())
        object.__setattr__(self, "_data_root", self.data_root.resolve())
        object.__setattr__(self, "_saved_outputs", (self.data_root / SAVED_OUTPUTS_DIR).resolve())

    def resolve(self, path: str) -> Path:
        """The absolute, resolved path for ls/glob/grep, or a tool error saying why it is refused."""
        resolved = self._resolved(path)
        if self.in_data_dir(resolved):
            raise refuse(self._data_dir_refusal(path))
        if self.allows(resolved):
            return resolved
        raise refuse(self._outside_refusal(path))

    def resolve_for_read(self, path: str) -> Path:
        """Like :meth:`resolve`, and also a saved output under the data directory's ``large_tool_results/``."""
        resolved = self._resolved(path)
        if self.is_saved_output(resolved):
            return resolved
        return self.resolve(path)

    def resolve_for_write(self, path: str) -> Path:
        """Like :meth:`resolve`, and the file name must hold no control characters (newline, ESC, …) and no
        bidi overrides (which make a name look unlike what it is)."""
        if any(unicodedata.category(char) == "Cc" for char in path):
            raise refuse(f"path {visible(path)!r} contains control characters (newline, ESC, …); "
                         "choose a plain file name")
        if BIDI_CONTROLS.search(path):
            raise refuse(f"path {visible(path)!r} contains bidirectional override characters, which make a "
                         "name display unlike what it is; choose a plain file name")
        return self.resolve(path)

    def allows(self, resolved: Path) -> bool:
        """Whether an already resolved path may be listed, searched or written: in the workdir, not in the data dir."""
        workdir = self._workdir
        return (resolved == workdir or resolved.is_relative_to(workdir)) and not self.in_data_dir(resolved)

    def in_data_dir(self, resolved: Path) -> bool:
        """Whether an already resolved path is the data directory or lies inside it."""
        root = self._data_root
        return resolved == root or resolved.is_relative_to(root)

    def is_saved_output(self, resolved: Path) -> bool:
        """Whether an already resolved path is a file inside the data directory's saved outputs."""
        saved = self._saved_outputs
        return resolved != saved and resolved.is_relative_to(saved)

    def display(self, path: Path) -> str:
        """A path as the agent should write it back: relative to the workdir when inside it."""
        try:
            return str(path.relative_to(self._workdir))
        except ValueError:
            return str(path)

    def _resolved(self, path: str) -> Path:
        if len(path) > PATH_CHAR_LIMIT:
            raise refuse(f"the path is {len(path):,} characters long; a path has at most {PATH_CHAR_LIMIT:,}")
        if "\x00" in path:
            raise refuse("path contains a NUL byte")
        if not path.strip():
            raise refuse("path is empty")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.workdir / candidate
        return candidate.resolve()

    def _data_dir_refusal(self, path: str) -> str:
        return (f"path {visible(path)!r} is inside deep-tui's data directory ({self.data_root}), which the file "
                "tools may not write, edit, list or search; use the memory tools for MEMORY.md, and read_file "
                f"only for a saved output under {SAVED_OUTPUTS_DIR}/ that a notice pointed to")

    def _outside_refusal(self, path: str) -> str:
        return (f"path {visible(path)!r} is outside the working directory ({self.workdir}); "
                "only files under it can be used")
