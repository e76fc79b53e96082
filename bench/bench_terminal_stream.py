"""Streaming in a real terminal: deep-tui in tmux against a bare pydantic-ai agent in the same kind of pane.

``bench_stream.py`` measures the app headless (Textual's test driver: nothing is written to a terminal).
Here the app runs as a user runs it, ``python -m tui.cli --model openai-chat:loopback --base-url URL`` in a
detached tmux session at 120x36, and the answer streams from the loopback OpenAI chat server in this
process: 6,000 word tokens, one per chunk, at 4,000 tok/s. The figure is the wall time from the request
reaching the server to the answer's last word (a unique marker) being visible in the pane, divided by the
same for the floor: a bare ``Agent("openai-chat:loopback").run_stream`` printing each delta to a pane of
the same size (``term_bare_child.py``). Shapes: prose (paragraphs), code (one long fenced block), flat text
(one paragraph).

The pane is read with ``capture-pane`` through one tmux control-mode client (no process started per look),
every ``POLL_SECONDS``: the figure is late by at most that, for both. Both programs are started together and
wait (start-up is not measured); the bare agent streams first, then the app. The machine's 1-minute load
average is reported with each figure, and the CPU time each side used from Enter to the marker on screen (all
its threads, from /proc): on a loaded machine wall time swings from run to run, CPU time much less.

Each shape runs :data:`MIN_REPEATS` times at least (``DEEP_TUI_BENCH_REPEATS`` or ``[repeats]`` for more) and
the figure next to the target is the median ratio; each run's own figures go to stderr as they come.
``python bench/bench_terminal_stream.py [repeats]`` runs it alone; ``make bench`` runs it with the rest.
``DEEP_TUI_BENCH_TERMINAL_SHAPES=prose,code`` runs a subset; ``DEEP_TUI_BENCH_TERMINAL_PROFILE=DIR`` records each
app run with ``py-spy`` (on ``PATH``; collapsed stacks, ``DIR/<shape>-<run>.txt``). Without tmux it is skipped,
saying so.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.openai_server import ChatServerState

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stream import MARKER, tokens_for  # noqa: E402
from common import BenchResult, info, result  # noqa: E402

WORDS = 6_000
RATE = 4_000
"""Tokens (= chunks) per second."""
SIZE = (120, 36)
RATIO_TARGET = 1.25
POLL_SECONDS = 0.005
MODEL = "openai-chat:loopback"
SHAPES = {"prose": "prose", "code": "code", "flat": "paragraph"}
"""Shape name here -> shape name in ``bench_stream.tokens_for``."""
TIMEOUT = 30.0
MIN_REPEATS = 3
"""Runs per shape at the least: one run on a shared machine says little; the figure is their median."""


class ControlClient:
    """A tmux control-mode client attached to a session of its own: runs tmux commands without a process each."""

    def __init__(self) -> None:
        self.session = f"deeptui-bench-ctl-{uuid.uuid4().hex[:8]}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.session, "-x", "80", "-y", "24", "sleep 600"],
                       check=True)
        self._process = subprocess.Popen(["tmux", "-C", "attach", "-t", self.session], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        token = uuid.uuid4().hex
        self._write(f"display-message -p {token}")
        while token not in self._block():  # skip the attach's own reply
            pass

    def _write(self, command: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(command.encode() + b"\n")
        self._process.stdin.flush()

    def _block(self) -> str:
        """The next command reply (between ``%begin`` and ``%end``/``%error``); notifications are skipped."""
        assert self._process.stdout is not None
        lines: list[bytes] = []
        inside = False
        while True:
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError("the tmux control client ended")
            if line.startswith(b"%begin"):
                inside, lines = True, []
            elif line.startswith((b"%end", b"%error")) and inside:
                return b"".join(lines).decode(errors="replace")
            elif inside:
                lines.append(line)

    def command(self, command: str) -> str:
        """Run ``command``; its reply is the block just before the one of a marker command sent after it (so a
        reply lost or split on the way cannot shift every later reply onto the wrong command)."""
        token = uuid.uuid4().hex
        self._write(f"{command}\ndisplay-message -p {token}")
        reply = ""
        while True:
            block = self._block()
            if block.strip() == token:
                return reply
            reply = block

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=10)
        subprocess.run(["tmux", "kill-session", "-t", self.session], check=False, capture_output=True)


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Pane:
    """One detached tmux session at :data:`SIZE` running ``command``."""

    def __init__(self, control: ControlClient, command: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.control = control
        self.name = f"deeptui-bench-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        shell = f"cd {shlex.quote(str(cwd))} && env -i {exports} {shlex.join(command)}; sleep 60"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(SIZE[0]), "-y", str(SIZE[1]), shell],
                       check=True)

    def screen(self) -> str:
        return self.control.command(f"capture-pane -p -t {self.name}")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the processes the pane's shell started (Linux's /proc)."""
        shell = int(self.control.command(f"display-message -p -t {self.name} '#{{pane_pid}}'").strip())
        total, pending = 0, _children(shell)
        while pending:
            pid = pending.pop()
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
            pending.extend(_children(pid))
        return total / os.sysconf("SC_CLK_TCK")

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> float:
        """Poll until ``text`` is visible; returns ``time.monotonic()`` of the first look that saw it."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            now = time.monotonic()
            if text in screen:
                return now
            if now > deadline:
                raise RuntimeError(f"{text!r} not on screen after {timeout:.0f} s; the pane shows:\n{screen}")
            time.sleep(POLL_SECONDS)

    def send(self, *keys: str) -> None:
        self.control.command("send-keys -t " + self.name + " " + " ".join(keys))

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)


def _environment(home: Path, base_url: str) -> dict[str, str]:
    return {"HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "loopback", "OPENAI_BASE_URL": base_url,
            "PYDANTIC_AI_NO_BANNER": "1"}


def _since_request(state: ChatServerState, seen: float) -> float:
    times = state.request_times
    if len(times) != 1:
        raise RuntimeError(f"expected one request to the server, got {len(times)}")
    return seen - times[0]


@dataclass
class Run:
    bare: float
    app: float
    load: float
    bare_cpu: float
    app_cpu: float

    @property
    def ratio(self) -> float:
        return self.app / self.bare


def bare_pane(control: ControlClient, base_url: str, home: Path) -> Pane:
    """A bare agent, started and waiting for Enter."""
    return Pane(control, [sys.executable, str(ROOT / "bench" / "term_bare_child.py"), MODEL], cwd=home,
                env=_environment(home, base_url))


def app_pane(control: ControlClient, base_url: str, home: Path, profile: Path | None) -> Pane:
    """deep-tui as a user starts it (recorded by py-spy into ``profile``)."""
    work = home / "work"
    work.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "tui.cli", "--data-dir", str(home / "data"), "--workdir", str(work),
               "--model", MODEL, "--base-url", base_url]
    if profile is not None:
        command = [shutil.which("py-spy") or "py-spy", "record", "--nonblocking", "--format", "raw", "--rate", "100",
                   "--output", str(profile), "--", *command]
    return Pane(control, command, cwd=work, env=_environment(home, base_url))


def one_run(control: ControlClient, state: ChatServerState, base_url: str, home: Path,
            profile: Path | None) -> Run:
    """Seconds from the request to the marker on screen, and CPU seconds until then, for the bare agent and the
    app. Both start together (start-up is not measured); then the bare agent streams while the app waits, then
    the app streams."""
    bare, app = bare_pane(control, base_url, home), app_pane(control, base_url, home, profile)
    try:
        bare.wait_for("bare agent ready")
        app.wait_for("loopback")
        time.sleep(0.5)  # the app opens its session in a thread after the first frame
        state.request_times.clear()
        cpu = bare.cpu_seconds()
        bare.send("Enter")
        bare_figure = _since_request(state, bare.wait_for(MARKER))
        bare_cpu = bare.cpu_seconds() - cpu
        bare.close()
        state.request_times.clear()
        app.send("-l", "go")
        cpu = app.cpu_seconds()
        app.send("Enter")
        app_figure = _since_request(state, app.wait_for(MARKER))
        app_cpu = app.cpu_seconds() - cpu
        app.send("C-q")
        deadline = time.monotonic() + TIMEOUT
        while profile is not None and not profile.exists() and time.monotonic() < deadline:
            time.sleep(0.2)  # py-spy writes its record once the app has quit
        return Run(bare_figure, app_figure, os.getloadavg()[0], bare_cpu, app_cpu)
    finally:
        bare.close()
        app.close()


def _shapes() -> list[str]:
    names = [name.strip() for name in os.environ.get("DEEP_TUI_BENCH_TERMINAL_SHAPES", "").split(",") if name.strip()]
    unknown = set(names) - set(SHAPES)
    if unknown:
        raise SystemExit(f"DEEP_TUI_BENCH_TERMINAL_SHAPES: unknown {', '.join(sorted(unknown))} "
                         f"(choose from {', '.join(SHAPES)})")
    return names or list(SHAPES)


def main(repeats: int | None = None) -> list[BenchResult]:
    if shutil.which("tmux") is None:
        print("skipping the real-terminal streaming benchmark: tmux is not installed", file=sys.stderr)
        return []
    from tests.support.openai_server import ChatServerState, openai_chat_server

    repeats = max(MIN_REPEATS, repeats or int(os.environ.get("DEEP_TUI_BENCH_REPEATS", str(MIN_REPEATS))))
    profile_dir = Path(os.environ["DEEP_TUI_BENCH_TERMINAL_PROFILE"]) if os.environ.get(
        "DEEP_TUI_BENCH_TERMINAL_PROFILE") else None
    figures: list[BenchResult] = []
    control = ControlClient()
    try:
        for shape in _shapes():
            state = ChatServerState(content_chunks=tokens_for(SHAPES[shape], WORDS), chunks_per_second=RATE)
            runs: list[Run] = []
            with openai_chat_server(state) as (base_url, _), tempfile.TemporaryDirectory() as directory:
                for number in range(repeats):
                    home = Path(directory) / str(number)
                    home.mkdir()
                    run = one_run(control, state, base_url, home,
                                  profile_dir / f"{shape}-{number + 1}.txt" if profile_dir else None)
                    runs.append(run)
                    print(f"   {shape} run {number + 1}: app {run.app:.2f} s, bare {run.bare:.2f} s, ratio "
                          f"{run.ratio:.2f}; CPU app {run.app_cpu:.2f} s, bare {run.bare_cpu:.2f} s; load {run.load:.1f}",
                          file=sys.stderr, flush=True)
            load = statistics.median(run.load for run in runs)
            figures.append(result(f"terminal stream {shape}, {WORDS:,} words at {RATE:,} tok/s, tmux "
                                  f"{SIZE[0]}x{SIZE[1]}: on screen / bare agent, median of {len(runs)} "
                                  f"(load {load:.1f})",
                                  statistics.median(run.ratio for run in runs), "x", RATIO_TARGET))
            figures.append(info(f"  last word on screen after (bare agent: "
                                f"{statistics.median(run.bare for run in runs):.2f} s)",
                                statistics.median(run.app for run in runs), "s"))
            figures.append(info(f"  CPU until then: app / bare agent (bare agent: "
                                f"{statistics.median(run.bare_cpu for run in runs):.2f} s)",
                                statistics.median(run.app_cpu / run.bare_cpu for run in runs), "x"))
    finally:
        control.close()
    return figures


if __name__ == "__main__":
    from common import report

    report(main(int(sys.argv[1]) if len(sys.argv) > 1 else None))
