"""Who decides whether the agent may change a file: the policy, the request shown to the user, the answer.

No pydantic-ai or Textual import here: the app's approval dialog and ``deep-tui run`` share these types,
and :mod:`tui.agent.approval.approval_gate` turns them into pydantic-ai's tool approval (deferred tool calls).

A *write request* is what the user is asked about: the tool, the path relative to the working directory
and what the call would change — a unified diff against the file's current content when it exists, or
the new file's text with its line count. Every string in it is the model's (or a file's) and is hostile:
whoever shows it passes it through :func:`tui.text.terminal_text.visible` and never as markup.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from tui.text.wording import plural

WritePolicy = Literal["ask", "always", "never"]
"""``ask``: each write waits for the user (in ``run``, where nobody can answer, it is refused);
``always``: writes run without asking; ``never``: every write is refused."""

WRITE_POLICIES: tuple[str, ...] = get_args(WritePolicy)

WriteAction = Literal["create", "overwrite", "edit", "call"]
"""``call``: a tool of an MCP server (:mod:`tui.agent.approval.mcp_calls`); ``path`` is then the server's own name
for the tool, ``body`` its arguments as JSON."""

PREVIEW_LINE_LIMIT = 400
PREVIEW_CHAR_LIMIT = 60_000
CURRENT_FILE_BYTE_LIMIT = 4 * 1024 * 1024
"""A file larger than this is not read to build a diff (the preview says so)."""

DENIED_HEADLESS = ("the user has not allowed file writes in this run, so {tool} on {path} was not run; "
                   "rerun with --allow-writes (or set [tools] writes = \"always\") to let the agent change files")
DENIED_BY_POLICY = ("file writes are turned off ([tools] writes = \"never\" or --deny-writes), so {tool} on {path} "
                    "was not run; tell the user what you would change instead")
DENIED_BY_USER = "the user denied {tool} on {path}; the file was not changed"


@dataclass(frozen=True)
class WriteRequest:
    """One file-changing tool call waiting for the user's answer."""

    call_id: str
    tool_name: str
    path: str
    """As the user should read it: relative to the working directory when inside it."""
    action: WriteAction
    body: str
    """A unified diff (``overwrite``, ``edit``) or the new file's text (``create``), capped."""
    new_lines: int
    """Lines of the file after the change."""
    added: int = 0
    removed: int = 0
    note: str = ""
    """Something the user should know (the edit would not apply, the file is binary, the preview is cut)."""
    position: int = 1
    total: int = 1
    """This is request ``position`` of ``total`` in the model's response."""
    server: str = ""
    """For a ``call``: the MCP server whose tool it is."""
    subagent: str = ""
    """The subagent making the call (``subagent 2 (explore): find the loader``); "" for the session's agent."""

    @property
    def summary(self) -> str:
        """One line: what the call does, e.g. ``edit src/app.py (+3 -1)``."""
        if self.action == "call":
            return f"call {self.path} on MCP server {self.server}"
        lines = plural(self.new_lines, "line")
        if self.action == "create":
            return f"create {self.path} ({lines})"
        return f"{self.action} {self.path} (+{self.added} -{self.removed}, {lines} after)"


@dataclass(frozen=True)
class WriteDecision:
    """The user's answer to one :class:`WriteRequest`."""

    allow: bool
    for_session: bool = False
    """Allow this and every later write in this session (kept in memory only, never across sessions)."""
    reason: str = ""
    """Why it was denied, typed by the user for the model (optional)."""

    @classmethod
    def once(cls) -> WriteDecision:
        return cls(allow=True)

    @classmethod
    def session(cls) -> WriteDecision:
        return cls(allow=True, for_session=True)

    @classmethod
    def deny(cls, reason: str = "") -> WriteDecision:
        return cls(allow=False, reason=reason.strip())


WriteApprover = Callable[[WriteRequest], Awaitable[WriteDecision]]
"""Asks the user about one request (the app's dialog); cancelling it cancels the turn."""


def denial_message(decision: WriteDecision, request: WriteRequest) -> str:
    """What the model reads when the user said no."""
    message = DENIED_BY_USER.format(tool=request.tool_name, path=request.path)
    return f"{message}. The user's reason: {decision.reason}" if decision.reason else message


def build_write_request(call_id: str, tool_name: str, args: Mapping[str, object], target: Path, shown_as: str,
                        *, position: int = 1, total: int = 1) -> WriteRequest:
    """The request for a ``write_file`` (``content``) or ``edit_file`` (``old_text``, ``new_text``) call on
    ``target`` (already resolved by the path policy); reads the file's current content for the diff."""
    current, note = _current_text(target)
    if "content" in args:
        new = str(args.get("content", ""))
        if current is None:
            action: WriteAction = "overwrite" if target.exists() else "create"
            if action == "create":
                body, cut = _capped(new.splitlines())
                return WriteRequest(call_id, tool_name, shown_as, "create", body, _line_count(new),
                                    added=_line_count(new), note=_join(note, cut), position=position, total=total)
            return WriteRequest(call_id, tool_name, shown_as, "overwrite", "", _line_count(new), note=note,
                                position=position, total=total)
        return _diff_request(call_id, tool_name, shown_as, "overwrite", current, new, note, position, total)
    old_text, new_text = str(args.get("old_text", "")), str(args.get("new_text", ""))
    if current is not None:
        matches = current.count(old_text) if old_text else 0
        if matches == 1:
            return _diff_request(call_id, tool_name, shown_as, "edit", current,
                                 current.replace(old_text, new_text, 1), note, position, total)
        note = _join(note, f"old_text matches {matches} times in the file: the edit will be refused as it stands")
    return _diff_request(call_id, tool_name, shown_as, "edit", old_text, new_text, note, position, total)


def _diff_request(call_id: str, tool_name: str, shown_as: str, action: WriteAction, old: str, new: str, note: str,
                  position: int, total: int) -> WriteRequest:
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{shown_as}", f"b/{shown_as}",
                                     lineterm="", n=3))
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    body, cut = _capped(diff) if diff else ("(no change: the new content is the same as the file's)", "")
    return WriteRequest(call_id, tool_name, shown_as, action, body, _line_count(new), added=added, removed=removed,
                        note=_join(note, cut), position=position, total=total)


def _current_text(target: Path) -> tuple[str | None, str]:
    """The file's text now (``None`` when missing or unreadable as text) and a note saying why not."""
    try:
        if not target.is_file():
            return None, ""
        size = target.stat().st_size
        if size > CURRENT_FILE_BYTE_LIMIT:
            return None, f"the file is {size:,} bytes now: too large to show a diff"
        data = target.read_bytes()
    except OSError as error:
        return None, f"the current file could not be read ({error.strerror or error})"
    if b"\x00" in data[:4096]:
        return None, f"the file is binary now ({len(data):,} bytes): no diff"
    return data.decode("utf-8", errors="replace"), ""


def _capped(lines: list[str]) -> tuple[str, str]:
    shown: list[str] = []
    used = 0
    for line in lines[:PREVIEW_LINE_LIMIT]:
        if used + len(line) > PREVIEW_CHAR_LIMIT and shown:
            break
        shown.append(line)
        used += len(line) + 1
    left = len(lines) - len(shown)
    return "\n".join(shown), (f"{left:,} more lines not shown" if left else "")


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _join(*notes: str) -> str:
    return "; ".join(note for note in notes if note)
