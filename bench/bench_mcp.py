"""MCP (issue 29.10): the framing of a stdio server's messages is linear in their size.

``frame 100 MB line``: :class:`tui.agent.mcp.stdio.LineReader` splits one 100 MB line fed in 64 KB chunks (the
pipe's size), the cost a 50 MB result (twice that on the wire: text and structured content) puts on the event
loop; it is skipped past the cap, keeping only its edges. ``frame 8 MB line, join-and-split`` is, for context,
the MCP SDK's own way (join the buffer with each chunk, split the whole again): quadratic, already slower at
8 MB than the linear reader at 100 MB.
"""

from __future__ import annotations

from common import BenchResult, info, median_ms, result

from tui.agent.mcp.stdio import LineReader

CHUNK = 65_536


def _chunks(size: int) -> list[bytes]:
    piece = b"x" * CHUNK
    chunks = [piece] * (size // CHUNK)
    chunks[-1] = chunks[-1][:-1] + b"\n"
    return chunks


def _linear(chunks: list[bytes]) -> None:
    reader = LineReader()
    lines = [line for chunk in chunks for line in reader.feed(chunk)]
    assert len(lines) == 1


def _join_and_split(chunks: list[bytes]) -> None:
    buffer = ""
    lines: list[str] = []
    for chunk in chunks:
        parts = (buffer + chunk.decode()).split("\n")
        buffer = parts.pop()
        lines.extend(parts)
    assert len(lines) == 1


def main() -> list[BenchResult]:
    big, small = _chunks(100_000_000), _chunks(8_000_000)
    return [
        result("mcp: frame 100 MB line (linear)", median_ms(lambda: _linear(big), runs=5), "ms", 500.0),
        info("mcp: frame 8 MB line, join-and-split", median_ms(lambda: _join_and_split(small), runs=3), "ms"),
    ]


if __name__ == "__main__":
    from common import report

    report(main())
