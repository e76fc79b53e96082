"""The trust store: which projects the user trusts, and the digest of the project config each trust covers.

One JSON file in the user's config directory (never inside a project), keyed by each project's real path::

    {"version": 1, "projects": {"/home/me/src/app": {"digest": "sha256:…", "trusted_at": "2026-11-26T09:40:00Z",
                                                      "settings": {"base_url": "\"http://…\"", …}}}}

``settings`` keeps what the trusted config set (as shown text), so a changed config can be shown against
it. The file is read without following a link, replaced atomically, and changed under a lock so two
deep-tui processes trusting at once both land. An unreadable or corrupt store is never overwritten: it is
an error naming the file (and, when reading for a launch, every project counts as untrusted).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.base.atomic import write_atomic

STORE_VERSION = 1
MAX_STORE_BYTES = 10_000_000


class TrustStoreError(Exception):
    """The trust store cannot be read or written (one line, naming the file)."""


@dataclass(frozen=True)
class TrustRecord:
    """The user trusted the project at ``project`` (a real path) while its config had ``digest``."""

    project: str
    digest: str
    trusted_at: str
    """UTC, ISO 8601 (``2026-11-26T09:40:00Z``)."""
    settings: dict[str, str] = field(default_factory=dict)
    """What the trusted config set, key → value as shown (see :func:`tui.trust.project.shown_value`)."""

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "trusted_at": self.trusted_at, "settings": self.settings}


def now_utc() -> str:
    """The current time as recorded in the store."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TrustStore:
    """The projects the user trusts, in ``path`` (normally :func:`tui.base.paths.trust_store_file`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def records(self) -> dict[str, TrustRecord]:
        """Every trusted project by real path; a missing store is empty. Raises :class:`TrustStoreError`."""
        raw = self._read()
        if raw is None:
            return {}
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise TrustStoreError(f"the trust store {self.path} is not valid JSON ({error}); "
                                  "fix or remove it") from None
        return self._parse(document)

    def lookup(self, project: Path) -> TrustRecord | None:
        """The record for ``project`` (resolved to its real path), or ``None``."""
        return self.records().get(project_key(project))

    def trust(self, record: TrustRecord) -> None:
        """Record (or replace) the trust of ``record.project``."""
        with self._locked():
            records = self.records()
            records[record.project] = record
            self._write(records)

    def revoke(self, project: Path) -> TrustRecord | None:
        """Forget the trust of ``project``; returns the record that was removed, or ``None`` (none was kept)."""
        key = project_key(project)
        with self._locked():
            records = self.records()
            removed = records.pop(key, None)
            if removed is not None:
                self._write(records)
        return removed

    # -- the file ----------------------------------------------------------------------------

    def _read(self) -> bytes | None:
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise TrustStoreError(f"the trust store {self.path} is a symbolic link; deep-tui does not "
                                      "follow it (replace it with a regular file)") from None
            raise TrustStoreError(f"cannot read the trust store {self.path}: {error.strerror}") from None
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise TrustStoreError(f"the trust store {self.path} is not a regular file")
            raw = handle.read(MAX_STORE_BYTES + 1)
        if len(raw) > MAX_STORE_BYTES:
            raise TrustStoreError(f"the trust store {self.path} is larger than {MAX_STORE_BYTES:,} bytes")
        return raw

    def _parse(self, document: object) -> dict[str, TrustRecord]:
        problem = f"the trust store {self.path} is not in deep-tui's format; fix or remove it"
        if not isinstance(document, dict) or document.get("version") != STORE_VERSION:
            raise TrustStoreError(problem)
        projects = document.get("projects")
        if not isinstance(projects, dict):
            raise TrustStoreError(problem)
        records: dict[str, TrustRecord] = {}
        for project, entry in projects.items():
            if not (isinstance(entry, dict) and isinstance(entry.get("digest"), str)
                    and isinstance(entry.get("trusted_at"), str)):
                raise TrustStoreError(problem)
            settings = entry.get("settings", {})
            if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
                raise TrustStoreError(problem)
            records[project] = TrustRecord(project, entry["digest"], entry["trusted_at"], dict(settings))
        return records

    def _write(self, records: dict[str, TrustRecord]) -> None:
        document = {"version": STORE_VERSION,
                    "projects": {key: records[key].to_json() for key in sorted(records)}}
        try:
            write_atomic(self.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", durable=True)
        except OSError as error:
            raise TrustStoreError(f"cannot write the trust store {self.path}: {error.strerror}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock_path = self.path.with_name(f"{self.path.name}.lock")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise TrustStoreError(f"cannot lock the trust store ({lock_path}): {error.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock


def project_key(project: Path) -> str:
    """How a project is named in the store: its real path (links and ``..`` resolved)."""
    return os.path.realpath(project)
