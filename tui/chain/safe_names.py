"""File names for saved tool outputs: derived from the call id, never escaping the directory."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
from pathlib import Path

from tui.redaction import redact_bytes

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
    holds half an output.
    """
    directory.mkdir(parents=True, exist_ok=True)
    base = directory.resolve()
    name = output_file_name(tool_call_id, suffix)
    payload = redact_bytes(data.encode("utf-8") if isinstance(data, str) else data)  # no key is saved
    descriptor, temporary = tempfile.mkstemp(prefix=".saving-", dir=base)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
        for number in range(10_000):
            target = base / _numbered(name, number)
            if target.parent != base:
                raise ValueError(f"refusing to write outside {directory}")
            try:
                os.link(temporary, target)
            except FileExistsError:
                continue
            return target
        raise FileExistsError(f"no free file name for {name!r} in {directory}")
    finally:
        Path(temporary).unlink(missing_ok=True)


def write_new_file(path: Path, text: str) -> None:
    """Create ``path`` with ``text``; fails with ``FileExistsError`` rather than replace anything."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
