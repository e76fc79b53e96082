"""A session's task state on disk: the agent's todo list and the user's standing instructions (``/keep``).

Both live in ``sessions/<id>/todos.json`` (one small JSON object), outside messages.json, so no compaction
can drop them: the agent layer puts them into the instructions of every request. The file is written
atomically and never through a link (:func:`tui.base.atomic.write_atomic`); it is read without following a
link, capped in size, and a file that cannot be understood is set aside (kept, never overwritten) and the
session goes on with an empty state and a warning.

The todo items have pydantic-deep's fields (``content``, ``status``, ``active_form``), so an adopted
pydantic-deep session, which keeps its list only in its ``write_todos`` calls, reads the same: see
:func:`todos_from_calls`. No pydantic-ai import here (the store's reader stays light).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tui.base.atomic import unused_name, write_atomic
from tui.base.nofollow import open_file
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

TASK_STATE_FILE = "todos.json"
TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_STATUSES: tuple[TodoStatus, ...] = ("pending", "in_progress", "completed")
MAX_TODOS = 100
"""At most this many items in a todo list (a longer list is refused: the model is told)."""
MAX_TODO_CHARS = 500
"""At most this many characters in an item's ``content`` (and ``active_form``)."""
MAX_KEEP_LINES = 20
"""At most this many standing instructions per session."""
MAX_KEEP_CHARS = 500
"""At most this many characters in one standing instruction."""
MAX_FILE_BYTES = 1_000_000
"""A todos.json larger than this is not read (a real one is a few kilobytes)."""
WRITE_TODOS_TOOL = "write_todos"


class TaskStateError(ValueError):
    """A todo list or a standing instruction that cannot be kept; ``str()`` says why in one line."""


@dataclass(frozen=True)
class TodoItem:
    """One item of the agent's todo list (pydantic-deep's fields)."""

    content: str
    status: TodoStatus = "pending"
    active_form: str = ""
    """What is being done while the item is in progress ("Running the tests"); empty: ``content`` is shown."""

    @property
    def label(self) -> str:
        """The words shown for the item: its ``active_form`` while in progress, else its ``content``."""
        return self.active_form if self.status == "in_progress" and self.active_form else self.content

    def to_dict(self) -> dict[str, str]:
        data = {"content": self.content, "status": self.status}
        if self.active_form:
            data["active_form"] = self.active_form
        return data


@dataclass(frozen=True)
class KeepLine:
    """A standing instruction the user wants honoured for the whole session."""

    text: str
    added: float = 0.0
    """When it was added (seconds since the epoch)."""


@dataclass(frozen=True)
class TaskState:
    """What the session's task state holds."""

    todos: tuple[TodoItem, ...] = ()
    keep: tuple[KeepLine, ...] = ()
    updated: float = 0.0

    @property
    def empty(self) -> bool:
        return not self.todos and not self.keep

    def counts(self) -> dict[TodoStatus, int]:
        """How many items are pending, in progress and completed."""
        counts: dict[TodoStatus, int] = dict.fromkeys(TODO_STATUSES, 0)
        for item in self.todos:
            counts[item.status] += 1
        return counts

    def current(self) -> TodoItem | None:
        """The item in progress (the first one, when the model marked several), else ``None``."""
        return next((item for item in self.todos if item.status == "in_progress"), None)

    def to_data(self) -> dict[str, Any]:
        """The state as todos.json holds it (parsed back by :func:`task_state_from_data`)."""
        return {"version": 1, "updated": self.updated,
                "todos": [item.to_dict() for item in self.todos],
                "keep": [{"text": line.text, "added": line.added} for line in self.keep]}

    def to_json(self) -> str:
        return json.dumps(self.to_data(), ensure_ascii=False, indent=1) + "\n"


def _clean(text: str) -> str:
    """One line of visible text: control characters made harmless, runs of whitespace one space."""
    return " ".join(visible(text).split())


def todo_item(content: object, status: object = "pending", active_form: object = None) -> TodoItem:
    """A checked item; raises :class:`TaskStateError` naming what is wrong."""
    if not isinstance(content, str) or not _clean(content):
        raise TaskStateError("each todo needs a non-empty content")
    if status not in TODO_STATUSES:
        raise TaskStateError(f"status must be one of {', '.join(TODO_STATUSES)} (got {status!r})")
    if active_form is not None and not isinstance(active_form, str):
        raise TaskStateError("active_form must be text")
    content, form = _clean(content), _clean(active_form or "")
    for name, value in (("content", content), ("active_form", form)):
        if len(value) > MAX_TODO_CHARS:
            raise TaskStateError(f"a todo's {name} may hold at most {MAX_TODO_CHARS} characters "
                                 f"(one has {len(value)}); split it")
    return TodoItem(content, status, form)


def todo_list(items: Iterable[Mapping[str, Any]]) -> tuple[TodoItem, ...]:
    """Checked items from mappings with pydantic-deep's keys (``activeForm`` accepted too)."""
    todos = tuple(todo_item(item.get("content"), item.get("status", "pending"),
                            item.get("active_form", item.get("activeForm"))) for item in items)
    if len(todos) > MAX_TODOS:
        raise TaskStateError(f"a todo list may hold at most {MAX_TODOS} items (got {len(todos)}); "
                             "merge small steps")
    return todos


def keep_line(text: str, added: float | None = None) -> KeepLine:
    """A checked standing instruction; raises :class:`TaskStateError`."""
    cleaned = _clean(text)
    if not cleaned:
        raise TaskStateError("a standing instruction needs some text: /keep TEXT")
    if len(cleaned) > MAX_KEEP_CHARS:
        raise TaskStateError(f"a standing instruction may hold at most {MAX_KEEP_CHARS} characters "
                             f"(this one has {len(cleaned)})")
    return KeepLine(cleaned, time.time() if added is None else added)


def parse_task_state(raw: bytes) -> TaskState:
    """The state in a todos.json's bytes; raises :class:`TaskStateError` (or ``ValueError``) when unusable."""
    return task_state_from_data(json.loads(raw.decode("utf-8")))


def task_state_from_data(data: object) -> TaskState:
    """The state in a todos.json's parsed JSON (or a restore point's copy of it, see
    :mod:`tui.store.checkpoints_file`); raises :class:`TaskStateError` when unusable."""
    if not isinstance(data, dict):
        raise TaskStateError("todos.json does not hold an object")
    todos_data, keep_data = data.get("todos", []), data.get("keep", [])
    if not isinstance(todos_data, list) or not all(isinstance(item, dict) for item in todos_data):
        raise TaskStateError("todos.json: todos is not a list of items")
    if not isinstance(keep_data, list):
        raise TaskStateError("todos.json: keep is not a list")
    keep: list[KeepLine] = []
    for entry in keep_data[:MAX_KEEP_LINES]:
        text = entry.get("text") if isinstance(entry, dict) else entry
        added = entry.get("added", 0.0) if isinstance(entry, dict) else 0.0
        if not isinstance(text, str):
            raise TaskStateError("todos.json: a kept line is not text")
        keep.append(keep_line(text, float(added) if isinstance(added, (int, float)) else 0.0))
    updated = data.get("updated", 0.0)
    return TaskState(todo_list(todos_data), tuple(keep), float(updated) if isinstance(updated, (int, float)) else 0.0)


@dataclass
class TaskStateFile:
    """``sessions/<id>/todos.json`` of one session: read once, written atomically on every change."""

    path: Path
    read_only: bool = False
    warnings: list[str] = field(default_factory=list)
    """What the user must know about the file (set aside as unreadable, refused as a link)."""
    _state: TaskState | None = None

    @classmethod
    def of(cls, session_dir: Path, *, read_only: bool = False) -> TaskStateFile:
        return cls(session_dir / TASK_STATE_FILE, read_only=read_only)

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    @property
    def state(self) -> TaskState:
        """The state as on disk (read on first use; an empty one when there is no file)."""
        if self._state is None:
            self._state = self._read()
        return self._state

    def _read(self) -> TaskState:
        try:
            descriptor = open_file(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return TaskState()
        except OSError as error:  # a planted link, a directory, no permission: refused, left as it is
            self.warnings.append(f"the task state (todo list and /keep lines) was not read: {error}")
            self.read_only = True  # never replace what could not be read
            return TaskState()
        with os.fdopen(descriptor, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        try:
            if len(raw) > MAX_FILE_BYTES:
                raise TaskStateError(f"larger than {MAX_FILE_BYTES:,} bytes")
            return parse_task_state(raw)
        except (ValueError, UnicodeDecodeError) as error:
            return self._set_aside(error)

    def _set_aside(self, error: Exception) -> TaskState:
        """Keep an unreadable file under a new name and go on empty (the user is told where it is)."""
        if self.read_only:
            self.warnings.append(f"{self.path} is unreadable ({error}); the session shows no todo list")
            return TaskState()
        kept = unused_name(self.path.with_name(f"{TASK_STATE_FILE}.corrupt"))
        try:
            os.replace(self.path, kept)
        except OSError as move_error:
            self.warnings.append(f"{self.path} is unreadable ({error}) and could not be set aside ({move_error})")
            self.read_only = True
            return TaskState()
        self.warnings.append(f"{self.path.name} was unreadable ({error}); kept as {kept.name}, the session goes on "
                             "with an empty todo list and no /keep lines")
        logger.warning("%s unreadable (%s); kept as %s", self.path, error, kept)
        return TaskState()

    def save(self, state: TaskState) -> TaskState:
        """Write ``state`` (stamped now) atomically; ``OSError`` (a refused link among them) when it cannot."""
        if self.read_only:
            raise PermissionError(f"the task state of this session is read-only ({self.path})")
        state = replace(state, updated=time.time())
        write_atomic(self.path, state.to_json())
        self._state = state
        return state

    def adopt(self, state: TaskState) -> None:
        """Use ``state`` (found elsewhere, e.g. in an adopted session's calls) without writing it yet."""
        self._state = state

    def set_todos(self, todos: Sequence[TodoItem]) -> TaskState:
        return self.save(replace(self.state, todos=tuple(todos)))

    def add_keep(self, text: str) -> TaskState:
        """Add a standing instruction (an identical one is not added twice)."""
        line = keep_line(text)
        current = self.state.keep
        if any(existing.text == line.text for existing in current):
            return self.state
        if len(current) >= MAX_KEEP_LINES:
            raise TaskStateError(f"a session keeps at most {MAX_KEEP_LINES} standing instructions; "
                                 "delete one first (/keep lists them)")
        return self.save(replace(self.state, keep=(*current, line)))

    def remove_keep(self, index: int) -> TaskState:
        """Delete the standing instruction at ``index`` (0-based)."""
        current = self.state.keep
        if not 0 <= index < len(current):
            raise TaskStateError(f"there is no standing instruction {index + 1}")
        return self.save(replace(self.state, keep=current[:index] + current[index + 1:]))


def todos_from_calls(calls: Iterable[tuple[str, Mapping[str, Any] | str | None]]) -> tuple[TodoItem, ...] | None:
    """The list the last usable ``write_todos`` call among ``calls`` (tool name, arguments) wrote, or ``None``
    when there is none (how a pydantic-deep session's list is read: it keeps it only in its calls)."""
    found: tuple[TodoItem, ...] | None = None
    for name, args in calls:
        if name != WRITE_TODOS_TOOL:
            continue
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                continue
        items = args.get("todos") if isinstance(args, Mapping) else None
        if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
            continue
        try:
            found = todo_list(items)
        except TaskStateError:
            continue
    return found


def calls_in(messages: Iterable[object]) -> Iterable[tuple[str, Mapping[str, Any] | str | None]]:
    """The tool calls (name, arguments) of pydantic-ai messages, in order (for :func:`todos_from_calls`)."""
    for message in messages:
        for part in getattr(message, "parts", ()):
            if getattr(part, "part_kind", None) == "tool-call":
                yield part.tool_name, part.args
