"""The data directories deep-tui knows of: every one a session was opened in, and every trusted project's.

Commands must see none of them (docs/security.md, "Shell commands and the sandbox"): a command run in one
project must not read another project's sessions, saved outputs or MEMORY.md. The list lives in the user's
config directory (``data-dirs.json``, next to the trust store, never inside a project), newest first, at most
:data:`MAX_KNOWN_DIRS`; it is read without following a link and replaced atomically under a lock, like the
trust store. Reading never fails: a damaged list counts as empty (logged), and the trusted projects' data
directories are added from the trust store.
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
    path = path or known_dirs_file()
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return []
    except OSError as error:
        logger.warning("cannot read the list of data directories %s: %s", path, error)
        return []
    if len(raw) > MAX_FILE_BYTES:
        logger.warning("the list of data directories %s is too large; ignored", path)
        return []
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        logger.warning("the list of data directories %s is not valid JSON (%s); ignored", path, error)
        return []
    entries = document.get("dirs") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        logger.warning("the list of data directories %s is not in deep-tui's format; ignored", path)
        return []
    return [Path(entry) for entry in entries if isinstance(entry, str) and os.path.isabs(entry)]


def record_data_dir(root: Path, path: Path | None = None) -> None:
    """Put ``root`` (made absolute, links resolved) first in the list. Raises ``OSError`` when it cannot be
    written (the caller logs it: a session opens all the same)."""
    path = path or known_dirs_file()
    entry = os.path.realpath(root)
    with _locked(path):
        current = [str(known) for known in recorded_data_dirs(path)]
        if current[:1] == [entry]:
            return
        kept = [entry, *(known for known in current if known != entry)][:MAX_KNOWN_DIRS]
        write_atomic(path, json.dumps({"version": FORMAT_VERSION, "dirs": kept}, indent=1) + "\n")


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
