"""A project's own config (``<project>/.deep-tui/config.toml``): read without following links, checked
against the trust store, and described as the settings it would change.

A project is the directory deep-tui runs in when the data directory is the default ``./.deep-tui``
(neither ``--data-dir`` nor ``$DEEP_TUI_HOME``). Its config is the project's, not the user's: it applies
only while the store holds a trust of that project whose digest matches the config's bytes now, so a
changed config (a ``git pull``) is asked about again.
"""

from __future__ import annotations

import enum
import errno
import hashlib
import json
import os
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tui.config import (
    MAX_CONFIG_BYTES,
    ConfigError,
    ConfigLayer,
    Settings,
    flatten_settings,
    parse_config,
    settings_from_layers,
)
from tui.paths import DEFAULT_DATA_DIR_NAME, USER_CONFIG_NAME
from tui.terminal_text import visible
from tui.trust.store import TrustRecord, TrustStore, TrustStoreError, now_utc, project_key

SHOWN_VALUE_LIMIT = 160
"""A value longer than this (as shown) is cut, with an ellipsis: a hostile value can be huge."""

NOT_SET = "(not set)"


@dataclass(frozen=True)
class ProjectConfig:
    """The config file a project ships; ``layer`` is ``None`` and ``error`` says why when it cannot be used."""

    root: Path
    """The project directory's real path (the trust store's key)."""
    path: Path
    """The file, for messages: ``root/.deep-tui/config.toml``."""
    digest: str
    """``sha256:`` of the bytes read (what a trust covers)."""
    layer: ConfigLayer | None
    error: str | None = None


def read_project_config(directory: Path) -> ProjectConfig | None:
    """``directory/.deep-tui/config.toml``, or ``None`` when there is none.

    Neither ``.deep-tui`` nor ``config.toml`` is followed if it is a link (a cloned repository can ship
    links); a link, a non-regular file, a file too large, bad TOML or a bad value gives a config with
    ``error`` set (it can then never be trusted).

    Another project file that acts as settings (``.mcp.json``) must join the digest here, and make a
    project without ``config.toml`` count as having a config, or it would apply untrusted."""
    root = Path(project_key(directory))
    path = root / DEFAULT_DATA_DIR_NAME / USER_CONFIG_NAME
    try:
        raw = _read_without_links(root)
    except _Unusable as problem:
        return ProjectConfig(root, path, f"unusable:{problem}", None, f"{path}: {problem}")
    if raw is None:
        return None
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    try:
        layer = parse_config(raw, str(path))
        settings_from_layers([layer])  # every key valid on its own
    except ConfigError as error:
        return ProjectConfig(root, path, digest, None, str(error))
    return ProjectConfig(root, path, digest, layer)


class _Unusable(Exception):
    pass


def _read_without_links(root: Path) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        root_fd = os.open(root, flags | os.O_DIRECTORY)
    except OSError as error:
        raise _Unusable(f"cannot open the project directory: {error.strerror}") from None
    try:
        try:
            dir_fd = os.open(DEFAULT_DATA_DIR_NAME, flags | os.O_DIRECTORY, dir_fd=root_fd)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(root / DEFAULT_DATA_DIR_NAME):
                raise _Unusable(f"{DEFAULT_DATA_DIR_NAME} is a symbolic link (not followed)") from None
            if error.errno == errno.ENOTDIR:
                return None  # a file named .deep-tui: no project config (the data directory check says more)
            raise _Unusable(f"cannot open {DEFAULT_DATA_DIR_NAME}: {error.strerror}") from None
        try:
            try:
                file_fd = os.open(USER_CONFIG_NAME, flags | os.O_NONBLOCK, dir_fd=dir_fd)
            except FileNotFoundError:
                return None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise _Unusable("it is a symbolic link (not followed)") from None
                raise _Unusable(f"cannot read it: {error.strerror}") from None
            with os.fdopen(file_fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raise _Unusable("it is not a regular file")
                raw = handle.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise _Unusable(f"it is larger than {MAX_CONFIG_BYTES:,} bytes")
            return raw
        finally:
            os.close(dir_fd)
    finally:
        os.close(root_fd)


def shown_value(value: object) -> str:
    """A setting's value as one line of plain text: strings quoted with every control character escaped
    (and the rest made visible), ``(not set)`` for none, cut at :data:`SHOWN_VALUE_LIMIT` characters."""
    if value is None:
        text = NOT_SET
    elif isinstance(value, str):
        text = visible(json.dumps(value, ensure_ascii=False))
    else:
        text = visible(str(value))
    if len(text) > SHOWN_VALUE_LIMIT:
        text = text[: SHOWN_VALUE_LIMIT - 1] + "…"
    return text


@dataclass(frozen=True)
class SettingChange:
    """One setting the project config changes: ``key`` from ``current`` to ``project`` (both shown text)."""

    key: str
    current: str
    project: str
    since_trust: bool = False
    """The value differs from the one the user trusted earlier (only for a changed config)."""


def describe_changes(current: Settings, with_project: Settings, earlier: TrustRecord | None) -> list[SettingChange]:
    """The settings that differ between ``current`` (without the project config) and ``with_project``."""
    before, after = flatten_settings(current), flatten_settings(with_project)
    changes = []
    for key, value in after.items():
        old = before.get(key)
        if old == value:
            continue
        shown = shown_value(value)
        since = earlier is not None and earlier.settings.get(key) != shown
        changes.append(SettingChange(visible(key), shown_value(old), shown, since))
    return changes


def _flat_keys(prefix: str, table: dict[str, object]) -> list[tuple[str, object]]:
    """The keys a config file sets, as ``table.key`` → value."""
    keys: list[tuple[str, object]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            keys += _flat_keys(f"{prefix}{key}.", value)
        else:
            keys.append((visible(f"{prefix}{key}"), value))
    return keys


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

    @property
    def trustable(self) -> bool:
        return self.error is None

    def record(self) -> TrustRecord:
        """The trust to store when the user trusts this config."""
        shown = {key: shown_value(value) for key, value in _flat_keys("", self.layers[-1].data)}
        return TrustRecord(str(self.config.root), self.config.digest, now_utc(), shown)

    def trust_command(self) -> str:
        """The command that trusts this project, quoted for a shell and safe to print."""
        return visible(f"deep-tui trust {shlex.quote(str(self.config.root))}")

    def ignored_line(self) -> str:
        """The one line ``run`` prints on stderr when it goes on without the project config."""
        where = visible(str(self.config.path))
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
                   store: TrustStore) -> tuple[ConfigLayer | None, PendingProject | None]:
    """The project config of ``directory`` against the store: ``(layer, None)`` when it is trusted and
    applies, ``(None, pending)`` when the user has to decide, ``(None, None)`` when there is none."""
    config = read_project_config(directory)
    if config is None:
        return None, None
    store_error = None
    try:
        earlier = store.lookup(config.root)
    except TrustStoreError as error:
        earlier, store_error = None, str(error)
    if earlier is not None and earlier.digest == config.digest and config.layer is not None:
        return config.layer, None
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
    return PendingProject(config, state, earlier, tuple(changes), layers, error, store_error)


class TrustChoice(enum.Enum):
    """The user's answer to the trust prompt."""

    TRUST = "trust"
    """Apply the project config and remember the trust (until the config changes or it is revoked)."""
    ONCE = "once"
    """Apply it for this session only; ask again next time."""
    NOT_NOW = "not-now"
    """Go on without it; ask again next time."""


class TrustDecider(Protocol):
    """What the app asks about, and how its answer takes effect (see :class:`tui.launch.ProjectTrustGate`)."""

    @property
    def pending(self) -> PendingProject: ...

    def decide(self, choice: TrustChoice) -> tuple[Settings, str | None]:
        """Apply ``choice`` to the session about to open: the settings now in force, and a warning (the trust
        could not be recorded) or ``None``."""
        ...
