"""The shadow git repository restore points live in: ``<data>/checkpoints/``, never the project's ``.git``.

Why git plumbing (the ``git`` program with ``GIT_DIR`` / ``GIT_WORK_TREE`` / ``GIT_INDEX_FILE``) and not
dulwich: git's own index keeps each file's stat data, so a snapshot after the first one hashes only the files
that changed (a 10,000-file tree costs one ``ls-files`` walk in C, not 10,000 reads in Python); ``.gitignore``
is matched by the engine that defines it; symlinks are stored as links and never followed; and no new
dependency is needed (dulwich would add one, slower on large trees). deep-tui runs git isolated: its own
repository, index and config (no system or global config, no hooks, no filters, no line-ending
conversion, no fsmonitor), every call under a deadline, killed when it passes.

One object store per data directory; one index per working directory (named by a digest of its real path),
so two projects sharing a data directory never see each other's files. Objects are kept alive by refs
under ``refs/deep-tui/<session>/`` (pruned with the session).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

REPO_DIR_NAME = "checkpoints"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

_CONFIG = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "true"),
    ("core.hooksPath", "/dev/null"),
    ("core.quotePath", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("diff.renames", "false"),
    ("submodule.recurse", "false"),
)
_ATTRIBUTES = "# deep-tui: store every file byte for byte (a project's .gitattributes cannot convert or filter)\n" \
              "* -text !eol -filter -ident !working-tree-encoding\n"


class ShadowRepoError(Exception):
    """The shadow repository could not do what was asked (one line, for the user)."""


class SnapshotTimedOut(ShadowRepoError):
    """A git call passed its deadline and was killed."""


@dataclass(frozen=True)
class TreeEntry:
    """One file of a snapshot: its git mode (``100644``, ``100755``, ``120000``) and blob id."""

    mode: str
    blob: str


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two snapshots (``None``: absent on that side)."""

    path: str
    before: TreeEntry | None
    after: TreeEntry | None


class Deadline:
    """A wall-clock budget shared by the git calls of one operation."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._end - time.monotonic()

    def check(self, what: str) -> float:
        left = self.remaining()
        if left <= 0:
            raise SnapshotTimedOut(f"{what} took more than {self.seconds:g} s")
        return left


def git_program() -> str | None:
    """The ``git`` executable, or ``None`` when it is not installed."""
    return shutil.which("git")


class ShadowRepo:
    """The shadow repository of ``workdir`` inside the data directory ``data_root``."""

    def __init__(self, data_root: Path, workdir: Path) -> None:
        self.root = data_root / REPO_DIR_NAME
        self.git_dir = self.root / "repo.git"
        self.workdir = Path(os.path.realpath(workdir))
        self.data_root = Path(os.path.realpath(data_root))
        key = hashlib.sha256(os.fsencode(self.workdir)).hexdigest()[:16]
        self.index_file = self.root / "indexes" / key
        self._lock_file = self.root / "indexes" / f"{key}.lock-deep-tui"
        self._git = git_program()
        self._ensured = False

    # -- set-up -------------------------------------------------------------

    def unavailable(self) -> str | None:
        """Why no snapshot can be made here, or ``None``."""
        if self._git is None:
            return "git is not installed, so deep-tui cannot keep restore points (install git to use /rewind)"
        if not self.workdir.is_dir():
            return f"the working directory {self.workdir} is not a directory"
        return None

    def ensure(self, deadline: Deadline) -> None:
        """Create the repository on first use, and (re)write its config, excludes and attributes (once per
        instance: an open session)."""
        from tui.base.nofollow import make_dirs

        if self._ensured and (self.git_dir / "HEAD").is_file():
            return

        from tui.base.nofollow import check_no_links

        make_dirs(self.index_file.parent)  # refuses a planted link on the way
        check_no_links(self.git_dir)  # a link in its place would point git at another repository
        if not (self.git_dir / "HEAD").is_file():
            if self.git_dir.is_symlink():
                raise ShadowRepoError(f"{self.git_dir} is a symbolic link; deep-tui does not follow it")
            self._run(["init", "--bare", "--quiet", str(self.git_dir)], deadline, with_repo=False)
            for key, value in _CONFIG:
                self._run(["config", key, value], deadline)
        info = self.git_dir / "info"
        make_dirs(info)
        _write_if_changed(info / "attributes", _ATTRIBUTES)
        _write_if_changed(info / "exclude", self._exclude_text())
        self._ensured = True

    def _exclude_text(self) -> str:
        lines = ["# deep-tui: never snapshot the data directory or the project's own .git"]
        try:
            inside = self.data_root.relative_to(self.workdir)
        except ValueError:
            inside = None
        if inside is not None and str(inside) not in ("", "."):
            lines.append("/" + _escape_pattern(inside.as_posix()) + "/")
        project_exclude = self.workdir / ".git" / "info" / "exclude"
        try:
            from tui.base.nofollow import read_text

            text = read_text(project_exclude, errors="replace")[:100_000]
        except OSError:
            text = ""
        if text:
            lines.append("# the project's .git/info/exclude:")
            lines.append(text)
        return "\n".join(lines) + "\n"

    # -- running git ---------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """The environment every git call runs with: this repository only, no user or system config."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update({
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workdir),
            "GIT_INDEX_FILE": str(self.index_file),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "LC_ALL": "C",
        })
        return env

    def _run(self, args: Sequence[str], deadline: Deadline, *, stdin: bytes | None = None,
             with_repo: bool = True, ok_codes: Iterable[int] = (0,)) -> bytes:
        assert self._git is not None
        left = deadline.check("the snapshot")
        env = self.environment() if with_repo else {
            key: value for key, value in os.environ.items() if not key.startswith("GIT_")} | {
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        try:
            done = subprocess.run([self._git, *args], input=stdin, capture_output=True, env=env,
                                  cwd=self.workdir if with_repo else self.root, timeout=left, check=False)
        except subprocess.TimeoutExpired:
            raise SnapshotTimedOut(f"git {args[0]} took more than {deadline.seconds:g} s") from None
        except OSError as error:
            raise ShadowRepoError(f"could not run git: {error.strerror or error}") from None
        if done.returncode not in tuple(ok_codes):
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ShadowRepoError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
        return done.stdout

    def git(self, args: Sequence[str], deadline: Deadline, *, stdin: bytes | None = None) -> bytes:
        """Run ``git ARGS`` on this repository (and its work tree), within ``deadline``."""
        return self._run(args, deadline, stdin=stdin)

    # -- the index lock ----------------------------------------------------------

    def locked(self, deadline: Deadline) -> _IndexLock:
        """Hold this working directory's index (across processes) until the block ends."""
        return _IndexLock(self, deadline)

    # -- reading snapshots ---------------------------------------------------------

    def keep(self, ref: str, tree: str, deadline: Deadline) -> None:
        """Keep ``tree`` alive under ``refs/deep-tui/<ref>``."""
        self.git(["update-ref", f"refs/deep-tui/{ref}", tree], deadline)

    def drop_refs(self, prefix: str, deadline: Deadline) -> int:
        """Delete every ref under ``refs/deep-tui/<prefix>/``; how many there were."""
        out = self.git(["for-each-ref", "--format=%(refname)", f"refs/deep-tui/{prefix}/"], deadline)
        refs = [line for line in out.decode("utf-8", "replace").splitlines() if line]
        if refs:
            commands = "".join(f"delete {ref}\n" for ref in refs).encode()
            self.git(["update-ref", "--stdin"], deadline, stdin=commands)
        return len(refs)

    def prune(self, deadline: Deadline) -> None:
        """Remove the objects no ref keeps any more."""
        self.git(["prune", "--expire=now"], deadline)

    def changes(self, before: str, after: str, deadline: Deadline) -> list[TreeChange]:
        """Every path whose content, mode or presence differs from tree ``before`` to tree ``after``."""
        return [change for change, _counts in self.changes_counted(before, after, deadline, counts=False)]

    def changes_counted(self, before: str, after: str, deadline: Deadline, *, counts: bool = True,
                        ) -> list[tuple[TreeChange, tuple[int | None, int | None]]]:
        """:meth:`changes` with the lines added and removed of each (``None``: a binary file), in one git call."""
        if before == after:
            return []
        extra = ["--numstat"] if counts else []
        out = self.git(["diff-tree", "-r", "-z", "--raw", *extra, "--no-renames", "--no-ext-diff", before, after],
                       deadline)
        fields = out.split(b"\0")
        changes: list[TreeChange] = []
        numbers: dict[str, tuple[int | None, int | None]] = {}
        index = 0
        while index < len(fields):
            field = fields[index]
            if field.startswith(b":") and index + 1 < len(fields):
                old_mode, new_mode, old_blob, new_blob, _status = field[1:].decode().split(" ")
                changes.append(TreeChange(
                    os.fsdecode(fields[index + 1]),
                    None if old_mode == "000000" else TreeEntry(old_mode, old_blob),
                    None if new_mode == "000000" else TreeEntry(new_mode, new_blob)))
                index += 2
                continue
            parts = field.split(b"\t", 2)
            if len(parts) == 3:
                added, removed, path = parts
                numbers[os.fsdecode(path)] = (None if added == b"-" else int(added),
                                              None if removed == b"-" else int(removed))
            index += 1
        return [(change, numbers.get(change.path, (None, None))) for change in changes]

    def patch(self, before: str, after: str, paths: Sequence[str], deadline: Deadline, *,
              max_bytes: int = 200_000) -> str:
        """A unified diff from ``before`` to ``after`` (of ``paths``, all when empty), cut at ``max_bytes``."""
        if before == after:
            return ""
        out = self.git(["diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-color", before, after,
                        "--", *[":(literal)" + path for path in paths]], deadline)
        text = out[:max_bytes].decode("utf-8", "replace")
        if len(out) > max_bytes:
            text += f"\n… (the diff is {len(out):,} bytes; the first {max_bytes:,} are shown)\n"
        return text

    def read_blobs(self, blobs: Sequence[str], deadline: Deadline) -> dict[str, bytes]:
        """The contents of ``blobs`` (one ``cat-file --batch`` call)."""
        unique = list(dict.fromkeys(blobs))
        if not unique:
            return {}
        out = self.git(["cat-file", "--batch"], deadline, stdin="".join(f"{blob}\n" for blob in unique).encode())
        contents: dict[str, bytes] = {}
        position = 0
        for blob in unique:
            end = out.index(b"\n", position)
            header = out[position:end].split(b" ")
            if len(header) != 3:
                raise ShadowRepoError(f"the restore point lacks the object {blob} (was the checkpoints directory "
                                      "pruned or damaged?)")
            size = int(header[2])
            contents[blob] = out[end + 1:end + 1 + size]
            position = end + 1 + size + 1
        return contents

    def has_tree(self, tree: str, deadline: Deadline) -> bool:
        """Whether the repository still holds ``tree``."""
        out = self._run(["cat-file", "-t", tree], deadline, ok_codes=(0, 1, 128))
        return out.strip() == b"tree"

    def size_bytes(self) -> int:
        """The repository's size on disk (objects and indexes)."""
        total = 0
        for directory, _dirs, files in os.walk(self.root):
            for name in files:
                try:
                    total += os.lstat(os.path.join(directory, name)).st_size
                except OSError:
                    continue
        return total


class _IndexLock:
    """An exclusive flock on the working directory's index (two deep-tui processes on one project take turns);
    a stale ``index.lock`` left by a killed git is removed once it is held."""

    def __init__(self, repo: ShadowRepo, deadline: Deadline) -> None:
        self._repo = repo
        self._deadline = deadline
        self._descriptor: int | None = None

    def __enter__(self) -> _IndexLock:
        from tui.base.nofollow import open_file

        descriptor = open_file(self._repo._lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if self._deadline.remaining() <= 0:
                    os.close(descriptor)
                    raise SnapshotTimedOut("another snapshot of this working directory is still being made") from None
                time.sleep(0.02)
        self._descriptor = descriptor
        stale = Path(str(self._repo.index_file) + ".lock")
        if stale.exists() and not stale.is_symlink():
            stale.unlink(missing_ok=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # releases the flock
            self._descriptor = None


def _escape_pattern(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]!#\\ " else ch for ch in text)


def _write_if_changed(path: Path, text: str) -> None:
    from tui.base.atomic import write_atomic
    from tui.base.nofollow import read_text

    try:
        if read_text(path) == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, text)
