"""Images out of what is sent: each replaced by one line naming what it was and its saved copy.

Tier 2 does this to the images of turns older than the protection window (they would pile up: each costs
hundreds to thousands of tokens, every request); the way out does it to every image when the model in use reads
none (a session that switched models with ``/model``). messages.json keeps each image whole, and the attachment
item before it names the copy saved under ``large_tool_results/``: the placeholder points there.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    UserContent,
    UserPromptPart,
)

from tui.text.attachment_text import attachment_header, image_placeholder


def is_image(item: object) -> bool:
    """Whether a prompt item is image content (bytes sent as an image)."""
    return isinstance(item, BinaryContent) and item.is_image


def has_images(part: object) -> bool:
    """Whether ``part`` is a user prompt carrying image content."""
    return (isinstance(part, UserPromptPart) and not isinstance(part.content, str)
            and any(is_image(item) for item in part.content))


def placeholder_prompt(part: UserPromptPart) -> tuple[UserPromptPart, int]:
    """``part`` with each image replaced by its one-line placeholder, and how many were replaced."""
    if isinstance(part.content, str):
        return part, 0
    content: list[UserContent] = []
    replaced = 0
    previous: object = None
    for item in part.content:
        if isinstance(item, BinaryContent) and item.is_image:
            header = attachment_header(previous)
            content.append(image_placeholder(header if header is not None and header.kind == "image" else None,
                                             item.media_type, len(item.data)))
            replaced += 1
        else:
            content.append(item)
        previous = item
    return (replace(part, content=content), replaced) if replaced else (part, 0)


def request_without_images(message: ModelRequest) -> ModelRequest:
    """``message`` with every image replaced by its placeholder (``message`` itself when it has none, else a
    copy)."""
    if not any(has_images(part) for part in message.parts):
        return message
    parts: list[ModelRequestPart] = [placeholder_prompt(part)[0] if isinstance(part, UserPromptPart) else part
                                     for part in message.parts]
    return replace(message, parts=parts)


def without_images(messages: list[ModelMessage]) -> list[ModelMessage]:
    """``messages`` with every image replaced by its placeholder (the same list when there is none; only the
    requests changed are copies)."""
    fixed: list[ModelMessage] | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, ModelRequest):
            continue
        sent = request_without_images(message)
        if sent is not message:
            if fixed is None:
                fixed = list(messages)
            fixed[index] = sent
    return messages if fixed is None else fixed
