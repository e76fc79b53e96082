"""Which paths the agent's file tools may touch: the working directory and the data directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.agent.tool_errors import refuse


@dataclass(frozen=True)
class PathPolicy:
    """Resolves tool paths and refuses anything outside the two allowed roots.

    Paths are resolved through symlinks first, so a link inside the workdir that points
    elsewhere is refused like the path it points to.
    """

    workdir: Path
    data_root: Path

    def resolve(self, path: str) -> Path:
        """The absolute, symlink-resolved path, or a tool error saying why it is refused."""
        if "\x00" in path:
            raise refuse("path contains a NUL byte")
        if not path.strip():
            raise refuse("path is empty")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.workdir / candidate
        resolved = candidate.resolve()
        if self.allows(resolved):
            return resolved
        raise refuse(
            f"path {path!r} is outside the working directory ({self.workdir}) and the data directory "
            f"({self.data_root}); only files under those can be used"
        )

    def allows(self, resolved: Path) -> bool:
        """Whether an already symlink-resolved path lies under one of the allowed roots."""
        return any(resolved == root or resolved.is_relative_to(root)
                   for root in (self.workdir.resolve(), self.data_root.resolve()))

    def display(self, path: Path) -> str:
        """A path as the agent should write it back: relative to the workdir when inside it."""
        try:
            return str(path.relative_to(self.workdir.resolve()))
        except ValueError:
            return str(path)
