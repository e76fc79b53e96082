"""What the sandbox's protections add to each command (issue 29): the ``.git`` scans before and after it, the
mounts, the socket filter.

A working directory of about 30,000 entries (3,000 directories of 9 files, a git repository at its root and
one nested) under ``/var/tmp``. Timed: ``true`` through :func:`tui.agent.shell.command_run.run_command` (what
the ``execute`` tool and ``!command`` do), against the same ``true`` in a bare bubblewrap sandbox started
directly (``--ro-bind / /``, namespaces, no scan). The figure is the difference of the medians over
:data:`RUNS` alternating runs, once the tree is older than the scan cache's racy window (as a session's mostly
is); target ≤ 100 ms. The first, uncached scan is shown for context.

``python bench/bench_sandbox.py`` runs it alone; ``make bench`` runs it with the rest. Skipped (one line) where
no sandbox can run.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BenchResult, info, result  # noqa: E402

from tui.agent.shell.command_run import run_command  # noqa: E402
from tui.agent.shell.git_guard import RACY_SECONDS, scan_git_entries  # noqa: E402
from tui.agent.shell.sandbox import Sandbox, find_bwrap, probe, sandbox_for  # noqa: E402

RUNS = 15
DIRECTORIES = 3_000
FILES_PER_DIRECTORY = 9
TARGET_MS = 100.0


def _tree(root: Path) -> None:
    for number in range(DIRECTORIES):
        directory = root / f"pkg{number // 100}" / f"mod{number}"
        directory.mkdir(parents=True)
        for index in range(FILES_PER_DIRECTORY):
            (directory / f"f{index}.py").write_bytes(b"x = 1\n")
    for repository in (root, root / "pkg1" / "vendored"):
        repository.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(repository)], check=False, capture_output=True)


async def _alternate(sandbox: Sandbox, bare: list[str]) -> tuple[list[float], list[float]]:
    """Both ways, alternating, in one event loop (as in a session)."""
    await run_command(sandbox, "true", timeout=60)  # the scan cache is filled once, as in a session
    ours: list[float] = []
    plain: list[float] = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await run_command(sandbox, "true", timeout=60)
        ours.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(*bare, stdout=asyncio.subprocess.DEVNULL,
                                                       stderr=asyncio.subprocess.DEVNULL)
        await process.wait()
        plain.append((time.perf_counter() - started) * 1000)
    return ours, plain


def main() -> list[BenchResult]:
    bwrap = find_bwrap()
    failure = "no bwrap" if bwrap is None else probe(str(bwrap), False)
    if failure:
        print(f"bench_sandbox: skipped: {failure}")
        return []
    assert bwrap is not None
    base = Path(tempfile.mkdtemp(prefix="deep-tui-bench-sandbox-", dir="/var/tmp"))
    try:
        work = base / "work"
        work.mkdir()
        _tree(work)
        started = time.perf_counter()
        scan_git_entries(work)
        first_scan_ms = (time.perf_counter() - started) * 1000
        sandbox = sandbox_for(work, [base / "data"], network=False, enabled=True)
        bare = [str(bwrap), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                "--unshare-all", "--die-with-parent", "--", "/bin/sh", "-c", "true"]
        time.sleep(RACY_SECONDS + 0.5)  # a session's tree is mostly older than that: its listings are kept
        ours, plain = asyncio.run(_alternate(sandbox, bare))
        added = statistics.median(ours) - statistics.median(plain)
        return [
            result("sandbox: added per command, 30k-entry workdir", added, "ms", TARGET_MS),
            info("sandbox: a command through deep-tui (true)", statistics.median(ours), "ms"),
            info("sandbox: bare bwrap (true)", statistics.median(plain), "ms"),
            info("sandbox: first .git scan, uncached", first_scan_ms, "ms"),
        ]
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    from common import report

    report(main())
