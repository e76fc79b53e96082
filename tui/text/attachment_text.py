"""How a file attached to a prompt with ``@path`` is recorded, and the short label shown for it.

An attachment is a text item of the user prompt that starts with ``<attached-file path="…" bytes="…">``;
wherever a prompt is shown (chat, resumed tail, titles) it reads as ``[@path, size]``, not as the file's content.
No pydantic-ai here: the resumed tail is drawn before it loads.
"""

from __future__ import annotations

import json
import re

ATTACHMENT_OPEN = "<attached-file "
ATTACHMENT_CLOSE = "</attached-file>"
_PATH = re.compile(r'path=("(?:[^"\\]|\\.)*")')
_SIZE = re.compile(r'bytes="(\d+)"')


def human_bytes(count: int, *, kb_decimals: int = 1) -> str:
    """``812 bytes``, ``12.3 KB`` (``12 KB`` with ``kb_decimals=0``, as a media note says it), ``4.0 MB``."""
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.{kb_decimals}f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def attachment_item(path: str, size_bytes: int, kind: str, body: str) -> str:
    """The prompt item carrying one attached file."""
    header = f'{ATTACHMENT_OPEN}path={json.dumps(path, ensure_ascii=False)} bytes="{size_bytes}" kind="{kind}">'
    return f"{header}\n{body}\n{ATTACHMENT_CLOSE}"


def attachment_label(item: str) -> str | None:
    """``[@src/app.py, 1.2 KB]`` for an attachment item; None for any other text."""
    if not item.startswith(ATTACHMENT_OPEN):
        return None
    header = item.split("\n", 1)[0]
    path, size = _PATH.search(header), _SIZE.search(header)
    try:
        name = json.loads(path.group(1)) if path else "?"
    except ValueError:
        name = "?"
    return f"[@{name}, {human_bytes(int(size.group(1))) if size else '?'}]"
