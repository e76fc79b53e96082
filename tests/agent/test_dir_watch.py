"""The ``.git`` scan's inotify watches (:mod:`tui.agent.shell.dir_watch`): only what changed is looked at again, and
nothing a change can do is missed — a directory moved, replaced, or the event queue overflowed all fall back to
checking every directory, and so does a scan without inotify."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.agent.shell import dir_watch, git_guard


def tree(root: Path) -> None:
    for path in ("a/b/c", "a/d", "x/y", "x/w"):
        (root / path).mkdir(parents=True)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_guard, "RACY_SECONDS", 0.0)  # every directory counts as settled: all cached


@pytest.fixture
def lstats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the scan ``lstat``-s."""
    calls: list[str] = []
    real = os.lstat

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git_guard.os, "lstat", counting)
    return calls


def scan(root: Path, cache: git_guard.ScanCache) -> list[str]:
    return sorted(os.path.relpath(path, root) for path in git_guard.scan_git_entries(root, cache=cache).found)


@pytest.mark.usefixtures("settled")
def test_an_unchanged_tree_is_not_even_lstated_and_a_change_is_found(tmp_path: Path, lstats: list[str]) -> None:
    tree(tmp_path)
    cache = git_guard.ScanCache()
    assert scan(tmp_path, cache) == []
    assert cache.watch is not None and cache.watch.usable  # Linux: inotify is there
    lstats.clear()
    assert scan(tmp_path, cache) == [] and lstats == []
    (tmp_path / "a" / "b" / "c" / ".git").mkdir()
    assert scan(tmp_path, cache) == ["a/b/c/.git"]
    assert lstats == [str(tmp_path / "a" / "b" / "c")]  # only the directory that changed
    lstats.clear()
    (tmp_path / "a" / "b" / "c" / ".git").rename(tmp_path / "a" / "b" / "c" / "moved")
    assert scan(tmp_path, cache) == []
    assert lstats == [str(tmp_path / "a" / "b" / "c"), str(tmp_path / "a" / "b" / "c" / "moved")]  # and what is new


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("change", ["moved", "replaced", "removed"])
def test_a_directory_moved_replaced_or_removed_is_checked_again_everywhere(tmp_path: Path, lstats: list[str],
                                                                           change: str) -> None:
    tree(tmp_path)
    cache = git_guard.ScanCache()
    scan(tmp_path, cache)
    epoch = cache.watch.epoch if cache.watch is not None else 0
    if change == "moved":  # the watch now stands for another path: the old path gets a repository
        (tmp_path / "a" / "b").rename(tmp_path / "a" / "b2")
        (tmp_path / "a" / "b" / ".git").mkdir(parents=True)
        expected = ["a/b/.git"]
    elif change == "replaced":  # a new directory renamed over a watched one
        (tmp_path / "x" / "new" / ".git").mkdir(parents=True)
        (tmp_path / "x" / "new").rename(tmp_path / "x" / "y")
        expected = ["x/y/.git"]
    else:
        (tmp_path / "x" / "w").rmdir()
        (tmp_path / "x" / "w" / ".git").mkdir(parents=True)
        expected = ["x/w/.git"]
    lstats.clear()
    assert scan(tmp_path, cache) == expected
    assert cache.watch is not None and cache.watch.epoch == epoch + 1  # nothing taken on trust this time
    assert len(lstats) >= 8  # every directory (a moved one's new place too)
    lstats.clear()
    assert scan(tmp_path, cache) == expected and lstats == []  # watched again


@pytest.mark.usefixtures("settled")
def test_an_overflowed_queue_loses_nothing(tmp_path: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 20_000:
        pytest.skip(f"an event queue of {limit} takes too long to overflow")
    tree(tmp_path)
    cache = git_guard.ScanCache()
    scan(tmp_path, cache)
    busy = tmp_path / "x" / "y"
    for number in range(limit + 10):  # more events than the queue holds
        (busy / f"f{number}").touch()
    (tmp_path / "a" / "d" / ".git").mkdir()  # its event is lost with the overflow
    assert scan(tmp_path, cache) == ["a/d/.git"]


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("without", ["no inotify", "too many directories"])
def test_without_watches_every_directory_is_checked(tmp_path: Path, lstats: list[str],
                                                    monkeypatch: pytest.MonkeyPatch, without: str) -> None:
    tree(tmp_path)
    if without == "no inotify":
        monkeypatch.setattr(dir_watch, "_LIBC", None)
    else:
        monkeypatch.setattr(dir_watch, "MAX_WATCHES", 3)
    cache = git_guard.ScanCache()
    assert scan(tmp_path, cache) == []
    assert cache.directory_watch() is None
    lstats.clear()
    (tmp_path / "a" / "b" / "c" / ".git").mkdir()
    assert scan(tmp_path, cache) == ["a/b/c/.git"]
    assert len(lstats) == 8  # every directory, by its lstat, as before watches
