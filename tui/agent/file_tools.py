"""File tools on the working directory: read_file (also for evicted outputs), write, edit, ls, glob, grep.

Every file operation goes through the run's pydantic-ai workspace (a ``LocalWorkspace`` on the
working directory); deep-tui's :class:`PathPolicy` decides first which paths are allowed at all,
because the local workspace itself is not a jail.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.workspaces import FileEntry, Workspace

from tui.agent import tool_schemas
from tui.agent.file_search import WalkStats, glob_regex, walk_files
from tui.agent.path_policy import PathPolicy
from tui.agent.tool_errors import refuse, reported_as_tool_error
from tui.agent.write_approval import WRITES_FILES_METADATA

READ_CHAR_LIMIT = 50_000
LINE_CHAR_LIMIT = 2_000
READ_BYTE_LIMIT = 64 * 1024 * 1024
LIST_LIMIT = 500
GREP_LIMIT = 200
GREP_FILE_BYTE_LIMIT = 8 * 1024 * 1024
GREP_LINE_CHARS = 300


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:4096]


def _cap_line(text: str) -> str:
    if len(text) <= LINE_CHAR_LIMIT:
        return text
    return f"{text[:LINE_CHAR_LIMIT]}… [line cut: {len(text):,} characters]"


async def _read_text_file(workspace: Workspace, target: Path, shown_as: str) -> str:
    with reported_as_tool_error(f"reading {shown_as}"):
        entry = await workspace.stat(str(target))
        if entry.is_dir:
            raise refuse(f"{shown_as} is a directory; use ls to list it")
        if entry.size is not None and entry.size > READ_BYTE_LIMIT:
            raise refuse(f"{shown_as} is {entry.size:,} bytes, too large to read; use grep to find the part you need")
        data = await workspace.read_bytes(str(target))
    if _looks_binary(data):
        raise refuse(f"{shown_as} is a binary file ({len(data):,} bytes); it cannot be shown as text")
    return data.decode("utf-8", errors="replace")


def number_lines(text: str, shown_as: str, offset: int, limit: int) -> str:
    """Lines ``offset+1 .. offset+limit`` numbered like ``cat -n``, capped per line and in total."""
    lines = text.splitlines()
    total = len(lines)
    if total and offset >= total:
        raise refuse(f"offset {offset} is past the end: {shown_as} has {total} lines")
    shown: list[str] = []
    used = 0
    for number in range(offset, min(total, offset + limit)):
        line = f"{number + 1:>6}\t{_cap_line(lines[number])}"
        if used + len(line) > READ_CHAR_LIMIT and shown:
            break
        shown.append(line)
        used += len(line) + 1
    last = offset + len(shown)
    footer = f"[lines {offset + 1}-{last} of {total}]" if total else "[empty file]"
    if last < total:
        footer += f" — continue with read_file(path={shown_as!r}, offset={last})"
    return "\n".join([*shown, footer])


def file_toolset(policy: PathPolicy) -> FunctionToolset[None]:
    """The file tools, every path checked by ``policy`` and every I/O done through ``ctx.workspace``."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool(toolset)
    async def read_file(ctx: RunContext[None], path: str, offset: int = 0, limit: int = 400) -> str:
        """Read a text file with line numbers. Use offset/limit to page through long files, including saved
        tool outputs under the data directory's large_tool_results/."""
        if offset < 0 or limit <= 0:
            raise refuse("offset must be ≥ 0 and limit > 0")
        target = policy.resolve_for_read(path)
        text = await _read_text_file(ctx.workspace, target, path)
        return number_lines(text, path, offset, limit)

    @tool_schemas.tool(toolset, metadata=WRITES_FILES_METADATA)  # asks the user first (tui.agent.write_gate)
    async def write_file(ctx: RunContext[None], path: str, content: str) -> str:
        """Create or overwrite a file with ``content`` (parent directories are created)."""
        target = policy.resolve_for_write(path)
        data = content.encode("utf-8")
        with reported_as_tool_error(f"writing {path}"):
            if await ctx.workspace.exists(str(target)) and (await ctx.workspace.stat(str(target))).is_dir:
                raise refuse(f"{path} is a directory")
            await ctx.workspace.write_bytes(str(target), data)
        return f"wrote {len(data)} bytes to {policy.display(target)}"

    @tool_schemas.tool(toolset, metadata=WRITES_FILES_METADATA)
    async def edit_file(ctx: RunContext[None], path: str, old_text: str, new_text: str) -> str:
        """Replace ``old_text`` with ``new_text``; ``old_text`` must occur exactly once."""
        target = policy.resolve_for_edit(path)  # a hard-linked file is refused
        with reported_as_tool_error(f"editing {path}"):  # a directory: IsADirectoryError, said plainly
            text = (await ctx.workspace.read_bytes(str(target))).decode("utf-8")
        matches = text.count(old_text) if old_text else 0
        if matches != 1:
            raise refuse(
                f"old_text must match exactly once in {path}; it matches {matches} times"
                + (" — include more surrounding lines" if matches > 1 else "")
            )
        with reported_as_tool_error(f"writing {path}"):
            await ctx.workspace.write_bytes(str(target), text.replace(old_text, new_text, 1).encode("utf-8"))
        return f"edited {policy.display(target)}"

    @tool_schemas.tool(toolset)
    async def ls(ctx: RunContext[None], path: str = ".") -> str:
        """List a directory: sub-directories end with '/', files show their size in bytes."""
        target = policy.resolve(path)
        with reported_as_tool_error(f"listing {path}"):
            if not (await ctx.workspace.stat(str(target))).is_dir:
                raise refuse(f"{path} is not a directory")
            entries = await ctx.workspace.list_dir(str(target))
        ordered = sorted(entries, key=lambda entry: (not entry.is_dir, entry.name))
        rows = [row for entry in ordered if (row := _listing_row(policy, entry)) is not None]
        more = f"\n… and {len(rows) - LIST_LIMIT} more" if len(rows) > LIST_LIMIT else ""
        return ("\n".join(rows[:LIST_LIMIT]) or "(empty directory)") + more

    @tool_schemas.tool(toolset)
    async def glob(ctx: RunContext[None], pattern: str, path: str = ".") -> str:
        """Files matching a glob pattern such as '**/*.py', relative to ``path``."""
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise refuse("the pattern must be relative and must not contain '..'")
        base = policy.resolve(path)
        matcher = glob_regex(pattern)
        stats = WalkStats()
        found: list[str] = []
        with reported_as_tool_error(f"searching {path}"):
            async for file in walk_files(ctx.workspace, policy, base, stats):
                if matcher.match(file.relative):
                    found.append(policy.display(file.path))
                    if len(found) > LIST_LIMIT:
                        break
        note = _truncation_note(stats)
        if not found:
            return f"no files match {pattern!r}{note}"
        extra = "\n… (more matches not shown)" if len(found) > LIST_LIMIT else note
        return "\n".join(sorted(found[:LIST_LIMIT])) + extra

    @tool_schemas.tool(toolset)
    async def grep(ctx: RunContext[None], pattern: str, path: str = ".", glob: str | None = None) -> str:
        """Search file contents with a regular expression; prints ``file:line: text``."""
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise refuse(f"invalid regular expression {pattern!r}: {error}") from None
        base = policy.resolve(path)
        matcher = glob_regex(glob) if glob else None
        stats = WalkStats()
        hits: list[str] = []
        with reported_as_tool_error(f"searching {path}"):
            entry = await ctx.workspace.stat(str(base))
            if not entry.is_dir:
                candidates = [(base, entry.size)]
            else:  # the listing already gives each size: no second stat per file
                candidates = [(file.path, file.size) async for file in walk_files(ctx.workspace, policy, base, stats)
                              if matcher is None or matcher.match(file.relative) or matcher.match(file.path.name)]
        for file, size in candidates:
            text = await _searchable_text(ctx.workspace, file, size)
            if text is None:
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if regex.search(line):
                    hits.append(f"{policy.display(file)}:{number}: {line.rstrip()[:GREP_LINE_CHARS]}")
                    if len(hits) >= GREP_LIMIT:
                        return "\n".join(hits) + f"\n… stopped after {GREP_LIMIT} matches; narrow the search"
        note = _truncation_note(stats)
        return ("\n".join(hits) if hits else f"no matches for {pattern!r}") + note

    return toolset


def _listing_row(policy: PathPolicy, entry: FileEntry) -> str | None:
    """One ``ls`` line; None for an entry in deep-tui's data directory, nothing about a target outside."""
    resolved = Path(entry.path).resolve()
    if policy.in_data_dir(resolved):
        return None
    if not policy.allows(resolved):
        return f"{entry.name}  (link to a path outside the working directory)"
    if entry.is_dir:
        return f"{entry.name}/"
    return f"{entry.name}  {entry.size if entry.size is not None else '?'}"


async def _searchable_text(workspace: Workspace, file: Path, size: int | None) -> str | None:
    """A file's text for grep, or None for what grep skips: binary, huge, special or unreadable files."""
    if size is not None and size > GREP_FILE_BYTE_LIMIT:
        return None
    try:
        data = await workspace.read_bytes(str(file))  # refuses FIFOs and devices instead of blocking
    except OSError:
        return None
    return None if _looks_binary(data) else data.decode("utf-8", errors="replace")


def _truncation_note(stats: WalkStats) -> str:
    if not stats.truncated:
        return ""
    return f"\n… stopped after scanning {stats.visited - 1:,} files; give a narrower path"
