"""``deep-tui --resume`` of a long session: time from launching the process until the session's last
message is on the screen of a real terminal (tmux), for 1,000 and 10,000 messages.

The app draws the tail of ``messages.json`` (read from the raw JSON) in its first frame, before
pydantic-ai has loaded; the time until the session is open behind it is printed for context, and so is
the CPU time the process had used when the last message showed (``/proc``; it varies less than wall
time on a shared machine). deep-tui's modules are byte-compiled first, as an installed deep-tui is
(``PYTHONDONTWRITEBYTECODE`` would otherwise make every run compile them again), and one run is made
before the timed ones. Needs ``tmux``; skipped (with a note) without it.
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
RUNS = 5
TIMEOUT_S = 30.0
POLL_S = 0.005
OPENING = "opening the session"
FIRST_FRAME = "Type a message"
"""The prompt's placeholder: the screen is painted and takes input."""


def make_session(data: Path, count: int) -> tuple[str, str]:
    """A ``count``-message session (prompts, Markdown answers, tool calls with results) in ``data``;
    returns its id and a text only its last message holds."""
    sys.path.insert(0, str(ROOT))
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

    from tui.base.paths import DataDir
    from tui.store.session_store import SessionStore

    handle = SessionStore(DataDir(data)).create(model="offline")
    messages: list[ModelRequest | ModelResponse] = []
    turn = 0
    while len(messages) < count - 2:
        call_id = f"call-{turn}"
        messages += [
            ModelRequest(parts=[UserPromptPart(f"question {turn}: what does module {turn} do? " * 3)]),
            ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/module_{turn}.py"}, tool_call_id=call_id)]),
            ModelRequest(parts=[ToolReturnPart("read_file", f"def f_{turn}():\n    return {turn}\n" * 20,
                                               tool_call_id=call_id)]),
            ModelResponse(parts=[TextPart(f"Module {turn} defines **f_{turn}**, which returns `{turn}`.\n\n"
                                          + "- it is small\n- it is pure\n" * 3)]),
        ]
        turn += 1
    messages = messages[: count - 2]
    marker = f"the last answer, number {count}"
    messages += [ModelRequest(parts=[UserPromptPart("and finally?")]),
                 ModelResponse(parts=[TextPart(f"That is {marker}.")])]
    handle.append_messages(messages)
    handle.close()
    return handle.id, marker


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.pop("DEEP_TUI_MODEL", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=False, capture_output=True, text=True).stdout


def _app_cpu_seconds(name: str) -> float | None:
    """User + system CPU time so far of the deep-tui process in tmux session ``name`` (all its threads);
    None when it cannot be read (no /proc)."""
    pids = [_tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip()]
    for _ in range(3):  # the pane's shell and `env` usually exec it; else it is a child
        pid = pids.pop(0) if pids else ""
        try:
            if b"tui.cli" in Path(f"/proc/{pid}/cmdline").read_bytes():
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            pids += Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except (OSError, IndexError, ValueError):
            return None
    return None


def resume_once(data: Path, session_id: str, marker: str, name: str) -> tuple[float, float, float, float | None]:
    """(first frame, last message on screen, session open, CPU time when the last message showed) in seconds
    from launching ``deep-tui --resume``."""
    command = " ".join(shlex.quote(part) for part in (
        sys.executable, "-m", "tui.cli", "--data-dir", str(data), "--model", "offline", "--resume", session_id))
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in _env().items() if key in ("PYTHONPATH", "PATH"))
    start = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(ROOT),
                    f"env {env} {command}"], check=True)
    frame = shown = opened = cpu = None
    try:
        while time.perf_counter() - start < TIMEOUT_S and opened is None:
            screen = _tmux("capture-pane", "-p", "-t", name)
            now = time.perf_counter() - start
            if frame is None and FIRST_FRAME in screen:
                frame = now
            if shown is None and marker in screen:
                shown = now
                cpu = _app_cpu_seconds(name)
            if shown is not None and OPENING not in screen:  # the title bar says so until the session is open
                opened = now
            time.sleep(POLL_S)
        if frame is None or shown is None or opened is None:
            raise RuntimeError(f"resume did not show its last message within {TIMEOUT_S:.0f} s:\n"
                               + _tmux("capture-pane", "-p", "-t", name))
        _tmux("send-keys", "-t", name, "C-q")
        deadline = time.perf_counter() + 10
        while name in _tmux("list-sessions", "-F", "#{session_name}").split() and time.perf_counter() < deadline:
            time.sleep(0.05)
    finally:
        _tmux("kill-session", "-t", name)
    return frame, shown, opened, cpu


def main() -> list[BenchResult]:
    if shutil.which("tmux") is None:
        print("skipping the resume benchmark: tmux is not installed", file=sys.stderr)
        return []
    compileall.compile_dir(ROOT / "tui", quiet=1)
    figures: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as directory:
        data = Path(directory) / "data"
        for count in (1_000, 10_000):
            session_id, marker = make_session(data, count)
            resume_once(data, session_id, marker, f"bench-resume-{os.getpid()}-warm")  # disk cache, not timed
            samples = [resume_once(data, session_id, marker, f"bench-resume-{os.getpid()}-{run}")
                       for run in range(RUNS)]
            frame, shown, opened = (statistics.median(sample[part] for sample in samples) * 1000 for part in range(3))
            cpu_samples = [sample[3] for sample in samples if sample[3] is not None]
            figures.append(result(f"deep-tui --resume a {count:,}-message session: last message visible (tmux)",
                                  shown, "ms", 600.0))
            figures.append(info(f"  … its first frame (prompt painted) in the same runs ({count:,} messages)",
                                frame, "ms"))
            figures.append(info(f"  … the session open behind it ({count:,} messages)", opened, "ms"))
            if cpu_samples:
                figures.append(info(f"  … CPU time used when the last message showed ({count:,} messages)",
                                    statistics.median(cpu_samples) * 1000, "ms"))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
