"""File tools on the working directory: read_file (also for evicted outputs), write, edit, ls, glob, grep."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic_ai import FunctionToolset, ModelRetry

from tui.agent.path_policy import PathPolicy

READ_CHAR_LIMIT = 50_000
LIST_LIMIT = 500
GREP_LIMIT = 200
SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"})


def _is_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        return b"\x00" in handle.read(4096)


def _existing_file(policy: PathPolicy, path: str) -> Path:
    target = policy.resolve(path)
    if not target.exists():
        raise ModelRetry(f"{path} does not exist")
    if target.is_dir():
        raise ModelRetry(f"{path} is a directory; use ls to list it")
    return target


def read_file_text(policy: PathPolicy, path: str, offset: int = 0, limit: int = 400) -> str:
    """Lines ``offset+1 .. offset+limit`` numbered like ``cat -n``, capped in characters."""
    if offset < 0 or limit <= 0:
        raise ModelRetry("offset must be ≥ 0 and limit > 0")
    target = _existing_file(policy, path)
    if _is_binary(target):
        raise ModelRetry(f"{path} is a binary file ({target.stat().st_size} bytes); it cannot be shown as text")
    lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    total = len(lines)
    if total and offset >= total:
        raise ModelRetry(f"offset {offset} is past the end: {path} has {total} lines")
    shown: list[str] = []
    used = 0
    for number in range(offset, min(total, offset + limit)):
        line = f"{number + 1:>6}\t{lines[number]}"
        if used + len(line) > READ_CHAR_LIMIT and shown:
            break
        shown.append(line)
        used += len(line) + 1
    last = offset + len(shown)
    footer = f"[lines {offset + 1}-{last} of {total}]" if total else "[empty file]"
    if last < total:
        footer += f" — continue with read_file(path={path!r}, offset={last})"
    return "\n".join([*shown, footer])


def file_toolset(policy: PathPolicy) -> FunctionToolset[None]:
    """The file tools, every path checked by ``policy``."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def read_file(path: str, offset: int = 0, limit: int = 400) -> str:
        """Read a text file with line numbers. Use offset/limit to page through long files, including saved
        tool outputs under the data directory's large_tool_results/."""
        return read_file_text(policy, path, offset, limit)

    @toolset.tool_plain
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file with ``content`` (parent directories are created)."""
        target = policy.resolve(path)
        if target.is_dir():
            raise ModelRetry(f"{path} is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8")
        target.write_bytes(data)
        return f"wrote {len(data)} bytes to {policy.display(target)}"

    @toolset.tool_plain
    def edit_file(path: str, old_text: str, new_text: str) -> str:
        """Replace ``old_text`` with ``new_text``; ``old_text`` must occur exactly once."""
        target = _existing_file(policy, path)
        text = target.read_text(encoding="utf-8")
        matches = text.count(old_text) if old_text else 0
        if matches != 1:
            raise ModelRetry(
                f"old_text must match exactly once in {path}; it matches {matches} times"
                + (" — include more surrounding lines" if matches > 1 else "")
            )
        target.write_text(text.replace(old_text, new_text, 1), encoding="utf-8")
        return f"edited {policy.display(target)}"

    @toolset.tool_plain
    def ls(path: str = ".") -> str:
        """List a directory: sub-directories end with '/', files show their size in bytes."""
        target = policy.resolve(path)
        if not target.is_dir():
            raise ModelRetry(f"{path} is not a directory")
        entries = sorted(os.scandir(target), key=lambda entry: (not entry.is_dir(), entry.name))
        rows = [f"{entry.name}/" if entry.is_dir() else f"{entry.name}  {entry.stat().st_size}" for entry in entries]
        more = f"\n… and {len(rows) - LIST_LIMIT} more" if len(rows) > LIST_LIMIT else ""
        return ("\n".join(rows[:LIST_LIMIT]) or "(empty directory)") + more

    @toolset.tool_plain
    def glob(pattern: str, path: str = ".") -> str:
        """Files matching a glob pattern such as '**/*.py', relative to ``path``."""
        base = policy.resolve(path)
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise ModelRetry("the pattern must be relative and must not contain '..'")
        found: list[str] = []
        for match in base.glob(pattern):
            if SKIPPED_DIRS.intersection(match.relative_to(base).parts):
                continue
            found.append(policy.display(match))
            if len(found) > LIST_LIMIT:
                break
        if not found:
            return f"no files match {pattern!r}"
        extra = "\n… (more matches not shown)" if len(found) > LIST_LIMIT else ""
        return "\n".join(sorted(found[:LIST_LIMIT])) + extra

    @toolset.tool_plain
    def grep(pattern: str, path: str = ".", glob: str | None = None) -> str:
        """Search file contents with a regular expression; prints ``file:line: text``."""
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ModelRetry(f"invalid regular expression {pattern!r}: {error}") from None
        base = policy.resolve(path)
        files = [base] if base.is_file() else _walk(base, glob)
        hits: list[str] = []
        for file in files:
            if _is_binary(file):
                continue
            with file.open(encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    if regex.search(line):
                        hits.append(f"{policy.display(file)}:{number}: {line.rstrip()[:300]}")
                        if len(hits) >= GREP_LIMIT:
                            return "\n".join(hits) + f"\n… stopped after {GREP_LIMIT} matches; narrow the search"
        return "\n".join(hits) if hits else f"no matches for {pattern!r}"

    return toolset


def _walk(base: Path, pattern: str | None) -> list[Path]:
    files: list[Path] = []
    for root, directories, names in os.walk(base):
        directories[:] = sorted(d for d in directories if d not in SKIPPED_DIRS)
        for name in sorted(names):
            candidate = Path(root) / name
            if pattern is None or candidate.match(pattern):
                files.append(candidate)
    return files
