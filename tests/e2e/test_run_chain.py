"""End to end: ``deep-tui run`` with the offline model on a small window.

Several headless turns read large files; the chain must evict them, compact,
summarize, and still keep every original byte on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

CONFIG = """\
[context]
window = 6000
large_result_tokens = 400
compaction_threshold = 0.5
summarize_threshold = 0.6
keep_recent_fraction = 0.1
protect_recent_tokens = 300
min_savings_tokens = 50
"""


def _deep_tui(workdir: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.pop("DEEP_TUI_MODEL", None)
    env.pop("DEEP_TUI_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args, "--data-dir", str(data), "--workdir", str(workdir)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_eviction_and_summary_keep_every_byte(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(CONFIG, encoding="utf-8")
    originals: dict[str, str] = {}
    for number in range(10):
        name = f"log{number}.txt"
        text = "".join(f"file {number} line {line}: value {number * 1000 + line}\n" for line in range(120))
        (workdir / name).write_text(text, encoding="utf-8")
        originals[name] = text

    stderr_lines: list[str] = []
    first = _deep_tui(workdir, data, "run", "read", "log0.txt")
    assert first.returncode == 0, first.stderr
    stderr_lines += first.stderr.splitlines()
    for number in range(1, 10):
        turn = _deep_tui(workdir, data, "run", "--continue", "read", f"log{number}.txt")
        assert turn.returncode == 0, turn.stderr
        stderr_lines += turn.stderr.splitlines()

    sessions = list((data / "sessions").iterdir())
    assert len(sessions) == 1, "every --continue turn must land in the same session"
    session = sessions[0]

    # Every byte every tool produced is on disk: the saved outputs hold every line of every file read.
    saved = [path.read_text(encoding="utf-8") for path in (data / "large_tool_results").iterdir()]
    for name, text in originals.items():
        assert any(all(line in content for line in text.splitlines()) for content in saved), f"{name} not saved whole"

    # messages.json only grew: all six user prompts, every tool return, and a summary marker.
    messages = ModelMessagesTypeAdapter.validate_json((session / "messages.json").read_bytes())
    raw = (session / "messages.json").read_text(encoding="utf-8")
    for number in range(10):
        assert f"read log{number}.txt" in raw
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart) and p.tool_name == "read_file"]
    assert len(returns) >= 10
    assert "deep_tui_summary" in raw, "no summary was recorded"

    events = [json.loads(line) for line in (session / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds = [event["kind"] for event in events]
    assert "evicted" in kinds
    finished = [event for event in events if event["kind"] == "compaction_finished"]
    assert any(event["strategy"] == "summary" for event in finished), kinds
    assert all(event["tokens_after"] < event["tokens_before"] for event in finished)
    after_compaction = [
        next(later for later in events[index:] if later["kind"] == "usage")
        for index, event in enumerate(events)
        if event["kind"] == "compaction_finished"
    ]
    assert all(event["tokens"] <= event["window"] for event in after_compaction), "context left over the window"

    # Each eviction's file still holds the output it was saved for (no later turn overwrote it).
    evicted = [event for event in events if event["kind"] == "evicted"]
    assert len({event["path"] for event in evicted}) == len(evicted) >= 10
    for order, event in enumerate(evicted):
        content = Path(event["path"]).read_text(encoding="utf-8")
        assert f"file {order} line 0: value {order * 1000}" in content, (order, event["path"])
        assert all(f"file {other} line 0:" not in content for other in range(10) if other != order)

    # run prints one line per compaction event on stderr.
    assert any("evicted" in line for line in stderr_lines)
    assert any("summar" in line for line in stderr_lines)
    assert any("compaction started" in line for line in stderr_lines)
