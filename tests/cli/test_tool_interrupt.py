"""Issue 20.4 from the command line: Ctrl+C (SIGINT) stops `deep-tui run` within 1 s while grep is running.

Before, a grep stuck in Python's regex engine held the event loop, so SIGINT was never handled; only kill -9
stopped it. The slow grep here is a real one over a 64 GB sparse log, its bytes bound lifted in the child.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

ENV = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "DEEP_TUI_MODEL": "offline"}
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "DEEP_TUI_HOME"):
    ENV.pop(key, None)

CHILD = ("import sys\n"
         "from tui.agent.tools import text_search\n"
         "text_search.MAX_SCAN_BYTES = 1 << 50\n"
         "from tui.cli.main import main\n"
         "sys.exit(main())\n")


def read_stderr_until(process: subprocess.Popen[bytes], marker: bytes, timeout: float) -> bytes:
    assert process.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or process.poll() is not None:
            raise AssertionError(f"{marker!r} never came; stderr so far: {seen.decode(errors='replace')}")
        if selector.select(left):
            seen += os.read(process.stderr.fileno(), 65536)
    return seen


def test_sigint_during_a_slow_grep_exits_130_within_a_second(tmp_path: Path) -> None:
    with (tmp_path / "huge.log").open("wb") as log:
        log.write(b"plain text\n" * 2_000)
        log.truncate(64 * 1024**3)
    process = subprocess.Popen([sys.executable, "-c", CHILD, "--data-dir", str(tmp_path / "data"), "run",
                                "grep needle"], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        seen = read_stderr_until(process, b"deep-tui: tool grep(", timeout=60)
        time.sleep(0.5)  # the grep is deep in the sparse part now
        assert process.poll() is None, "grep ended by itself: the test would prove nothing"
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=10)
        elapsed = time.monotonic() - interrupted
        assert process.stderr is not None
        seen += process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert status == 130, seen.decode(errors="replace")
    assert elapsed < 1.0, f"exited {elapsed:.2f} s after SIGINT"
    assert b"deep-tui: interrupted" in seen
