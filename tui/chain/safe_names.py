"""File names for saved tool outputs: derived from the call id, never escaping the directory."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

from tui.base.nofollow import make_dirs, open_dir, open_file
from tui.base.redaction import redact_bytes

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
STEM_LIMIT = 64


def output_file_name(tool_call_id: str, suffix: str) -> str:
    """``<readable part>-<hash of the full id><suffix>``: two different ids never share a name."""
    readable = _UNSAFE.sub("_", tool_call_id).strip("_")[:STEM_LIMIT] or "output"
    digest = hashlib.sha256(tool_call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    clean_suffix = "." + _UNSAFE.sub("", suffix.lstrip("."))[:8] if suffix.strip(".") else ""
    return f"{readable}-{digest}{clean_suffix}"


def unique_output_name(tool_call_id: str, suffix: str) -> str:
    """Like :func:`output_file_name` with a random tag: for files named before they are written."""
    stem, dot, extension = output_file_name(tool_call_id, suffix).partition(".")
    return f"{stem}-{secrets.token_hex(4)}{dot}{extension}"


def _numbered(name: str, number: int) -> str:
    if number == 0:
        return name
    stem, dot, extension = name.partition(".")
    return f"{stem}-{number}{dot}{extension}"


def write_output(directory: Path, tool_call_id: str, data: bytes | str, suffix: str) -> Path:
    """Write ``data`` whole under a new name and return its path; never overwrites, never leaves ``directory``.

    Call ids are not unique across sessions (or even within one, for some servers), and the
    directory is shared, so a taken name gets ``-1``, ``-2``… rather than replacing what is there.
    The bytes are written to a temporary file first and then linked in, so the final name never
    holds half an output. ``directory`` (or a directory above it in the data directory) being a planted
    link is refused (``LinkRefusedError``): everything is named relative to a link-free descriptor.
    """
    make_dirs(directory)
    name = output_file_name(tool_call_id, suffix)
    payload = redact_bytes(data.encode("utf-8") if isinstance(data, str) else data)  # no key is saved
    base = open_dir(directory)
    temporary = f".saving-{secrets.token_hex(8)}"
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=base)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
        for number in range(10_000):
            target = _numbered(name, number)
            if "/" in target or target in (".", ".."):
                raise ValueError(f"refusing to write outside {directory}")
            try:
                os.link(temporary, target, src_dir_fd=base, dst_dir_fd=base, follow_symlinks=False)
            except FileExistsError:
                continue
            return directory / target
        raise FileExistsError(f"no free file name for {name!r} in {directory}")
    finally:
        try:
            os.unlink(temporary, dir_fd=base)
        except FileNotFoundError:
            pass
        finally:
            os.close(base)


def write_new_file(path: Path, text: str) -> None:
    """Create ``path`` with ``text``; fails with ``FileExistsError`` rather than replace anything (a planted
    link there, or on the way, is never followed)."""
    descriptor = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666, make_parents=True)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
