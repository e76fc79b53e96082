"""deep-tui's first frame against the barest Textual app (a header, an input, a footer), in a real terminal.

Both start in a fresh process in a tmux pane of the same size, from the same shell, typed as a user would; each
first frame is the moment its prompt's placeholder is on the screen (read with ``capture-pane`` every few ms, the
same for both). deep-tui starts as a new user's does: a new session, no API key (the offline stand-in), an empty
data dir. Both are byte-compiled first, as installed packages are. Target: deep-tui ≤ 1.25 × the bare app (the
median of the runs' ratios; runs alternated, so a busy moment of the machine weighs on both). Needs ``tmux``; skipped (with a note) without it.

``python bench/bench_first_frame.py --imports``: what deep-tui imports before its first frame (``-X importtime``,
the 25 costliest modules, cumulative), to see what to defer.
"""

from __future__ import annotations

import compileall
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BenchResult, info, result

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7
RATIO_TARGET = 1.25
POLL_S = 0.004
TIMEOUT_S = 30.0
DEEP_TUI_PROMPT = "Type a message"
BARE_PROMPT = "Type a message — bare Textual"


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.pop("DEEP_TUI_MODEL", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


SOCKET = f"deep-tui-bench-frame-{os.getpid()}"
"""A tmux server of this benchmark's own (``tmux -L``): no other tmux user can end it mid-run, and a session kept
open for the whole run stops it from exiting between two panes (a new pane raced the server's exit)."""


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=False, capture_output=True, text=True).stdout


def _first_frame_s(command: list[str], shows: str, name: str, cwd: Path) -> float:
    """Seconds from typing ``command`` in a ready shell to ``shows`` on the pane's screen; the app is then quit."""
    _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "36", "-c", str(cwd), "sh")
    try:
        _tmux("send-keys", "-t", name, "-l", "clear")
        _tmux("send-keys", "-t", name, "Enter")
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in _env().items()
                           if key in ("PYTHONPATH", "PATH", "HOME", "LANG", "TERM"))
        line = f"env {exports} {shlex.join(command)}"
        _tmux("send-keys", "-t", name, "-l", line)
        time.sleep(0.2)  # the shell has drawn the line; only the Enter is timed
        start = time.perf_counter()
        _tmux("send-keys", "-t", name, "Enter")
        while time.perf_counter() - start < TIMEOUT_S:
            if shows in _tmux("capture-pane", "-p", "-t", name):
                shown = time.perf_counter() - start
                break
            time.sleep(POLL_S)
        else:
            raise RuntimeError(f"{command[-1]} showed no frame within {TIMEOUT_S:.0f} s:\n"
                               + _tmux("capture-pane", "-p", "-t", name))
        _tmux("send-keys", "-t", name, "C-q")
        deadline = time.perf_counter() + 15
        while shows in _tmux("capture-pane", "-p", "-t", name) and time.perf_counter() < deadline:
            time.sleep(0.05)
        return shown
    finally:
        _tmux("kill-session", "-t", name)


def _deep_tui(data: Path) -> list[str]:
    return [sys.executable, "-m", "tui.cli", "--data-dir", str(data)]


def _bare() -> list[str]:
    return [sys.executable, str(ROOT / "bench" / "bare_frame_child.py")]


def measure(runs: int = RUNS) -> tuple[float, float, float]:
    """(deep-tui, bare app) median first frame in seconds and the median of the pairs' ratios; runs alternated,
    one warm-up each (disk cache)."""
    deep: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory) / "work"
        work.mkdir()
        _tmux("new-session", "-d", "-s", "keep-alive", "sleep 3600")
        try:
            _alternate(runs, Path(directory), work, deep, bare)
        finally:
            _tmux("kill-server")
    return statistics.median(deep), statistics.median(bare), statistics.median(d / b for d, b in zip(deep, bare, strict=True))


def _alternate(runs: int, directory: Path, work: Path, deep: list[float], bare: list[float]) -> None:
    """Run deep-tui and the bare app in turn, ``runs`` times after one warm-up each, appending their frames."""
    for run in range(runs + 1):
        data = directory / f"data-{run}"  # a new user's: empty
        name = f"bench-frame-{run}"
        deep_s = _first_frame_s(_deep_tui(data), DEEP_TUI_PROMPT, name + "-deep", work)
        bare_s = _first_frame_s(_bare(), BARE_PROMPT, name + "-bare", work)
        if run:
            deep.append(deep_s)
            bare.append(bare_s)


def main() -> list[BenchResult]:
    if shutil.which("tmux") is None:
        print("skipping the first-frame comparison: tmux is not installed", file=sys.stderr)
        return []
    compileall.compile_dir(ROOT / "tui", quiet=1)
    compileall.compile_dir(ROOT / "bench", quiet=1)
    deep, bare, ratio = measure()
    return [
        result("first frame in tmux: deep-tui ÷ a bare Textual app (header, input, footer; median of the pairs)",
               ratio, "×", RATIO_TARGET),
        info("  … deep-tui's first frame (new session, offline model)", deep * 1000, "ms"),
        info("  … the bare Textual app's first frame", bare * 1000, "ms"),
    ]


def imports_before_first_frame() -> None:
    """Print the costliest imports of ``deep-tui`` up to its first frame (cumulative µs, from -X importtime)."""
    with tempfile.TemporaryDirectory() as directory:
        code = "import tui.cli.main, tui.cli.launch, tui.app.run, tui.app.app"  # the path `deep-tui` takes
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=_env(), cwd=directory,
                              capture_output=True, text=True, check=False)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        rows.append((int(cumulative_us), int(self_us), name))
    total = sum(self_us for _, self_us, _ in rows)
    print(f"{total / 1000:.0f} ms of imports in all; the 25 costliest (cumulative ms, own ms):")
    for cumulative, own, name in sorted(rows, reverse=True)[:25]:
        print(f"{cumulative / 1000:8.1f} {own / 1000:8.1f}  {name}")


if __name__ == "__main__":
    from common import report

    if "--imports" in sys.argv:
        imports_before_first_frame()
    else:
        report(main())
