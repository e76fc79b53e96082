"""Start-up benchmarks: ``deep-tui --version`` and the app's first usable frame (fresh processes)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BenchResult, result

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.pop("DEEP_TUI_MODEL", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def _version_ms() -> float:
    command = [sys.executable, "-m", "tui.cli", "--version"]
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=_env(), cwd=ROOT)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _first_frame_ms() -> float:
    samples = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as data:
            start = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "first_frame_child.py"), data],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
            )
            assert child.stdout is not None
            line = child.stdout.readline()
            elapsed = (time.perf_counter() - start) * 1000
            _, errors = child.communicate(timeout=30)
            if line.strip() != "READY":
                raise RuntimeError(f"the app did not start: {errors.strip()[-500:]}")
            samples.append(elapsed)
    return statistics.median(samples)


def main() -> list[BenchResult]:
    return [
        result("deep-tui --version", _version_ms(), "ms", 600.0),
        result("first usable frame (new process → screen painted)", _first_frame_ms(), "ms", 600.0),
    ]


if __name__ == "__main__":
    from common import report

    report(main())
