"""Small image files for tests: real headers (PNG with a valid IHDR and CRCs, JPEG, GIF, WebP), tiny bodies."""

from __future__ import annotations

import struct
import zlib


def png(width: int, height: int, *, body: bytes = b"") -> bytes:
    """A PNG whose IHDR says ``width`` × ``height`` (the image data is a token: only the header is read)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 16 + body)) + chunk(b"IEND", b""))


def jpeg(width: int, height: int) -> bytes:
    """A JPEG: SOI, an APP0 (JFIF) segment, a comment, then the baseline frame header with the size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    comment = b"\xff\xfe" + struct.pack(">H", 7) + b"hello"
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + comment + frame + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x00" * 8 + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b"\x3b"


def webp(width: int, height: int, kind: str = "VP8X") -> bytes:
    """A WebP of the given chunk kind (``VP8X`` extended, ``VP8L`` lossless, ``VP8 `` lossy)."""
    if kind == "VP8X":
        body = b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    elif kind == "VP8L":
        bits = (width - 1) | ((height - 1) << 14)
        body = b"\x2f" + bits.to_bytes(4, "little")
    else:
        body = b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    chunk = kind.encode("ascii") + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk
