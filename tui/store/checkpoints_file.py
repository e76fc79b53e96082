"""``sessions/<id>/checkpoints.jsonl``: a session's restore points, one JSON line each, appended.

A restore point names the prompt it comes before (its message number, as ``deep-tui search`` numbers
messages), the snapshot of the working directory taken before that prompt's first change (a tree in the
shadow repository, :mod:`tui.agent.rewind`), and, once the prompt ended, the tree it left behind (a line
of its own, ``"after"``: the file is never rewritten). It also carries the session's task state (the todo list
and the ``/keep`` lines) as it was when the prompt started, so that a conversation rewound to before that
prompt gets them back (:meth:`tui.store.session_store.SessionStore.fork`). A fork keeps the restore points of
the messages it copied. A damaged line is skipped (a damaged task state only loses the task state).
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tui.base.nofollow import open_file, read_text
from tui.store.task_state import TaskState, TaskStateError, task_state_from_data

__all__ = ["CHECKPOINTS_FILE_NAME", "CheckpointKind", "CheckpointRecord", "CheckpointsFile", "copy_for_fork",
           "task_state_before"]

logger = logging.getLogger(__name__)

CHECKPOINTS_FILE_NAME = "checkpoints.jsonl"
CheckpointKind = Literal["prompt", "command", "restore"]
_TREE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class CheckpointRecord:
    """One restore point: the files as they were before message ``message`` (1-based)."""

    message: int
    tree: str
    workdir: str
    kind: CheckpointKind = "prompt"
    time: float = 0.0
    after: str | None = None
    """The tree when the prompt ended (``None``: not known, e.g. the process was killed mid-turn)."""
    detail: str = ""
    """For a restore: what it restored (``files of message 7``); for a ``!command``: the command."""
    task: TaskState | None = None
    """The todo list and the ``/keep`` lines when the prompt started (``None``: not recorded — an older point)."""

    def to_line(self) -> str:
        record: dict[str, Any] = {"event": "point", "message": self.message, "tree": self.tree,
                                  "workdir": self.workdir, "kind": self.kind, "time": self.time}
        if self.detail:
            record["detail"] = self.detail
        if self.task is not None:
            record["task"] = self.task.to_data()
        return json.dumps(record, ensure_ascii=False) + "\n"


class CheckpointsFile:
    """Appends and reads one session's restore points."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, record: CheckpointRecord) -> None:
        """Append a restore point (its ``after`` tree comes later, with :meth:`finish`)."""
        self._append(record.to_line())
        if record.after is not None:
            self.finish(record.message, record.after)

    def finish(self, message: int, after: str) -> None:
        """Record the tree the prompt of ``message`` left behind."""
        self._append(json.dumps({"event": "after", "message": message, "tree": after}) + "\n")

    def _append(self, line: str) -> None:
        descriptor = open_file(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # a planted link is refused
        with open(descriptor, "a", encoding="utf-8") as file:
            file.write(line)

    def read(self) -> list[CheckpointRecord]:
        """Every restore point, oldest first (a later one for the same message replaces the earlier)."""
        try:
            text = read_text(self.path, errors="replace")
        except FileNotFoundError:
            return []
        except OSError as error:
            logger.warning("restore points %s unreadable: %s", self.path, error)
            return []
        points: dict[int, CheckpointRecord] = {}
        for line in text.splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash: the others are still good
            if not isinstance(data, dict):
                continue
            message, tree = data.get("message"), data.get("tree")
            if not isinstance(message, int) or isinstance(message, bool) or message < 1:
                continue
            if not isinstance(tree, str) or not _TREE.fullmatch(tree):
                continue
            if data.get("event") == "after":
                if message in points:
                    points[message] = replace(points[message], after=tree)
                continue
            kind = data.get("kind")
            points.pop(message, None)  # re-inserted: the newest point for a message is listed last
            points[message] = CheckpointRecord(
                message=message, tree=tree, workdir=str(data.get("workdir", "")),
                kind=kind if kind in ("prompt", "command", "restore") else "prompt",
                time=float(data["time"]) if isinstance(data.get("time"), (int, float)) else 0.0,
                detail=str(data.get("detail", "")), task=_task_state(data.get("task"), message))
        return sorted(points.values(), key=lambda point: point.message)


def _task_state(data: object, message: int) -> TaskState | None:
    """A restore point's task state, or ``None`` when it has none or it is damaged (the point still restores files)."""
    if data is None:
        return None
    try:
        return task_state_from_data(data)
    except (TaskStateError, ValueError, TypeError) as error:
        logger.warning("the task state of the restore point of message %d is unusable: %s", message, error)
        return None


def task_state_before(path: Path, message: int) -> TaskState | None:
    """The task state recorded with the restore point of ``message`` in the checkpoints file at ``path``
    (``None``: that message has no restore point, or the point no task state)."""
    point = next((point for point in CheckpointsFile(path).read() if point.message == message), None)
    return point.task if point is not None else None


def copy_for_fork(source: Path, destination: Path, upto: int) -> int:
    """Give a fork holding its parent's first ``upto`` messages the restore points of those messages; how many."""
    kept = [point for point in CheckpointsFile(source).read() if point.message <= upto]
    target = CheckpointsFile(destination)
    for point in kept:
        target.add(point)
    return len(kept)
