"""File tools on the working directory: read_file (also for evicted outputs), write, edit, ls, glob, grep.

deep-tui's :class:`PathPolicy` decides first which paths are allowed at all, because the local workspace
itself is not a jail. Writes go through the run's pydantic-ai workspace. Reads, listings and searches stream
from the local disk in a worker thread instead (:mod:`tui.agent.tools.file_reading`, :mod:`tui.agent.tools.file_search`,
:mod:`tui.agent.tools.text_search`): the workspace API returns whole files and whole sorted listings, which cannot be
bounded or stopped. Every one of them is bounded in time, memory and output, and stops on cancellation.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from pydantic_ai import FunctionToolset, RunContext

from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.deadline import ToolDeadline, run_blocking
from tui.agent.tools.failures import refuse, reported_as_tool_error
from tui.agent.tools.file_reading import (
    LINE_CHAR_LIMIT,
    LIST_LIMIT,
    READ_CHAR_LIMIT,
    ReadRequest,
    list_directory,
    read_page,
)
from tui.agent.tools.file_search import FoundFile, WalkStats, glob_matcher, walk_files
from tui.agent.tools.kinds import WRITES_FILES_METADATA
from tui.agent.tools.path_policy import PathPolicy
from tui.agent.tools.text_search import LONG_LINE_BYTES, SearchBudget, compile_pattern, search_files

__all__ = ["LINE_CHAR_LIMIT", "LIST_LIMIT", "READ_CHAR_LIMIT", "file_toolset"]

MIN_PAGE_CHARS = 500
"""However small the window, a read_file page shows this many characters (a line page; a page of lines at least
its first line)."""
EDIT_BYTE_LIMIT = 16 * 1024 * 1024
"""edit_file reads the whole file: larger ones are refused (write_file can still replace them)."""


def file_toolset(policy: PathPolicy, page_chars: Callable[[], int] | None = None) -> FunctionToolset[None]:
    """The file tools, every path checked by ``policy`` and every I/O done through ``ctx.workspace``;
    ``page_chars``: the most characters a read_file page of a saved output may hold now (at most
    :data:`READ_CHAR_LIMIT`): a page larger than the session keeps in its context would be saved to disk again,
    behind a pointer to a copy of itself, and never read."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool(toolset)
    async def read_file(ctx: RunContext[None], path: str, offset: int = 0, limit: int = 400,
                        char_offset: int = 0) -> str:
        """Read a text file with line numbers. Use offset/limit to page through long files, including saved
        tool outputs under the data directory's large_tool_results/. A line longer than 2,000 characters is
        cut: read the rest of line offset+1 with char_offset (characters into that line)."""
        if offset < 0 or limit <= 0 or char_offset < 0:
            raise refuse("offset and char_offset must be ≥ 0 and limit > 0")
        target = policy.resolve_for_read(path)
        saved = policy.is_saved_output(target)
        char_limit = READ_CHAR_LIMIT if page_chars is None or not saved else \
            max(MIN_PAGE_CHARS, min(READ_CHAR_LIMIT, page_chars()))
        request = ReadRequest(target, path, offset, limit, char_offset, saved_output=saved, char_limit=char_limit)
        return await run_blocking(lambda deadline: read_page(request, deadline))

    @tool_schemas.tool(toolset, metadata=WRITES_FILES_METADATA)  # asks the user first (tui.agent.approval.approval_gate)
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
            entry = await ctx.workspace.stat(str(target))
            if entry.size is not None and entry.size > EDIT_BYTE_LIMIT:
                raise refuse(f"{path} is {entry.size:,} bytes, too large to edit in place; use write_file")
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
        return await run_blocking(lambda deadline: list_directory(policy, target, path, deadline))

    @tool_schemas.tool(toolset)
    async def glob(ctx: RunContext[None], pattern: str, path: str = ".") -> str:
        """Files matching a glob pattern such as '**/*.py' or 'src/**/*.{ts,tsx}', relative to ``path``."""
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise refuse("the pattern must be relative and must not contain '..'")
        matches = glob_matcher(pattern)
        base = policy.resolve(path)

        def search(deadline: ToolDeadline) -> str:
            stats = WalkStats()
            found: list[str] = []
            with reported_as_tool_error(f"searching {path}"):
                if not stat.S_ISDIR(os.stat(base).st_mode):
                    raise refuse(f"{path} is not a directory; glob searches under a directory")
                for file in walk_files(policy, base, deadline, stats):
                    if matches(file.relative):
                        found.append(policy.display(Path(file.path)))
                        if len(found) >= LIST_LIMIT:
                            stats.stopped = f"stopped after {LIST_LIMIT} matches; give a narrower pattern"
                            break
            if not found:
                return f"no files match {pattern!r}{stats.note()}"
            return "\n".join(sorted(found)) + stats.note()

        return await run_blocking(search)

    @tool_schemas.tool(toolset)
    async def grep(ctx: RunContext[None], pattern: str, path: str = ".", glob: str | None = None) -> str:
        """Search file contents with a regular expression (RE2 syntax: no look-around or backreferences);
        prints ``file:line: text``. ``glob`` limits the files searched, e.g. '*.py'."""
        compiled = compile_pattern(pattern)
        matches = glob_matcher(glob) if glob else None
        base = policy.resolve(path)

        def search(deadline: ToolDeadline) -> str:
            stats = WalkStats()
            budget = SearchBudget()
            with reported_as_tool_error(f"searching {path}"):
                if stat.S_ISDIR(os.stat(base).st_mode):
                    files = ((file, policy.display(Path(file.path))) for file in walk_files(policy, base, deadline, stats)
                             if matches is None or matches(file.relative) or matches(Path(file.path).name))
                else:
                    files = iter([(FoundFile(str(base), base.name), policy.display(base))])
                search_files(files, compiled, deadline, budget)
            return _grep_result(pattern, budget, stats)

        return await run_blocking(search)

    return toolset


def _grep_result(pattern: str, budget: SearchBudget, stats: WalkStats) -> str:
    lines = budget.hits or [f"no matches for {pattern!r}"]
    if budget.long_lines:
        shown = ", ".join(budget.long_lines[:5])
        lines.append(f"… lines over {LONG_LINE_BYTES // (1024 * 1024)} MB were searched in their first "
                     f"{LONG_LINE_BYTES // (1024 * 1024)} MB only: {shown}")
    if budget.stopped:
        lines.append(f"… {budget.stopped}")
    elif stats.stopped:
        lines.append(f"… {stats.stopped}")
    return "\n".join(lines)
