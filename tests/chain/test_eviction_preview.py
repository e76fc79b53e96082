"""The eviction preview's head and tail are found without splitting or copying a large output, and are the same
as splitting it whole would give."""

from __future__ import annotations

import random

from tui.chain.eviction import HEAD_LINES, TAIL_LINES, _head_and_tail, build_preview


def split_whole(text: str) -> tuple[list[str], list[str], int]:
    count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    return (text.split("\n")[:HEAD_LINES], text.removesuffix("\n").split("\n")[-TAIL_LINES:], count)


def test_head_and_tail_match_splitting_the_whole_text() -> None:
    rng = random.Random(21)
    for _ in range(5_000):
        text = "".join(rng.choice(["a", "b\n", "\n", "\n\n", "xyz", "é✓"]) for _ in range(rng.randint(0, 90)))
        assert _head_and_tail(text) == split_whole(text), repr(text)


def test_a_ten_megabyte_output_previews_its_first_and_last_lines() -> None:
    text = "".join(f"step {number}: ok\n" for number in range(700_000))
    preview = build_preview(text, path="/saved/out.txt", tool_name="execute")
    assert "step 0: ok\nstep 1: ok" in preview and "step 699999: ok" in preview
    assert "[… 699970 lines omitted …]" in preview and f"{len(text):,} characters, 700,000 lines" in preview


def test_a_large_output_is_saved_as_the_same_bytes_encoded_slice_by_slice() -> None:
    from tui.chain.eviction import ENCODE_SLICE_CHARS, _utf8

    text = ("naïve ✓ 東京 " * 300_000)[: ENCODE_SLICE_CHARS * 3 + 17]
    assert len(text) > ENCODE_SLICE_CHARS * 3 and _utf8(text) == text.encode("utf-8")
    assert _utf8("short ✓") == "short ✓".encode()
