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
from collections.abc import Sequence
from typing import NamedTuple, TypeVar

T = TypeVar("T")

ATTACHMENT_OPEN = "<attached-file "
ATTACHMENT_CLOSE = "</attached-file>"
_PATH = re.compile(r'path=("(?:[^"\\]|\\.)*")')
_SIZE = re.compile(r'bytes="(\d+)"')
_KIND = re.compile(r'kind="([a-z]+)"')
_PIXELS = re.compile(r'pixels="(\d{1,9})x(\d{1,9})"')
_MEDIA_TYPE = re.compile(r"[a-z]+/[a-z0-9.+-]{1,40}")
_TYPE = re.compile(r'type="([a-z]+/[a-z0-9.+-]{1,40})"')
_SAVED = re.compile(r'saved=("(?:[^"\\]|\\.)*")')
IMAGE_LABEL_OPEN = "[image: "
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


def attachment_item(path: str, size_bytes: int, kind: str, body: str, *, pixels: tuple[int, int] | None = None,
                    media_type: str | None = None, saved: str | None = None) -> str:
    """The prompt item carrying one attached file (an image's: its ``pixels``, its ``media_type`` and where its
    copy is ``saved``)."""
    header = f'{ATTACHMENT_OPEN}path={json.dumps(path, ensure_ascii=False)} bytes="{size_bytes}" kind="{kind}"'
    if pixels is not None:
        header += f' pixels="{pixels[0]}x{pixels[1]}"'
    if media_type is not None and _MEDIA_TYPE.fullmatch(media_type):
        header += f' type="{media_type}"'
    if saved is not None:
        header += f" saved={json.dumps(saved, ensure_ascii=False)}"
    return f"{header}>\n{body}\n{ATTACHMENT_CLOSE}"


def image_label(path: str, size_bytes: int | None, pixels: tuple[int, int] | None) -> str:
    """``[image: shot.png · 1280×720 · 140 KB]`` — an attached image as the chat shows it."""
    size = human_bytes(size_bytes, kb_decimals=0) if size_bytes is not None else "size unknown"
    shown = f"{pixels[0]}×{pixels[1]}" if pixels is not None else "size in pixels unknown"
    return f"{IMAGE_LABEL_OPEN}{path} · {shown} · {size}]"


def describe_attachment(path: str, size_bytes: int | None, kind: str, note: str = "",
                        pixels: tuple[int, int] | None = None) -> str:
    """``src/app.py (12.3 KB)``, ``big.log (5.0 MB, preview — the whole file is saved)``, an image as
    :func:`image_label` says, and for a file refused (``kind`` ``refused``) ``x.py (no such file)``, listed after
    "not attached:" (see :func:`attached_line`): one attachment as the chat shows it (``path`` and ``note`` as
    given: the chat makes them terminal-safe)."""
    if kind == "refused":
        return f"{path} ({note})" if note else path
    if kind == "image":
        return image_label(path, size_bytes, pixels)
    size = human_bytes(size_bytes) if size_bytes is not None else "size unknown"
    return f"{path} ({size}{_KIND_DETAIL.get(kind, '')})"


def attached_line(descriptions: list[str], not_attached: list[str] | tuple[str, ...] = ()) -> str:
    """``attached: a.py (6 bytes); b.md (1.2 KB)`` — the line under a prompt naming its attached files — then
    ``not attached: x.py (no such file)`` for the ``@`` mentions that were refused (those in ``not_attached``);
    each attached image first, as its own ``[image: …]``."""
    attached = [description for description in descriptions if description not in not_attached]
    images = [description for description in attached if description.startswith(IMAGE_LABEL_OPEN)]
    files = [description for description in attached if not description.startswith(IMAGE_LABEL_OPEN)]
    parts = [" ".join(images)] if images else []
    if files:
        parts.append(ATTACHED_PREFIX + "; ".join(files))
    if not_attached:
        parts.append(NOT_ATTACHED_PREFIX + "; ".join(not_attached))
    return " · ".join(parts)


class AttachmentHeader(NamedTuple):
    """What an attachment item's first line says."""

    path: str
    size_bytes: int | None
    kind: str
    pixels: tuple[int, int] | None = None
    saved: str | None = None
    """Where an image's copy is saved (under the data dir's ``large_tool_results/``)."""
    media_type: str | None = None

    def describe(self) -> str:
        """:func:`describe_attachment` of this attachment."""
        return describe_attachment(self.path, self.size_bytes, self.kind, pixels=self.pixels)


def attachment_header(item: object) -> AttachmentHeader | None:
    """The header of an attachment item; None for any other item (a recorded one may be edited: a field that
    does not parse is left unknown)."""
    if not isinstance(item, str) or not item.startswith(ATTACHMENT_OPEN):
        return None
    header = item.split("\n", 1)[0]
    path, size, kind = _PATH.search(header), _SIZE.search(header), _KIND.search(header)
    pixels, saved, media_type = _PIXELS.search(header), _SAVED.search(header), _TYPE.search(header)
    return AttachmentHeader(str(_json_string(path.group(1)) if path else "?"), int(size.group(1)) if size else None,
                            kind.group(1) if kind else "text",
                            (int(pixels.group(1)), int(pixels.group(2))) if pixels else None,
                            _json_string(saved.group(1)) if saved else None,
                            media_type.group(1) if media_type else None)


def _json_string(quoted: str) -> str | None:
    try:
        value = json.loads(quoted)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def attachment_label(item: str) -> str | None:
    """``[@src/app.py, 1.2 KB]`` (an image: ``[image: shot.png · 1280×720 · 140 KB]``) for an attachment item;
    None for any other text."""
    header = attachment_header(item)
    if header is None:
        return None
    if header.kind == "image":
        return header.describe()
    size = header.size_bytes
    return f"[@{header.path}, {human_bytes(size) if size is not None else '?'}]"


def is_attachment(item: object) -> bool:
    """Whether a prompt item (a pydantic-ai one, or its recorded JSON) is an attached file."""
    return isinstance(item, str) and item.startswith(ATTACHMENT_OPEN)


IMAGE_PLACEHOLDER_OPEN = "[image left out to save context: "


def image_placeholder(header: AttachmentHeader | None, media_type: str, size_bytes: int) -> str:
    """The one line that stands in, in what is sent, for an image of an older turn: what it was and where its
    copy is saved (``header``: its attachment item, when it has one)."""
    if header is None:
        return f"{IMAGE_PLACEHOLDER_OPEN}{media_type}, {human_bytes(size_bytes, kb_decimals=0)}]"
    where = f"; saved at {header.saved}" if header.saved else ""
    return f"{IMAGE_PLACEHOLDER_OPEN}{header.describe().removeprefix(IMAGE_LABEL_OPEN).removesuffix(']')}{where}]"


def is_image_stand_in(item: object) -> bool:
    """Whether a prompt item is an image's content or the placeholder that replaced it (not typed text)."""
    if isinstance(item, str):
        return item.startswith(IMAGE_PLACEHOLDER_OPEN)
    kind = item.get("kind") if isinstance(item, dict) else getattr(item, "kind", None)
    return kind == "binary"


def without_attachments(items: Sequence[T]) -> list[T]:
    """A prompt's items without its attached files: their items, and each image's content (or its placeholder)
    right after the image's item (the rest is what was typed)."""
    kept: list[T] = []
    after_image = False
    for item in items:
        header = attachment_header(item)
        if header is None and not (after_image and is_image_stand_in(item)):
            kept.append(item)
        after_image = header is not None and header.kind == "image"
    return kept


def without_image_content(items: Sequence[T]) -> list[T]:
    """A prompt's items without each image's content (or its placeholder) right after the image's item, which
    names it already."""
    kept: list[T] = []
    after_image = False
    for item in items:
        if not (after_image and is_image_stand_in(item)):
            kept.append(item)
        header = attachment_header(item)
        after_image = header is not None and header.kind == "image"
    return kept


def attachment_descriptions(items: object) -> list[str]:
    """:func:`describe_attachment` for each attached file among a prompt's items (a string prompt has none)."""
    if not isinstance(items, (list, tuple)):
        return []
    headers = (attachment_header(item) for item in items)
    return [header.describe() for header in headers if header is not None]
