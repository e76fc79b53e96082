"""File names for saved tool outputs: derived from the call id, never escaping the directory."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
STEM_LIMIT = 64


def output_file_name(tool_call_id: str, suffix: str) -> str:
    """``<readable part>-<hash of the full id><suffix>``: two different ids never share a name."""
    readable = _UNSAFE.sub("_", tool_call_id).strip("_")[:STEM_LIMIT] or "output"
    digest = hashlib.sha256(tool_call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    clean_suffix = "." + _UNSAFE.sub("", suffix.lstrip("."))[:8] if suffix.strip(".") else ""
    return f"{readable}-{digest}{clean_suffix}"


def write_output(directory: Path, tool_call_id: str, data: bytes | str, suffix: str, *,
                 atomic: bool = True) -> Path:
    """Write ``data`` whole and return its path; refuses anything outside ``directory``.

    ``atomic`` writes a temp file and renames it (evictions); tier-2 copies of
    outputs already in messages.json use a plain write, which is much faster.
    """
    directory.mkdir(parents=True, exist_ok=True)
    target = (directory / output_file_name(tool_call_id, suffix)).resolve()
    if target.parent != directory.resolve():
        raise ValueError(f"refusing to write outside {directory}")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if not atomic:
        target.write_bytes(payload)
        return target
    descriptor, temporary = tempfile.mkstemp(prefix=".saving-", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
