"""The places of deep-tui's that commands must not see: every data directory a session was opened in, every
trusted project's, and every config file the user named with ``--config``.

Commands must see none of them (docs/security.md, "Shell commands and the sandbox"): a command run in one
project must not read another project's sessions, saved outputs or MEMORY.md, nor change a config file that
applies without trust (its MCP servers would start unsandboxed next time). The list lives in the user's
config directory (``data-dirs.json``, next to the trust store, never inside a project), newest first, at most
:data:`MAX_KNOWN_DIRS` of each kind; it is read without following a link and replaced atomically under a
lock, like the trust store. Reading never fails: a damaged list counts as empty (logged), and the trusted
projects' data directories are added from the trust store.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from tui.base.atomic import write_atomic
from tui.base.nofollow import read_bytes
from tui.base.paths import DEFAULT_DATA_DIR_NAME, trust_store_file, user_config_dir
from tui.trust.store import TrustStore, TrustStoreError

logger = logging.getLogger(__name__)

KNOWN_DIRS_NAME = "data-dirs.json"
MAX_KNOWN_DIRS = 200
MAX_FILE_BYTES = 1_000_000
FORMAT_VERSION = 1


def known_dirs_file() -> Path:
    """Where the list is kept: ``user_config_dir() / "data-dirs.json"``."""
    return user_config_dir() / KNOWN_DIRS_NAME


def recorded_data_dirs(path: Path | None = None) -> list[Path]:
    """The data directories sessions were opened in, newest first (an unreadable list is empty, logged)."""
    return _recorded(path or known_dirs_file(), "dirs")


def recorded_config_files(path: Path | None = None) -> list[Path]:
    """The config files named with ``--config``, newest first."""
    return _recorded(path or known_dirs_file(), "config_files")


def _recorded(path: Path, kind: str) -> list[Path]:
    document = _read(path)
    entries = document.get(kind, [])
    if not isinstance(entries, list):
        logger.warning("the list of data directories %s is not in deep-tui's format; ignored", path)
        return []
    return [Path(entry) for entry in entries if isinstance(entry, str) and os.path.isabs(entry)]


def _read(path: Path) -> dict[str, object]:
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return {}
    except OSError as error:
        logger.warning("cannot read the list of data directories %s: %s", path, error)
        return {}
    if len(raw) > MAX_FILE_BYTES:
        logger.warning("the list of data directories %s is too large; ignored", path)
        return {}
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        logger.warning("the list of data directories %s is not valid JSON (%s); ignored", path, error)
        return {}
    if not isinstance(document, dict):
        logger.warning("the list of data directories %s is not in deep-tui's format; ignored", path)
        return {}
    return document


def record_data_dir(root: Path, path: Path | None = None) -> None:
    """Put ``root`` (made absolute, links resolved) first in the list. Raises ``OSError`` when it cannot be
    written (the caller logs it: a session opens all the same)."""
    _record(path or known_dirs_file(), "dirs", root)


def record_config_file(config: Path, path: Path | None = None) -> None:
    """Put the ``--config`` file ``config`` first among the config files (``OSError`` as for
    :func:`record_data_dir`)."""
    _record(path or known_dirs_file(), "config_files", config)


def _record(path: Path, kind: str, place: Path) -> None:
    entry = os.path.realpath(place)
    with _locked(path):
        document = _read(path)
        current = [str(known) for known in _recorded(path, kind)]
        if current[:1] == [entry]:
            return
        document[kind] = [entry, *(known for known in current if known != entry)][:MAX_KNOWN_DIRS]
        document["version"] = FORMAT_VERSION
        write_atomic(path, json.dumps(document, indent=1) + "\n")


def trusted_data_dirs(store_path: Path | None = None) -> list[Path]:
    """The default data directory (``.deep-tui``) of every project in the trust store (none when it cannot
    be read)."""
    try:
        records = TrustStore(store_path or trust_store_file()).records()
    except TrustStoreError as error:
        logger.warning("%s", error)
        return []
    return [Path(project) / DEFAULT_DATA_DIR_NAME for project in records]


def known_data_dirs() -> list[Path]:
    """Every data directory deep-tui knows of, recorded ones first, each once."""
    seen: dict[str, Path] = {}
    for directory in [*recorded_data_dirs(), *trusted_data_dirs()]:
        seen.setdefault(str(directory), directory)
    return list(seen.values())


def known_places() -> list[Path]:
    """What commands never see: :func:`known_data_dirs` and the ``--config`` files used."""
    return [*known_data_dirs(), *recorded_config_files()]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(path.with_name(f"{path.name}.lock"), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
