"""A project's own config (``<project>/.deep-tui/config.toml`` and/or ``<project>/.mcp.json``, and the subagents,
skills and commands it ships in ``.claude/`` and ``.deep-tui/``): read without following links, checked against
the trust store, and described as the settings it would change (its hooks first), the MCP servers it would start
and the definitions it would load.

A project is the directory deep-tui runs in when the data directory is the default ``./.deep-tui``
(neither ``--data-dir`` nor ``$DEEP_TUI_HOME``). Its config is the project's, not the user's: it applies
only while the store holds a trust of that project whose digest matches all those files' bytes now, so a
change to any of them (a ``git pull``) is asked about again.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tui.base.config import ConfigError, Settings
from tui.base.config_layers import ConfigLayer, parse_config, settings_from_layers, without_user_only_keys
from tui.base.mcp_config import (
    PROJECT_FILE_NAME,
    McpConfigError,
    McpServerConfig,
    parse_project_servers,
)
from tui.base.paths import DEFAULT_DATA_DIR_NAME, USER_CONFIG_NAME
from tui.text.terminal_text import visible
from tui.trust.hook_entries import is_hook_key
from tui.trust.project_files import (
    NO_EXTENSIONS,
    ExtensionEntry,
    ProjectExtensions,
    describe_extensions,
    recorded_extensions,
)
from tui.trust.project_reading import UnusableProject, read_extensions, read_without_links
from tui.trust.server_entries import SERVER_KEY_PREFIX, SHOWN_VALUE_LIMIT, ServerEntry, describe_servers, shown_server
from tui.trust.setting_changes import (
    SettingChange,
    describe_changes,
    flat_keys,
    setting_key,
    shown_settings,
    shown_value,
)
from tui.trust.store import TrustRecord, TrustStore, TrustStoreError, now_utc, project_key

# SHOWN_VALUE_LIMIT, describe_changes and shown_value are re-exported (from server_entries and setting_changes)
__all__ = [
    "SHOWN_VALUE_LIMIT",
    "PendingProject",
    "ProjectConfig",
    "TrustChoice",
    "TrustDecider",
    "TrustState",
    "assess_project",
    "describe_changes",
    "pending_project",
    "project_digest",
    "read_project_config",
    "shown_value",
]


@dataclass(frozen=True)
class ProjectConfig:
    """The config files a project ships; ``error`` says why they cannot be used (then nothing of them applies)."""

    root: Path
    """The project directory's real path (the trust store's key)."""
    path: Path
    """The first of its files, for messages: ``root/.deep-tui/config.toml``, else ``root/.mcp.json``."""
    digest: str
    """``sha256:`` of the bytes read (what a trust covers; see :func:`project_digest`)."""
    layer: ConfigLayer | None
    """The settings of ``config.toml`` (``None``: there is none, or it cannot be used)."""
    error: str | None = None
    mcp_path: Path | None = None
    """``root/.mcp.json`` when the project has one."""
    servers: tuple[McpServerConfig, ...] = ()
    """The MCP servers its ``.mcp.json`` would start (empty when it cannot be used)."""
    extensions: ProjectExtensions = NO_EXTENSIONS
    """The subagents, skills and commands it ships (loaded only once it is trusted)."""

    @property
    def files(self) -> tuple[Path, ...]:
        """The project's config files and definition folders, as shown to the user."""
        return tuple(dict.fromkeys(path for path in (self.path, self.mcp_path, *self.extensions.folders)
                                   if path is not None))


def project_digest(toml: bytes | None, mcp_json: bytes | None, extensions: str | None = None) -> str:
    """What a trust covers. ``config.toml`` alone: the SHA-256 of its bytes (as before ``.mcp.json`` joined, so
    those trusts still hold); with a ``.mcp.json`` or definitions (``extensions``: their fingerprint, see
    :func:`~tui.trust.project_files.scan_project_extensions`): the SHA-256 of every part's digest, so a change
    to any (or any appearing) asks again."""
    import hashlib  # here, not for the first frame: most projects have nothing to digest

    if mcp_json is None and extensions is None:
        return "sha256:" + hashlib.sha256(toml or b"").hexdigest()
    toml_part = hashlib.sha256(toml).hexdigest() if toml is not None else "-"
    mcp_part = hashlib.sha256(mcp_json).hexdigest() if mcp_json is not None else "-"
    parts = f"deep-tui project config\nconfig.toml {toml_part}\n{PROJECT_FILE_NAME} {mcp_part}\n"
    if extensions is not None:
        parts += f"definitions {extensions}\n"
    return "sha256:" + hashlib.sha256(parts.encode()).hexdigest()


def read_project_config(directory: Path) -> ProjectConfig | None:
    """The project config of ``directory`` (``.deep-tui/config.toml``, ``.mcp.json``, the definitions in
    ``.claude/`` and ``.deep-tui/``), or ``None`` when it has none of them.

    No link is followed (``.deep-tui``, ``config.toml``, ``.mcp.json``: a cloned repository can ship links);
    a link, a non-regular file, a file too large, bad TOML or JSON or a bad value gives a config with
    ``error`` set (it can then never be trusted)."""
    root = Path(project_key(directory))
    toml_path = root / DEFAULT_DATA_DIR_NAME / USER_CONFIG_NAME
    mcp_path = root / PROJECT_FILE_NAME
    try:
        toml, mcp_json = read_without_links(root)
        extensions = read_extensions(root)
    except UnusableProject as problem:
        where = problem.path or toml_path
        return ProjectConfig(root, where, f"unusable:{problem}", None, f"{where}: {problem}",
                             mcp_path if where == mcp_path else None)
    if toml is None and mcp_json is None and not extensions:
        return None
    path = toml_path if toml is not None else mcp_path if mcp_json is not None else extensions.folders[0]
    shown_mcp = mcp_path if mcp_json is not None else None
    digest = project_digest(toml, mcp_json, extensions.fingerprint)
    layer = None
    try:
        if toml is not None:
            layer = without_user_only_keys(parse_config(toml, str(toml_path)))
            settings_from_layers([layer])  # every key valid on its own
        servers = parse_project_servers(mcp_json, str(mcp_path)) if mcp_json is not None else ()
    except (ConfigError, McpConfigError) as error:
        return ProjectConfig(root, path, digest, None, str(error), shown_mcp, extensions=extensions)
    return ProjectConfig(root, path, digest, layer, None, shown_mcp, servers, extensions)


class TrustState(enum.Enum):
    """Where a project config stands with the user."""

    UNTRUSTED = "untrusted"
    CHANGED = "changed"
    """Trusted once, but the config's bytes changed since."""


@dataclass(frozen=True)
class PendingProject:
    """A project config that does not apply until the user decides: what it is, what it would change."""

    config: ProjectConfig
    state: TrustState
    earlier: TrustRecord | None
    changes: tuple[SettingChange, ...]
    layers: tuple[ConfigLayer, ...]
    """The user's layers with the project's last: what applies once it is trusted."""
    error: str | None
    """Why the config can never apply as it is (a link, bad TOML, a bad value); trusting is then refused."""
    store_error: str | None = None
    """Why the trust store could not be read (every project then counts as untrusted)."""
    servers: tuple[ServerEntry, ...] = ()
    """The MCP servers its ``.mcp.json`` would start once trusted."""
    extensions: tuple[ExtensionEntry, ...] = ()
    """The subagents, skills and commands it would load once trusted."""

    @property
    def trustable(self) -> bool:
        return self.error is None

    def record(self) -> TrustRecord:
        """The trust to store when the user trusts this config: each setting it sets as :func:`describe_changes`
        shows it (so a later change marks only what really differs), and its ``.mcp.json`` servers."""
        layer = self.config.layer
        raw = flat_keys("", layer.data if layer else {})
        shown = {key: shown_value(value) for key, value in raw}
        if layer is not None:
            alone = shown_settings(settings_from_layers([layer]))
            set_keys = {setting_key(key) for key, _ in raw}
            shown = {key: value for key, value in shown.items() if not is_hook_key(key)}  # one entry per hook:
            shown |= {key: value for key, value in alone.items()
                      if key in set_keys or (is_hook_key(key) and key.rsplit(".", 1)[0] in set_keys)}
        shown |= {SERVER_KEY_PREFIX + server.name: shown_server(server) for server in self.config.servers}
        shown |= recorded_extensions(self.config.extensions)
        return TrustRecord(str(self.config.root), self.config.digest, now_utc(), shown)

    def trust_command(self) -> str:
        """The command that trusts this project, quoted for a shell and safe to print."""
        return visible(f"deep-tui trust {shlex.quote(str(self.config.root))}")

    def ignored_line(self) -> str:
        """The one line ``run`` prints on stderr when it goes on without the project config."""
        where = " and ".join(visible(str(path)) for path in self.config.files)
        if self.error is not None:
            return f"deep-tui: ignoring the project config (it cannot be used: {visible(self.error)})"
        if self.state is TrustState.CHANGED:
            why = "it changed since you trusted this project"
        else:
            why = "this project is not trusted"
        if self.store_error is not None:
            why = f"the trust store cannot be read: {visible(self.store_error)}"
        return f"deep-tui: ignoring the project config {where}: {why} (review and trust it: {self.trust_command()})"


def assess_project(directory: Path, user_layers: Sequence[ConfigLayer],
                   store: TrustStore) -> tuple[ProjectConfig | None, PendingProject | None]:
    """The project config of ``directory`` against the store: ``(config, None)`` when it is trusted and
    applies (its ``layer`` and ``servers``), ``(None, pending)`` when the user has to decide, ``(None, None)``
    when there is none."""
    config = read_project_config(directory)
    if config is None:
        return None, None
    store_error = None
    try:
        earlier = store.lookup(config.root)
    except TrustStoreError as error:
        earlier, store_error = None, str(error)
    if earlier is not None and earlier.digest == config.digest and config.error is None:
        return config, None
    state = TrustState.UNTRUSTED if earlier is None else TrustState.CHANGED
    return None, pending_project(config, state, earlier, user_layers, store_error)


def pending_project(config: ProjectConfig, state: TrustState, earlier: TrustRecord | None,
                    user_layers: Sequence[ConfigLayer], store_error: str | None = None) -> PendingProject:
    """Describe ``config`` against the user's own settings (``user_layers``: defaults when empty)."""
    current = settings_from_layers(user_layers)
    error = config.error
    changes: list[SettingChange] = []
    layers = tuple(user_layers)
    if config.layer is not None:
        layers = (*layers, config.layer)
        try:
            changes = describe_changes(current, settings_from_layers(layers), earlier)
        except ConfigError as problem:  # valid alone, not with the user's settings (thresholds across files)
            error = str(problem)
    servers = tuple(describe_servers(config.servers, earlier))
    extensions = tuple(describe_extensions(config.extensions, earlier.settings if earlier is not None else None))
    return PendingProject(config, state, earlier, tuple(changes), layers, error, store_error, servers, extensions)


class TrustChoice(enum.Enum):
    """The user's answer to the trust prompt."""

    TRUST = "trust"
    """Apply the project config (settings, MCP servers, hooks, definitions) and remember the trust (until the config changes or it is revoked)."""
    ONCE = "once"
    """Apply it for this session only; ask again next time."""
    NOT_NOW = "not-now"
    """Go on without it; ask again next time."""


class TrustDecider(Protocol):
    """What the app asks about, and how its answer takes effect (see :class:`tui.cli.launch.ProjectTrustGate`)."""

    @property
    def pending(self) -> PendingProject: ...

    def decide(self, choice: TrustChoice) -> tuple[Settings, str | None]:
        """Apply ``choice`` to the session about to open: the settings now in force, and a warning (the trust
        could not be recorded) or ``None``."""
        ...
