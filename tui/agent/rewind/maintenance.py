"""Keeping ``<data>/checkpoints/`` bounded: a deleted session's restore points go with it, and
``deep-tui sessions prune`` removes those of sessions deleted by other means and the snapshots nothing uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.agent.rewind.shadow_repo import Deadline, ShadowRepo

PRUNE_TIMEOUT = 300.0


@dataclass(frozen=True)
class PruneReport:
    """What a prune removed."""

    sessions: int
    """Sessions whose restore points were removed."""
    bytes_before: int
    bytes_after: int


def _repo(data_root: Path) -> ShadowRepo | None:
    repo = ShadowRepo(data_root, data_root)
    if not (repo.git_dir / "HEAD").is_file() or repo.unavailable() is not None:
        return None
    return repo


def forget_session(data_root: Path, session_id: str) -> None:
    """Drop ``session_id``'s restore points (its session was deleted) and the snapshots only it used."""
    repo = _repo(data_root)
    if repo is None:
        return
    deadline = Deadline(PRUNE_TIMEOUT)
    if repo.drop_refs(session_id, deadline):
        repo.prune(deadline)


def prune(data_root: Path, live_sessions: set[str]) -> PruneReport:
    """Drop the restore points of every session not in ``live_sessions``, then the unused snapshots. Raises
    :class:`~tui.agent.rewind.shadow_repo.ShadowRepoError`."""
    repo = _repo(data_root)
    if repo is None:
        return PruneReport(0, 0, 0)
    deadline = Deadline(PRUNE_TIMEOUT)
    before = repo.size_bytes()
    out = repo.git(["for-each-ref", "--format=%(refname)", "refs/deep-tui/"], deadline)
    owners = {line.split("/")[2] for line in out.decode("utf-8", "replace").splitlines() if line.count("/") >= 3}
    gone = sorted(owners - live_sessions)
    for session_id in gone:
        repo.drop_refs(session_id, deadline)
    repo.prune(deadline)
    return PruneReport(len(gone), before, repo.size_bytes())
