"""The project directory a simulated agent works in: identifier-rich text files of every size, a
binary-ish file and a binary one. Built once per process and hard-linked into each session's workdir
(writes and edits only ever create files under ``out/``, so the shared files are never changed)."""

from __future__ import annotations

import os
from pathlib import Path

FILE_SIZES = {"tiny.txt": 1_000, "small.txt": 4_000, "notes.md": 6_000, "mid.txt": 12_000,
              "big.log": 60_000, "huge.log": 200_000}
SMALL_FILES = ("tiny.txt", "small.txt", "notes.md", "mid.txt")
LARGE_FILES = ("big.log", "huge.log")
BINARYISH_FILE = "blob.txt"
BINARY_FILE = "image.bin"
ERRORS = ("KeyError", "ValueError", "TimeoutError", "EACCES")


def text_line(name: str, number: int) -> str:
    """One line full of what a summary must keep: values, paths, ids, timings, error names, quotes."""
    error = ERRORS[number % len(ERRORS)] if number % 41 == 0 else "ok"
    return (f"{number:05d} value=VAL-{number:05d} path=src/pkg_{number % 37}/mod_{number % 97}.py "
            f"id={(number * 2654435761) % 16**10:010x}a took {number % 900} ms {error} \"note {name} {number}\"\n")


def _text(name: str, size: int) -> str:
    lines: list[str] = []
    total = 0
    number = 0
    while total < size:
        line = text_line(name, number)
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines)


def _binaryish() -> str:
    """Text a terminal must not see raw: escapes, control characters, odd Unicode (no NUL, so it is read)."""
    pieces = []
    for number in range(300):
        pieces.append(f"{number}: \x1b[31mred\x1b[0m \x07bell \u202eevil\u202c caf\u00e9 \U0001f600 \\x00 "
                      f"\t\"q\" {chr(0x80 + number % 64)}\r\n")
    return "".join(pieces)


def build_template(root: Path) -> Path:
    """The shared files (idempotent)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, size in FILE_SIZES.items():
        target = root / name
        if not target.exists():
            target.write_text(_text(name, size))
    if not (root / BINARYISH_FILE).exists():
        (root / BINARYISH_FILE).write_text(_binaryish(), encoding="utf-8", newline="")
    if not (root / BINARY_FILE).exists():
        (root / BINARY_FILE).write_bytes(bytes(range(256)) * 8)
    return root


def make_workdir(template: Path, workdir: Path) -> Path:
    """A session's workdir: hard links to the template's files (copies where links are not possible)."""
    workdir.mkdir(parents=True)
    (workdir / "out").mkdir()
    for source in template.iterdir():
        target = workdir / source.name
        try:
            os.link(source, target)
        except OSError:
            target.write_bytes(source.read_bytes())
    return workdir
