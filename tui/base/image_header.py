"""An image's format and pixel size read from its first bytes: PNG, JPEG, GIF and WebP, nothing else.

A small header reader rather than an imaging library: deep-tui never decodes an image (it sends the bytes as
they are), it only needs the type and the width and height, to refuse an oversized image and to count its
tokens by the provider's rule. Reading a header is a few bounded reads of fixed offsets (JPEG: a walk over the
segment lengths until the frame header), so a hostile file — truncated, a header claiming 4 billion pixels,
a JPEG of endless segments — costs at most one pass over the bytes given and yields ``None`` or the sizes it
states (the caller checks them against its caps). No decoder runs, so no decompression bomb can go off.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp"}
"""The file name endings taken as images (``@shot.png``, a pasted path), and the type each claims."""
FORMAT_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (baseline, progressive, lossless…): the ones that carry the size; C4/C8/CC do not."""
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


@dataclass(frozen=True)
class ImageHeader:
    """What an image's header says: its media type and its size in pixels."""

    media_type: str
    width: int
    height: int

    @property
    def format_name(self) -> str:
        """``PNG``, ``JPEG``, ``GIF`` or ``WebP``."""
        return FORMAT_NAMES.get(self.media_type, self.media_type)


def read_image_header(data: bytes) -> ImageHeader | None:
    """The type and size of a PNG, JPEG, GIF or WebP image from its bytes (``None``: not one of them, or a header
    that is cut short, malformed or states a zero size). The type comes from the bytes, never from a name."""
    try:
        if data.startswith(_PNG_SIGNATURE):
            return _png(data)
        if data.startswith((b"GIF87a", b"GIF89a")):
            return _sized("image/gif", *struct.unpack_from("<HH", data, 6))
        if data.startswith(b"\xff\xd8"):
            return _jpeg(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp(data)
    except struct.error:  # fewer bytes than the header needs
        return None
    return None


def _sized(media_type: str, width: int, height: int) -> ImageHeader | None:
    return ImageHeader(media_type, width, height) if width > 0 and height > 0 else None


def _png(data: bytes) -> ImageHeader | None:
    length, kind = struct.unpack_from(">I4s", data, 8)
    if kind != b"IHDR" or length < 8:
        return None
    return _sized("image/png", *struct.unpack_from(">II", data, 16))


def _jpeg(data: bytes) -> ImageHeader | None:
    """Walk the segments from the start of the image to the first frame header; each step moves forward."""
    position = 2
    end = len(data)
    while position < end:
        if data[position] != 0xFF:
            return None  # a segment must start with a marker: a damaged or hostile file
        while position < end and data[position] == 0xFF:  # fill bytes before the marker
            position += 1
        if position >= end:
            return None
        marker = data[position]
        position += 1
        if marker in _JPEG_STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before the image data
            return None
        (length,) = struct.unpack_from(">H", data, position)
        if length < 2:
            return None
        if marker in _JPEG_FRAME_MARKERS:
            height, width = struct.unpack_from(">HH", data, position + 3)
            return _sized("image/jpeg", width, height)
        position += length
    return None


def _webp(data: bytes) -> ImageHeader | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: a key frame's start code, then 14-bit width and height
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = struct.unpack_from("<HH", data, 26)
        return _sized("image/webp", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L":  # lossless: a signature byte, then width-1 and height-1 in 14 bits each
        if len(data) < 25 or data[20] != 0x2F:
            return None
        bits = int.from_bytes(data[21:25], "little")
        return _sized("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":  # extended: the canvas size, width-1 and height-1 in 24 bits each
        if len(data) < 30:
            return None
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _sized("image/webp", width, height)
    return None
