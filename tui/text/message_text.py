"""Plain text of a user prompt, whatever its content holds (no Textual; used by the store, chain and app).

pydantic-ai lets a prompt be a string or a list of strings, typed text (``TextContent``), media
(image/audio/video/document URLs, binary content, uploaded files) and cache-point markers. Text is
kept; media become a short bracketed note; markers are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import BinaryContent, CachePoint, FileUrl, TextContent, UploadedFile, UserContent

from tui.text.attachment_text import attachment_label, human_bytes, without_attachments, without_image_content


def content_item_text(item: UserContent) -> str:
    """One prompt item as text: its text, a note such as ``[image: https://…/cat.png]``, or ``""``."""
    if isinstance(item, str):
        return attachment_label(item) or item
    if isinstance(item, TextContent):
        return item.content
    if isinstance(item, CachePoint):
        return ""
    if isinstance(item, FileUrl):
        return f"[{item.kind.removesuffix('-url')}: {item.url}]"
    if isinstance(item, BinaryContent):
        return f"[{item.media_type}, {_size(len(item.data))}]"
    if isinstance(item, UploadedFile):
        return f"[uploaded file: {item.file_id}]"
    return f"[{type(item).__name__}]"


def prompt_text(content: str | Sequence[UserContent]) -> str:
    """A ``UserPromptPart.content`` as text: items joined by a space, empty ones left out (an attached image once:
    its label, ``[image: shot.png · 1280×720 · 140 KB]``, not its content again)."""
    if isinstance(content, str):
        return content
    return " ".join(text for text in (content_item_text(item) for item in without_image_content(content)) if text)


def typed_text(content: str | Sequence[UserContent]) -> str:
    """What the user typed in a prompt: its text without the files attached with ``@path`` (titles, the offline
    model's commands)."""
    if isinstance(content, str):
        return content
    return prompt_text(without_attachments(content))


def _size(count: int) -> str:
    return human_bytes(count, kb_decimals=0)
