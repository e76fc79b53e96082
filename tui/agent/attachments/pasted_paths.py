"""Image files whose path was pasted into a prompt, as a terminal pastes a file dragged onto it.

A terminal pastes a dragged file as its path: bare, quoted (``'/home/me/shot 1.png'``), with its spaces
escaped (``/home/me/shot\\ 1.png``) or as a ``file://`` URL. Only a path to an existing file whose name ends
like an image (:func:`~tui.agent.attachments.image_files.is_image_name`) is taken: the whole prompt being such
a path, or, among other text, an absolute, ``~`` or ``file://`` path, or a quoted one. The caller applies the
path policy as for ``@path`` (a path outside the workdir is refused in one line).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tui.agent.attachments.image_files import is_image_name

MAX_PASTED = 20
MAX_PATH_CHARS = 4_096
_QUOTED = re.compile(r"""(?<![\w@])(['"])([^'"\n]{1,4096})\1""")
_BARE = re.compile(r"(?<![\w@\\])((?:file://|~/|/)(?:\\.|[^\s\\'\"])+)")
_ESCAPED = re.compile(r"\\(.)")


def pasted_image_paths(prompt: str, workdir: Path) -> list[str]:
    """The image files the prompt names by a pasted path (each once, in order, at most :data:`MAX_PASTED`)."""
    found: list[str] = []
    whole = _as_path(_unquoted(prompt.strip()))
    candidates = [whole] if whole and "\n" not in whole else []
    candidates += [_as_path(match.group(2)) for match in _QUOTED.finditer(prompt)]
    candidates += [_as_path(match.group(1)) for match in _BARE.finditer(prompt)]
    for candidate in candidates:
        if (candidate and len(candidate) <= MAX_PATH_CHARS and candidate not in found and is_image_name(candidate)
                and _exists(workdir, candidate)):
            found.append(candidate)
        if len(found) >= MAX_PASTED:
            break
    return found


def _unquoted(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _as_path(text: str) -> str:
    """The path a pasted piece names: a ``file://`` URL decoded, ``\\ `` escapes undone."""
    if text.startswith("file://"):
        parts = urlsplit(text)
        return unquote(parts.path) if parts.netloc in ("", "localhost") else ""
    return _ESCAPED.sub(r"\1", text)


def _exists(workdir: Path, path: str) -> bool:
    candidate = Path(path).expanduser()
    try:
        return os.path.lexists(candidate if candidate.is_absolute() else workdir / candidate)
    except (OSError, ValueError):  # a NUL in the text, a name too long
        return False
