"""Rewinding: which prompts have a restore point, what a restore would change, and the restore itself.

A restore plan compares the working directory now (a fresh snapshot, which is also the restore's own undo
point) with the restore point's tree. A path the restore would change is a **conflict** when it was changed
outside deep-tui since that restore point: between the end of a prompt and the snapshot before the next (or
now). Nothing is written while a conflict has no answer: the user keeps theirs or takes the snapshot's, per
file (``--force``: the snapshot's for all).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tui.agent.rewind.shadow_repo import Deadline, ShadowRepo, ShadowRepoError, TreeChange
from tui.agent.rewind.snapshot import MAX_FILE_BYTES, take_snapshot
from tui.agent.rewind.writer import apply_changes
from tui.chain.events import FilesRestored
from tui.store.checkpoints_file import CheckpointRecord, CheckpointsFile
from tui.text.terminal_text import encodable

logger = logging.getLogger(__name__)

RESTORE_TIMEOUT = 60.0
"""Seconds the git work of one restore (its snapshots, diff and reads) may take."""

RewindMode = Literal["both", "code", "conversation"]
ConflictChoice = Literal["mine", "snapshot"]


class RewindError(Exception):
    """A rewind that cannot be made; one line for the user."""


@dataclass(frozen=True)
class FileStat:
    """One file a prompt changed: lines added and removed (``None``: binary), or how a restore changes it."""

    path: str
    added: int | None
    removed: int | None
    status: Literal["modified", "added", "deleted"] = "modified"

    def label(self) -> str:
        """``+12 −3 src/app.py``; ``binary src/logo.png``; ``new``/``deleted`` noted."""
        counts = "binary" if self.added is None or self.removed is None else f"+{self.added} −{self.removed}"
        suffix = {"added": " (new)", "deleted": " (deleted)"}.get(self.status, "")
        return f"{counts} {self.path}{suffix}"


@dataclass(frozen=True)
class RewindPoint:
    """A restore point as listed: the prompt it comes before and the files that prompt changed."""

    record: CheckpointRecord
    files: tuple[FileStat, ...]

    @property
    def message(self) -> int:
        return self.record.message


@dataclass(frozen=True)
class RestorePlan:
    """What restoring ``point`` would do to the working directory as it is now (``current``)."""

    point: CheckpointRecord
    current: str
    changes: tuple[TreeChange, ...]
    files: tuple[FileStat, ...]
    conflicts: tuple[str, ...]
    """Paths changed outside deep-tui since the restore point, which the restore would change again."""

    def chosen(self, choices: Mapping[str, ConflictChoice], *, force: bool = False) -> tuple[list[TreeChange], list[str]]:
        """The changes to write and the conflicting paths kept as they are. Raises :class:`RewindError` when a
        conflict has no answer (and ``force`` is not given)."""
        unanswered = [path for path in self.conflicts if path not in choices]
        if unanswered and not force:
            raise RewindError(conflict_line(unanswered, self.point.message))
        kept = [path for path in self.conflicts if choices.get(path) == "mine"]
        kept_set = set(kept)
        return [change for change in self.changes if change.path not in kept_set], kept


def conflict_line(paths: Sequence[str], message: int) -> str:
    """One line naming the files changed outside deep-tui since the restore point."""
    from tui.text.terminal_text import visible
    from tui.text.wording import plural

    shown = ", ".join(visible(path) for path in paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"{plural(len(paths), 'file')} changed outside deep-tui since the restore point of message {message} "
            f"({shown}): nothing was written")


@dataclass
class RestoreOutcome:
    """What a restore did."""

    event: FilesRestored
    undo: CheckpointRecord | None
    written: list[str] = field(default_factory=list)


class Rewinder:
    """Lists, plans and applies restores over one working directory's shadow repository."""

    def __init__(self, repo: ShadowRepo, *, timeout: float = RESTORE_TIMEOUT, max_file_bytes: int = MAX_FILE_BYTES):
        self.repo = repo
        self.timeout = timeout
        self.max_file_bytes = max_file_bytes

    def _deadline(self) -> Deadline:
        return Deadline(self.timeout)

    def points(self, records: Sequence[CheckpointRecord], *, newest: int = 100) -> list[RewindPoint]:
        """The ``newest`` restore points, newest first, with the files each prompt changed (blocking: git runs)."""
        deadline = self._deadline()
        listed: list[RewindPoint] = []
        first = max(0, len(records) - newest)
        for position, record in enumerate(records):
            if position < first:
                continue
            end = record.after or (records[position + 1].tree if position + 1 < len(records) else None)
            files: tuple[FileStat, ...] = ()
            if end is not None and self._usable(record):
                files = self._stats(record.tree, end, deadline)
            listed.append(RewindPoint(record, files))
        return listed[::-1]

    def _usable(self, record: CheckpointRecord) -> bool:
        return record.workdir == str(self.repo.workdir)

    def _stats(self, before: str, after: str, deadline: Deadline) -> tuple[FileStat, ...]:
        try:
            counted = self.repo.changes_counted(before, after, deadline)
        except ShadowRepoError:
            return ()
        stats = []
        for change, (added, removed) in counted:
            status: Literal["modified", "added", "deleted"] = "modified"
            if change.before is None:
                status = "added"
            elif change.after is None:
                status = "deleted"
            stats.append(FileStat(change.path, added, removed, status))
        return tuple(stats)

    def plan(self, records: Sequence[CheckpointRecord], message: int) -> RestorePlan:
        """What restoring the files to before ``message`` would change now (blocking: snapshots the workdir)."""
        point = find_point(records, message)
        if not self._usable(point):
            raise RewindError(f"the restore point of message {message} is of {point.workdir}, not of the working "
                              f"directory {self.repo.workdir}: run deep-tui there to restore it")
        unavailable = self.repo.unavailable()
        if unavailable:
            raise RewindError(unavailable)
        deadline = self._deadline()
        try:
            if not self.repo.has_tree(point.tree, deadline):
                raise RewindError(f"the restore point of message {message} is gone from {self.repo.root} "
                                  "(pruned or deleted)")
            current = take_snapshot(self.repo, deadline, max_file_bytes=self.max_file_bytes).tree
            changes = tuple(self.repo.changes(current, point.tree, deadline))
            files = self._stats(current, point.tree, deadline)
            outside = self._changed_outside(records, point, current, deadline)
        except ShadowRepoError as error:
            raise RewindError(f"could not plan the rewind: {error}") from None
        changed = {change.path for change in changes}
        conflicts = tuple(sorted(path for path in outside if path in changed))
        return RestorePlan(point, current, changes, files, conflicts)

    def _changed_outside(self, records: Sequence[CheckpointRecord], point: CheckpointRecord, current: str,
                         deadline: Deadline) -> set[str]:
        """Paths changed while no prompt was running, from ``point`` on: between a prompt's end and the next
        restore point, and from the last prompt's end to now."""
        later = [record for record in records if record.message >= point.message and self._usable(record)]
        paths: set[str] = set()
        for position, record in enumerate(later):
            if record.after is None:
                continue  # its end is unknown (the process stopped mid-prompt): nothing to compare
            following = later[position + 1].tree if position + 1 < len(later) else current
            paths.update(change.path for change in self.repo.changes(record.after, following, deadline))
        return paths

    def preview(self, plan: RestorePlan, paths: Sequence[str] = (), *, max_bytes: int = 200_000) -> str:
        """The unified diff from the files now to what the restore makes them (terminal-safe)."""
        from tui.text.terminal_text import visible

        try:
            text = self.repo.patch(plan.current, plan.point.tree, list(paths), self._deadline(), max_bytes=max_bytes)
        except ShadowRepoError as error:
            return f"(no diff: {error})"
        return "\n".join(visible(line) for line in text.splitlines())

    def apply(self, plan: RestorePlan, *, checkpoints: CheckpointsFile, session_id: str, undo_message: int,
              choices: Mapping[str, ConflictChoice] | None = None, force: bool = False,
              source_session: str | None = None,
              on_undo_point: Callable[[], None] | None = None) -> RestoreOutcome:
        """Restore the files of ``plan`` (blocking). The files as they are now become the restore point of
        ``undo_message`` (the message recording this rewind) in ``checkpoints``, first; then the files are
        written; then the tree they make is recorded as that point's end."""
        changes, kept = plan.chosen(choices or {}, force=force)
        deadline = self._deadline()
        undo = CheckpointRecord(message=undo_message, tree=plan.current, workdir=str(self.repo.workdir),
                                kind="restore", time=time.time(),
                                detail=f"before the rewind to message {plan.point.message}")
        try:
            self.repo.keep(f"{session_id}/{undo_message}", plan.current, deadline)
            checkpoints.add(undo)
        except (OSError, ShadowRepoError) as error:
            raise RewindError(f"could not keep the files as they are now, so the rewind could not be undone: "
                              f"{error}; nothing was written") from None
        if on_undo_point is not None:
            on_undo_point()
        try:
            blobs = self.repo.read_blobs([change.after.blob for change in changes if change.after is not None],
                                         deadline)
        except ShadowRepoError as error:
            raise RewindError(f"could not read the restore point: {error}; nothing was written") from None
        failures = apply_changes(self.repo.workdir, changes, blobs)
        try:
            after = take_snapshot(self.repo, deadline, max_file_bytes=self.max_file_bytes).tree
            self.repo.keep(f"{session_id}/{undo_message}-after", after, deadline)
            checkpoints.finish(undo_message, after)
        except (OSError, ShadowRepoError) as error:  # conflicts are then found against the next snapshot
            logger.warning("the files after the rewind to message %d were not snapshotted: %s",
                           plan.point.message, error)
        written = [change.path for change in changes]
        # a file name need not be UTF-8: what is recorded (events.jsonl, the note) must be writable as UTF-8
        event = FilesRestored(message=plan.point.message, source_session=source_session or session_id,
                              count=len(written), files=tuple(encodable(path) for path in written[:50]),
                              kept=tuple(encodable(path) for path in kept), undo=undo_message,
                              failed=tuple(encodable(line) for line in failures[:20]))
        return RestoreOutcome(event, undo, written)


def find_point(records: Sequence[CheckpointRecord], message: int) -> CheckpointRecord:
    """The restore point of ``message``; :class:`RewindError` naming those there are when it has none."""
    for record in records:
        if record.message == message:
            return record
    if not records:
        raise RewindError("this session has no restore points (no prompt of it changed files)")
    numbers = ", ".join(str(record.message) for record in records[-10:])
    raise RewindError(f"message {message} has no restore point; these messages have one: {numbers}")
