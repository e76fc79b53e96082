"""The on-disk layout of a deep-tui data directory (DESIGN §2), and the user's own config directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "DEEP_TUI_HOME"
DEFAULT_DATA_DIR_NAME = ".deep-tui"
CONFIG_HOME_ENV = "DEEP_TUI_CONFIG_HOME"
USER_CONFIG_NAME = "config.toml"
TRUST_STORE_NAME = "trusted-projects.json"


def user_config_dir() -> Path:
    """$DEEP_TUI_CONFIG_HOME, else $XDG_CONFIG_HOME/deep-tui, else ~/.config/deep-tui."""
    explicit = os.environ.get(CONFIG_HOME_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative value is ignored
        return Path(xdg) / "deep-tui"
    return Path.home() / ".config" / "deep-tui"


def user_config_file() -> Path:
    """The user's own settings: ``user_config_dir() / "config.toml"`` (optional)."""
    return user_config_dir() / USER_CONFIG_NAME


def trust_store_file() -> Path:
    """Where the projects the user trusts are recorded (outside every project)."""
    return user_config_dir() / TRUST_STORE_NAME


def data_dir_is_chosen(explicit: str | os.PathLike[str] | None) -> bool:
    """Whether the data directory is the user's choice (``--data-dir`` or ``$DEEP_TUI_HOME``), not the
    ``./.deep-tui`` found in the working directory (which belongs to the project there)."""
    return bool(explicit) or bool(os.environ.get(DATA_DIR_ENV))


@dataclass(frozen=True)
class DataDir:
    """Paths inside one data directory. Nothing is created until asked."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> DataDir:
        """``--data-dir`` first, then ``$DEEP_TUI_HOME``, then ``./.deep-tui``.

        A directory the user names is resolved (a link there is their choice); the default one is not: a
        project can ship ``.deep-tui`` as a link, which :meth:`unusable_reason` refuses."""
        if explicit:
            return cls(Path(explicit).expanduser().resolve())
        env_value = os.environ.get(DATA_DIR_ENV)
        if env_value:
            return cls(Path(env_value).expanduser().resolve())
        return cls((cwd or Path.cwd()).resolve() / DEFAULT_DATA_DIR_NAME)

    def unusable_reason(self) -> str | None:
        """Why this data directory cannot be used (a link, not a directory, cannot be created), or None."""
        if self.root.is_symlink():
            return (f"the data directory {self.root} is a symbolic link; deep-tui does not follow a link in place "
                    "of ./.deep-tui (a repository can ship one): remove it, or name a directory with --data-dir")
        if self.root.exists():
            if not self.root.is_dir():
                return f"the data directory {self.root} is a file, not a directory"
            if not os.access(self.root, os.W_OK | os.X_OK):
                return f"the data directory {self.root} is not writable"
            return None
        ancestor = self.root.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return f"the data directory {self.root} cannot be created: {ancestor} is not a directory"
        if not os.access(ancestor, os.W_OK | os.X_OK):
            return f"the data directory {self.root} cannot be created: {ancestor} is not writable"
        return None

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def large_results_dir(self) -> Path:
        """Evicted tool outputs, shared by all sessions so forks keep working pointers."""
        return self.root / "large_tool_results"

    @property
    def mcp_logs_dir(self) -> Path:
        """Each stdio MCP server's stderr, ``NAME.log`` (its last start only)."""
        return self.root / "mcp-logs"

    def memory_file(self, agent_name: str = "main") -> Path:
        return self.root / agent_name / "MEMORY.md"

    def session_dir(self, session_id: str) -> Path:
        return self.sessions_dir / session_id
