"""The image header reader: the four formats' sizes, and hostile headers (cut short, endless segments, zero or
absurd sizes) give ``None`` or the stated size, in one bounded pass, never an exception."""

from __future__ import annotations

import os
import random
import struct

import pytest

from tests.support.images import gif, jpeg, png, webp
from tui.base.image_header import ImageHeader, read_image_header


@pytest.mark.parametrize(("data", "expected"), [
    (png(1280, 720), ImageHeader("image/png", 1280, 720)),
    (jpeg(640, 480), ImageHeader("image/jpeg", 640, 480)),
    (gif(32, 16), ImageHeader("image/gif", 32, 16)),
    (webp(3000, 2000, "VP8X"), ImageHeader("image/webp", 3000, 2000)),
    (webp(400, 300, "VP8L"), ImageHeader("image/webp", 400, 300)),
    (webp(800, 600, "VP8 "), ImageHeader("image/webp", 800, 600)),
])
def test_each_format_gives_its_type_and_size(data: bytes, expected: ImageHeader) -> None:
    assert read_image_header(data) == expected


def test_the_type_comes_from_the_bytes_not_a_name() -> None:
    assert read_image_header(b"not an image at all, whatever the file is called") is None
    assert read_image_header(b"") is None


@pytest.mark.parametrize("data", [png(10, 10), jpeg(10, 10), gif(10, 10), webp(10, 10), webp(10, 10, "VP8L"),
                                  webp(10, 10, "VP8 ")])
def test_every_truncation_is_none_or_the_true_size(data: bytes) -> None:
    for cut in range(len(data)):
        header = read_image_header(data[:cut])
        assert header is None or (header.width, header.height) == (10, 10), cut


def test_a_zero_size_is_not_an_image() -> None:
    assert read_image_header(png(0, 10)) is None
    assert read_image_header(gif(10, 0)) is None


def test_an_absurd_size_is_reported_as_stated_for_the_caller_to_refuse() -> None:
    header = read_image_header(png(4_000_000_000, 3))
    assert header is not None and header.width == 4_000_000_000


def test_a_jpeg_of_endless_segments_ends_at_its_last_byte() -> None:
    segment = b"\xff\xe1" + struct.pack(">H", 65_535) + b"\x00" * 65_533
    data = b"\xff\xd8" + segment * 200  # 13 MB of segments and no frame header
    assert read_image_header(data) is None


def test_a_jpeg_segment_of_length_below_two_is_refused_not_looped() -> None:
    assert read_image_header(b"\xff\xd8\xff\xe0\x00\x00" + b"\x00" * 50) is None
    assert read_image_header(b"\xff\xd8\xff\xe0\x00\x01" + b"\x00" * 50) is None


def test_random_bytes_after_each_signature_never_raise() -> None:
    generator = random.Random(33)
    signatures = [b"\x89PNG\r\n\x1a\n", b"\xff\xd8", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBPVP8X", b"RIFF\x00\x00\x00\x00WEBPVP8L",
                  b"RIFF\x00\x00\x00\x00WEBPVP8 "]
    for _ in range(3_000):
        data = generator.choice(signatures) + generator.randbytes(generator.randrange(0, 64))
        header = read_image_header(data)
        assert header is None or (header.width > 0 and header.height > 0)
    for _ in range(200):
        data = os.urandom(64)
        if not data.startswith((b"\x89PNG", b"\xff\xd8", b"GIF8", b"RIFF")):
            assert read_image_header(data) is None
