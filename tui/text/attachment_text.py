"""How a file attached to a prompt with ``@path`` is recorded, and the short label shown for it.

An attachment is a text item of the user prompt that starts with ``<attached-file path="…" bytes="…">``.
The chat shows a prompt as typed and its attachments on a line of their own, ``attached: src/app.py (6 bytes)``
(:func:`attached_line`), live and when a session is reopened; where a prompt is one line of text (search, the
chain's transcripts) an attachment reads ``[@path, size]``; never as the file's content.
No pydantic-ai here: the resumed tail is drawn before it loads.
"""

from __future__ import annotations

import json
import re

ATTACHMENT_OPEN = "<attached-file "
ATTACHMENT_CLOSE = "</attached-file>"
_PATH = re.compile(r'path=("(?:[^"\\]|\\.)*")')
_SIZE = re.compile(r'bytes="(\d+)"')
_KIND = re.compile(r'kind="([a-z]+)"')
ATTACHED_PREFIX = "attached: "
NOT_ATTACHED_PREFIX = "not attached: "
_KIND_DETAIL = {"preview": ", preview — the whole file is saved", "binary": ", binary: described",
                "directory": ", a directory: the model can list it"}


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


def describe_attachment(path: str, size_bytes: int | None, kind: str, note: str = "") -> str:
    """``src/app.py (12.3 KB)``, ``big.log (5.0 MB, preview — the whole file is saved)``, and for a file refused
    (``kind`` ``refused``) ``x.py (no such file)``, listed after "not attached:" (see :func:`attached_line`): one
    attachment as the chat shows it (``path`` and ``note`` as given: the chat makes them terminal-safe)."""
    if kind == "refused":
        return f"{path} ({note})" if note else path
    size = human_bytes(size_bytes) if size_bytes is not None else "size unknown"
    return f"{path} ({size}{_KIND_DETAIL.get(kind, '')})"


def attached_line(descriptions: list[str], not_attached: list[str] | tuple[str, ...] = ()) -> str:
    """``attached: a.py (6 bytes); b.md (1.2 KB)`` — the line under a prompt naming its attached files — then
    ``not attached: x.py (no such file)`` for the ``@`` mentions that were refused (those in ``not_attached``)."""
    attached = [description for description in descriptions if description not in not_attached]
    parts = [ATTACHED_PREFIX + "; ".join(attached)] if attached else []
    if not_attached:
        parts.append(NOT_ATTACHED_PREFIX + "; ".join(not_attached))
    return " · ".join(parts)


def _header(item: str) -> tuple[str, int | None, str] | None:
    """``(path, size, kind)`` of an attachment item; None for any other text (a recorded one may be edited)."""
    if not item.startswith(ATTACHMENT_OPEN):
        return None
    header = item.split("\n", 1)[0]
    path, size, kind = _PATH.search(header), _SIZE.search(header), _KIND.search(header)
    try:
        name = json.loads(path.group(1)) if path else "?"
    except ValueError:
        name = "?"
    return str(name), int(size.group(1)) if size else None, kind.group(1) if kind else "text"


def attachment_label(item: str) -> str | None:
    """``[@src/app.py, 1.2 KB]`` for an attachment item; None for any other text."""
    header = _header(item)
    if header is None:
        return None
    name, size, _ = header
    return f"[@{name}, {human_bytes(size) if size is not None else '?'}]"


def is_attachment(item: object) -> bool:
    """Whether a prompt item (a pydantic-ai one, or its recorded JSON) is an attached file."""
    return isinstance(item, str) and item.startswith(ATTACHMENT_OPEN)


def attachment_descriptions(items: object) -> list[str]:
    """:func:`describe_attachment` for each attached file among a prompt's items (a string prompt has none)."""
    if not isinstance(items, (list, tuple)):
        return []
    headers = (_header(item) for item in items if isinstance(item, str))
    return [describe_attachment(*header) for header in headers if header is not None]
