"""An image attached to a prompt (``@shot.png``, or its path pasted): image content for a model that reads
images, a line saying there was one for a model that does not.

The path policy of every ``@path`` applies (the workdir only, never the data dir, no link that leads out; the
file itself opened without following a link). The size is read from the header (:mod:`tui.base.image_header`:
no imaging library, no decoder); an image over :data:`MAX_IMAGE_BYTES` or :data:`MAX_IMAGE_SIDE` is refused in
one line and the prompt goes without it. Each attached image is copied whole under ``large_tool_results/``
(atomic, no link followed): the placeholder that later stands in for it in what is sent names that copy, and the
prompt recorded in messages.json keeps the image's bytes as they were.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from pydantic_ai import ToolFailed
from pydantic_ai.messages import BinaryContent, UserContent

from tui.agent.tools.path_policy import PathPolicy
from tui.base.image_header import IMAGE_SUFFIXES, ImageHeader, read_image_header
from tui.base.nofollow import read_at_most
from tui.chain.safe_names import write_output
from tui.text.attachment_text import attachment_item, human_bytes

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The largest image attached (Anthropic's limit per image, the smallest of the big providers')."""
MAX_IMAGE_SIDE = 8_000
"""The longest side, in pixels, of an image attached (Anthropic refuses larger ones)."""


def is_image_name(path: str) -> bool:
    """Whether ``path`` ends like an image deep-tui attaches as one (``.png``, ``.jpg``, ``.jpeg``, ``.gif``,
    ``.webp``, in any case)."""
    return os.path.splitext(path)[1].lower() in IMAGE_SUFFIXES


class ImageRefused(Exception):
    """Why an image is not attached, in a few words for the chat's "not attached:" line."""


class ImageAttacher:
    """Reads, checks and copies one image for a prompt."""

    def __init__(self, policy: PathPolicy, large_results_dir: Path, takes_images: Callable[[], bool]) -> None:
        """``takes_images``: whether the model in use reads images (asked for each prompt: ``/model`` changes it)."""
        self.policy = policy
        self.large_results_dir = large_results_dir
        self.takes_images = takes_images

    def attach(self, typed: str) -> tuple[str, int, ImageHeader, list[UserContent]]:
        """The image at ``typed``: its path as shown, its size in bytes, its header, and the prompt items (its
        attachment item, then its image content when the model reads images); :class:`ImageRefused` says why not."""
        try:
            resolved = self.policy.resolve(typed)
        except ToolFailed as refused:
            raise ImageRefused(str(refused).split(";")[0]) from None
        shown = self.policy.display(resolved)
        data = _read_image_file(resolved)
        header = read_image_header(data)
        if header is None:
            raise ImageRefused("not a readable PNG, JPEG, GIF or WebP image")
        if max(header.width, header.height) > MAX_IMAGE_SIDE:
            raise ImageRefused(f"image of {header.width}×{header.height} pixels, over the cap of {MAX_IMAGE_SIDE:,} "
                               "pixels a side")
        saved = self._save(data, header)
        facts = f"{header.format_name}, {header.width}×{header.height} pixels, {human_bytes(len(data), kb_decimals=0)}"
        if self.takes_images():
            item = self._item(shown, len(data), header, saved, f"(an image: {facts}; it follows)")
            return shown, len(data), header, [item, BinaryContent(data, media_type=header.media_type)]
        body = f"(the user attached an image here — {facts} — but the model in use cannot see images: not included)"
        return shown, len(data), header, [self._item(shown, len(data), header, saved, body)]

    @staticmethod
    def _item(shown: str, size: int, header: ImageHeader, saved: str | None, body: str) -> str:
        return attachment_item(shown, size, "image", body, pixels=(header.width, header.height),
                               media_type=header.media_type, saved=saved)

    def _save(self, data: bytes, header: ImageHeader) -> str | None:
        """The image's copy under ``large_tool_results/`` (``None``: it could not be written; the image is
        attached all the same, and is whole in messages.json)."""
        suffix = next(suffix for suffix, media in IMAGE_SUFFIXES.items() if media == header.media_type)
        try:
            return str(write_output(self.large_results_dir, f"image-{secrets.token_hex(6)}", data, suffix))
        except (OSError, ValueError):
            return None


def _read_image_file(path: Path) -> bytes:
    """The whole file, opened without following a link and checked to be a regular file of at most
    :data:`MAX_IMAGE_BYTES` (read no further than that, however it grows meanwhile)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise ImageRefused(error.strerror or str(error)) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ImageRefused("not a regular file")
        if info.st_size > MAX_IMAGE_BYTES:
            raise ImageRefused(_over_cap(info.st_size))
        data = read_at_most(descriptor, MAX_IMAGE_BYTES + 1)
    except OSError as error:
        raise ImageRefused(error.strerror or str(error)) from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageRefused(f"image over the cap of {human_bytes(MAX_IMAGE_BYTES)}")  # it grew while read
    return data


def _over_cap(size: int) -> str:
    """``image of 7.2 MB, over the cap of 5.0 MB`` (in bytes when the rounded sizes would read the same)."""
    shown, cap = human_bytes(size), human_bytes(MAX_IMAGE_BYTES)
    if shown == cap:
        shown, cap = f"{size:,} bytes", f"{MAX_IMAGE_BYTES:,} bytes"
    return f"image of {shown}, over the cap of {cap}"
