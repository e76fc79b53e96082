"""Which paths the agent's file tools may touch: the working directory, never deep-tui's own data.

The data directory (config.toml, sessions, MEMORY.md, the index, the log) belongs to deep-tui, even when
it sits inside the working directory (the default ``./.deep-tui``): the file tools never write, edit,
list or search in it. The one thing the agent may read there is a saved tool output the chain pointed
it to (``large_tool_results/``), through ``read_file`` only — and only deep-tui's own regular file: the
saved-outputs directory is never resolved, and a link on the way to the file (a planted
``large_tool_results -> ~``) is refused.

Writes (write_file, edit_file) are refused on a file with more than one hard link: changing it would
change the same bytes under its other names, which may lie outside the working directory. Reading
such a file stays allowed.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.tools.failures import refuse
from tui.base.nofollow import LinkRefusedError, check_no_links
from tui.base.paths import user_config_dir
from tui.text.terminal_text import BIDI_CONTROLS, visible

PATH_CHAR_LIMIT = 4096
"""The longest path a tool accepts (Linux's PATH_MAX): a longer one cannot name a file."""

SAVED_OUTPUTS_DIR = "large_tool_results"
"""The data directory's sub-directory of evicted tool outputs (``DataDir.large_results_dir``)."""


GIT_DIR_NAME = ".git"
"""No file tool writes in a ``.git`` (nor the ``.git`` file of a worktree or submodule)."""


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
    _config_root: Path = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The roots are resolved once: every check compares against them (a grep match, a listing row)
        object.__setattr__(self, "_workdir", self.workdir.resolve())
        object.__setattr__(self, "_data_root", self.data_root.resolve())
        # Not resolved: a link in place of the directory must not turn its target into "saved outputs".
        object.__setattr__(self, "_saved_outputs", self._data_root / SAVED_OUTPUTS_DIR)
        # The user's settings and trust store: an agent run in $HOME must not trust a project for the user.
        object.__setattr__(self, "_config_root", user_config_dir().resolve())

    def resolve(self, path: str) -> Path:
        """The absolute, resolved path for ls/glob/grep, or a tool error saying why it is refused."""
        resolved = self._resolved(path)
        if self._in_config_dir(resolved):
            raise refuse(f"path {visible(path)!r} is inside your deep-tui config directory ({self._config_root}: "
                         "settings and trusted projects), which the file tools may not read, write, list or search")
        if self.in_data_dir(resolved):
            raise refuse(self._data_dir_refusal(path))
        if self.allows(resolved):
            return resolved
        raise refuse(self._outside_refusal(path))

    def resolve_for_read(self, path: str) -> Path:
        """Like :meth:`resolve`, and also a saved output under the data directory's ``large_tool_results/``
        (a regular file deep-tui wrote there: a link on the way to it is refused)."""
        saved = self._saved_output(path)
        if saved is not None:
            return saved
        return self.resolve(path)

    def is_saved_output(self, path: Path) -> bool:
        """Whether ``path`` (as :meth:`resolve_for_read` gave it) is a saved output deep-tui wrote."""
        return path.parent == self._saved_outputs

    def _saved_output(self, path: str) -> Path | None:
        """``path`` (named without resolving it) when it is a file directly in the saved-outputs directory."""
        lexical = Path(os.path.abspath(self._absolute(path)))
        if lexical.parent != self._saved_outputs:
            return None
        try:
            check_no_links(lexical)
            mode = os.lstat(lexical).st_mode
        except LinkRefusedError as error:
            raise refuse(f"saved output {visible(path)!r} refused: {error}") from None
        except FileNotFoundError:
            return lexical  # read_file says it does not exist
        except OSError as error:
            raise refuse(f"saved output {visible(path)!r} cannot be read: {error.strerror or error}") from None
        if not stat.S_ISREG(mode):
            raise refuse(f"saved output {visible(path)!r} is not a regular file deep-tui wrote; refused")
        return lexical

    def resolve_for_write(self, path: str) -> Path:
        """Like :meth:`resolve`, and the file name must hold no control characters (newline, ESC, …) and no
        bidi overrides (which make a name look unlike what it is)."""
        if any(unicodedata.category(char) == "Cc" for char in path):
            raise refuse(f"path {visible(path)!r} contains control characters (newline, ESC, …); "
                         "choose a plain file name")
        if BIDI_CONTROLS.search(path):
            raise refuse(f"path {visible(path)!r} contains bidirectional override characters, which make a "
                         "name display unlike what it is; choose a plain file name")
        return self.resolve_for_edit(path)

    def resolve_for_edit(self, path: str) -> Path:
        """Like :meth:`resolve`, refusing a file with more than one hard link (see the module docstring) and
        anything in a ``.git`` (git runs what its config and hooks name, outside any sandbox)."""
        resolved = self.resolve(path)
        if GIT_DIR_NAME in resolved.relative_to(self._workdir).parts:
            raise refuse(f"path {visible(path)!r} is in a .git: a repository's config and hooks name programs git "
                         "runs, so the file tools never write there (as commands cannot: docs/security.md); "
                         "ask the user to run the git command instead")
        try:
            info = os.lstat(resolved)
        except OSError:
            return resolved  # a new file (or one the tool will report it cannot reach)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise refuse(f"{visible(path)!r} has {info.st_nlink} hard links: writing it would also change the same "
                         "file under its other name(s), which may lie outside the working directory, so deep-tui "
                         "refuses to write or edit it. Reading it is allowed; write a new file instead, or ask the "
                         "user to replace the link with a copy")
        return resolved

    def allows(self, resolved: Path) -> bool:
        """Whether an already resolved path may be listed, searched or written: in the workdir, not in the data dir."""
        workdir = self._workdir
        return (resolved == workdir or resolved.is_relative_to(workdir)) and not self.in_data_dir(resolved)

    def in_data_dir(self, resolved: Path) -> bool:
        """Whether an already resolved path is the data directory or lies inside it (or in the user's deep-tui
        config directory: deep-tui's own files either way)."""
        root = self._data_root
        return resolved == root or resolved.is_relative_to(root) or self._in_config_dir(resolved)

    @property
    def own_roots(self) -> tuple[Path, ...]:
        """deep-tui's own directories (the data directory, the user's config directory), resolved: listings and
        searches leave them out."""
        return (self._data_root, self._config_root)

    def _in_config_dir(self, resolved: Path) -> bool:
        root = self._config_root
        return resolved == root or resolved.is_relative_to(root)

    def display(self, path: Path) -> str:
        """A path as the agent should write it back: relative to the workdir when inside it."""
        try:
            return str(path.relative_to(self._workdir))
        except ValueError:
            return str(path)

    def _absolute(self, path: str) -> Path:
        if len(path) > PATH_CHAR_LIMIT:
            raise refuse(f"the path is {len(path):,} characters long; a path has at most {PATH_CHAR_LIMIT:,}")
        if "\x00" in path:
            raise refuse("path contains a NUL byte")
        if not path.strip():
            raise refuse("path is empty")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.workdir / candidate
        return candidate

    def _resolved(self, path: str) -> Path:
        return self._absolute(path).resolve()

    def _data_dir_refusal(self, path: str) -> str:
        return (f"path {visible(path)!r} is inside deep-tui's data directory ({self.data_root}), which the file "
                "tools may not write, edit, list or search; use the memory tools for MEMORY.md, and read_file "
                f"only for a saved output under {SAVED_OUTPUTS_DIR}/ that a notice pointed to")

    def _outside_refusal(self, path: str) -> str:
        return (f"path {visible(path)!r} is outside the working directory ({self.workdir}); "
                "only files under it can be used")
