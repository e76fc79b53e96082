"""``deep-tui trust``: show what a project's config would change and trust it, revoke a trust, list them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.config import ConfigError
from tui.base.config_layers import read_config_file
from tui.base.errors import EXIT_FAILURE, UserFacingError
from tui.base.paths import DATA_DIR_ENV, trust_store_file, user_config_file
from tui.text.terminal_text import visible
from tui.trust.project import PendingProject, TrustState, pending_project, read_project_config
from tui.trust.store import TrustRecord, TrustStore, TrustStoreError, project_key

if TYPE_CHECKING:
    import argparse


def run_trust_command(args: argparse.Namespace) -> int:
    """Carry out ``trust [DIR] [--yes] | trust --revoke [DIR] | trust --list``."""
    store = TrustStore(trust_store_file())
    try:
        if args.list:
            return _list(store)
        directory = Path(args.directory or ".").expanduser()
        if args.revoke:
            return _revoke(store, directory)
        return _trust(store, directory, assume_yes=args.yes)
    except TrustStoreError as error:
        raise UserFacingError(str(error)) from None


def _trust(store: TrustStore, directory: Path, *, assume_yes: bool) -> int:
    if not directory.is_dir():
        raise UserFacingError(f"not a directory: {visible(str(directory))}")
    config = read_project_config(directory)
    root = visible(project_key(directory))
    if config is None:
        print(f"{root} has no project config (.deep-tui/config.toml, .mcp.json, or agents, skills or commands in "
              ".claude/ or .deep-tui/): nothing to trust")
        return 0
    try:
        user_layer = read_config_file(user_config_file(), required=False)
    except ConfigError as error:
        raise UserFacingError(str(error)) from None
    earlier = store.lookup(config.root)
    state = TrustState.UNTRUSTED if earlier is None else TrustState.CHANGED
    pending = pending_project(config, state, earlier, [user_layer] if user_layer else [])
    if pending.error is not None:
        raise UserFacingError(f"cannot trust this project config: {visible(pending.error)}")
    if earlier is not None and earlier.digest == config.digest:
        print(f"{root} is already trusted (since {earlier.trusted_at}); its config has not changed")
        return 0
    _describe(pending)
    if not assume_yes:
        if not sys.stdin.isatty():
            raise UserFacingError("refusing to trust without --yes (no terminal to ask)")
        answer = input("trust this project's config? [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            print("not trusted")
            return EXIT_FAILURE
    store.trust(pending.record())
    print(f"trusted {root} (revoke with: deep-tui trust --revoke {_quoted(config.root)})")
    if os.environ.get(DATA_DIR_ENV):
        print(f"note: ${DATA_DIR_ENV} is set, so deep-tui uses that data directory and its config, "
              "not this project's")
    return 0


def _describe(pending: PendingProject) -> None:
    config = pending.config
    print(f"project: {visible(str(config.root))}")
    for path in config.files:
        print(f"config:  {visible(str(path))}")
    print(f"digest:  {config.digest[:19]}…")
    if pending.earlier is not None:
        print(f"it changed since you trusted it on {pending.earlier.trusted_at} (* marks what is new)")
    if not pending.changes:
        print("it changes none of your settings")
    else:
        print("it would change (your config or the default → the project's; flags and environment still win):")
        width = max(len(change.key) for change in pending.changes)
        for change in pending.changes:
            mark = "*" if change.since_trust else " "
            why = f"  ({change.danger})" if change.danger else ""
            print(f" {mark} {change.key:<{width}}  {change.current} → {change.project}{why}")
    if pending.servers:
        print("MCP servers it would start, from .mcp.json (they run as you, outside any sandbox):")
        width = max(len(server.name) for server in pending.servers)
        for server in pending.servers:
            mark = "*" if server.since_trust else " "
            print(f" {mark} {server.name:<{width}}  {server.what}")
    if pending.extensions:
        print("subagents, skills and commands it would load (instructions the agent would follow):")
        width = max(len(entry.label) for entry in pending.extensions)
        for entry in pending.extensions:
            mark = "*" if entry.since_trust else " "
            print(f" {mark} {entry.label:<{width}}  {entry.name}  {entry.where}")
    for note in config.extensions.notes:
        print(f"not read: {note}")


def _revoke(store: TrustStore, directory: Path) -> int:
    removed = store.revoke(directory)
    root = visible(project_key(directory))
    if removed is None:
        print(f"{root} was not trusted")
    else:
        print(f"revoked the trust of {root}: its project config (and .mcp.json servers) is ignored again")
    return 0


def _list(store: TrustStore) -> int:
    records = store.records()
    if not records:
        print(f"no trusted projects (in {visible(str(store.path))})")
        return 0
    for record in records.values():
        print(f"{record.trusted_at}  {_status(record):<9}  {visible(record.project)}")
    return 0


def _status(record: TrustRecord) -> str:
    """``trusted``; ``changed`` (not the config trusted: ignored until trusted again); ``no config``; ``gone``."""
    if not os.path.isdir(record.project):
        return "gone"
    config = read_project_config(Path(record.project))
    if config is None:
        return "no config"
    if config.digest != record.digest:
        return "changed"
    return "trusted"


def _quoted(path: Path) -> str:
    import shlex

    return visible(shlex.quote(str(path)))
