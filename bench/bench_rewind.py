"""Rewind (issue 31): what a prompt's restore point costs on a 10,000-file repository.

"a prompt's wait" is what a prompt that changes files waits for: the snapshot before its first change
(awaited before the tool runs) and its record; the one after its changes is made in the background while the
model reads the results and answers, shown for context with both together; the prompt's own three edits are
made in between. The first snapshot of a working directory reads every file once (shown for context); a restore's
plan and writes are shown too. ``DEEP_TUI_BENCH_REWIND_FILES`` sets the repository's size (default 10,000).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import BenchResult, info, result

from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.rewind.restore import Rewinder
from tui.base.paths import DataDir
from tui.store import SessionStore

PROMPTS = 15


def _repository(root: Path, files: int) -> None:
    per_dir = 100
    line = "def function_{0}(value):\n    return value * {0}\n\n"
    for index in range(files):
        folder = root / f"pkg{index // per_dir:03d}"
        if index % per_dir == 0:
            folder.mkdir(parents=True)
        (folder / f"module_{index % per_dir:03d}.py").write_text("".join(line.format(n) for n in range(12)))
    (root / ".gitignore").write_text("__pycache__/\n*.log\n")


async def _prompts(checkpoints: PromptCheckpoints, work: Path, first_message: int) -> tuple[list[float], list[float]]:
    """(what each prompt waits for: the snapshot before its first change; the work of both snapshots)."""
    samples, work_samples = [], []
    for prompt in range(PROMPTS):
        message = first_message + prompt * 4
        checkpoints.begin(message)
        started = time.perf_counter()
        await checkpoints.before_change()
        before = time.perf_counter() - started
        for edit in range(3):  # the prompt's own changes (not timed)
            target = work / f"pkg{(prompt * 7 + edit) % 100:03d}" / f"module_{edit:03d}.py"
            target.write_text(target.read_text() + f"# prompt {prompt}\n")
        samples.append(before * 1000)
        started = time.perf_counter()
        checkpoints.after_change()  # in a session: while the model reads the results and answers
        await checkpoints.end()
        work_samples.append((before + time.perf_counter() - started) * 1000)
    return samples, work_samples


def main() -> list[BenchResult]:
    files = int(os.environ.get("DEEP_TUI_BENCH_REWIND_FILES", "10000"))
    scratch = Path(tempfile.mkdtemp(prefix="deep-tui-bench-rewind-"))
    try:
        work, data = scratch / "work", DataDir(scratch / "data")
        work.mkdir()
        _repository(work, files)
        handle = SessionStore(data).create()
        warnings: list[str] = []
        checkpoints = PromptCheckpoints(handle, data.root, work, warn=warnings.append, timeout=120.0)
        started = time.perf_counter()
        first = checkpoints.snapshot_now()
        first_ms = (time.perf_counter() - started) * 1000
        if first is None:
            raise RuntimeError(f"the first snapshot failed: {warnings}")
        samples, work_samples = asyncio.run(_prompts(checkpoints, work, 1))
        records = handle.checkpoints.read()
        rewinder = Rewinder(checkpoints.repo)
        started = time.perf_counter()
        plan = rewinder.plan(records, records[len(records) // 2].message)
        plan_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        rewinder.apply(plan, checkpoints=handle.checkpoints, session_id=handle.id, undo_message=10_000, force=True)
        apply_ms = (time.perf_counter() - started) * 1000
        handle.close()
        size_mb = checkpoints.repo.size_bytes() / 1e6
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [
        result(f"rewind: a prompt's wait for its restore point, {files:,} files", statistics.median(samples),
               "ms", 200.0),
        info("rewind: both snapshots of a prompt (the second while the model answers)",
             statistics.median(work_samples), "ms"),
        info(f"rewind: first snapshot of {files:,} files", first_ms, "ms"),
        info(f"rewind: plan a restore ({len(plan.changes)} files, conflicts checked)", plan_ms, "ms"),
        info(f"rewind: restore {len(plan.changes)} files (undo point first)", apply_ms, "ms"),
        info("rewind: checkpoints/ size after the run", size_mb, "MB"),
    ]


if __name__ == "__main__":
    from common import report

    report(main())
