"""Start-up benchmarks: ``deep-tui --version`` and the app's first usable frame (fresh processes).

deep-tui's modules are byte-compiled first, as an installed deep-tui is (``PYTHONDONTWRITEBYTECODE``
would otherwise make every run compile them again)."""

from __future__ import annotations

import compileall
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


def _first_frame_ms() -> tuple[float, float]:
    """(first frame painted, session opened) in ms from spawning the process."""
    frames, ready = [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as data:
            start = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "first_frame_child.py"), data],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
            )
            assert child.stdout is not None
            first = child.stdout.readline()
            frames.append((time.perf_counter() - start) * 1000)
            second = child.stdout.readline()
            ready.append((time.perf_counter() - start) * 1000)
            _, errors = child.communicate(timeout=30)
            if first.strip() != "FRAME" or second.strip() != "READY":
                raise RuntimeError(f"the app did not start: {errors.strip()[-500:]}")
    return statistics.median(frames), statistics.median(ready)


def main() -> list[BenchResult]:
    compileall.compile_dir(ROOT / "tui", quiet=1)
    frame, ready = _first_frame_ms()
    return [
        result("deep-tui --version", _version_ms(), "ms", 600.0),
        result("first usable frame (new process → screen painted, prompt takes input)", frame, "ms", 600.0),
        result("session open behind it (model, lock, history, agent ready)", ready, "ms", 1500.0),
    ]


if __name__ == "__main__":
    from common import report

    report(main())
