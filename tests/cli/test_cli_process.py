"""The command line as separate processes: locks held elsewhere, closed pipes, unusable paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ENV = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "DEEP_TUI_MODEL": "offline"}
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "DEEP_TUI_HOME"):
    ENV.pop(key, None)


def deep_tui(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", "--data-dir", str(work / "data"), *args] if args[0] != "sessions"
                          else [sys.executable, "-m", "tui.cli", "sessions", "--data-dir", str(work / "data"), *args[1:]],
                          cwd=work, env=ENV, capture_output=True, text=True, timeout=60)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\n")
    return tmp_path


def only_session(work: Path) -> str:
    [session] = [p.name for p in (work / "data" / "sessions").iterdir()]
    return session


def test_a_session_held_by_another_process_is_refused_by_run_rename_and_delete(work: Path) -> None:
    assert deep_tui(work, "run", "hello").returncode == 0
    session = only_session(work)
    meta_before = (work / "data" / "sessions" / session / "session.json").read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\nfrom tui.base.paths import DataDir\nfrom tui.store import SessionStore\n"
         f"handle = SessionStore(DataDir(Path({str(work / 'data')!r}))).open({session!r})\n"
         "print('held', flush=True)\ntime.sleep(60)"],
        cwd=work, env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for args in (("run", "--resume", session[:6], "again"), ("sessions", "rename", session, "New title"),
                     ("sessions", "delete", session, "--yes")):
            result = deep_tui(work, *args)
            assert result.returncode == 2, (args, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and session in lines[0] and "open in" in lines[0], (args, result.stderr)
    finally:
        holder.kill()
        holder.wait()
    assert (work / "data" / "sessions" / session / "session.json").read_bytes() == meta_before


def test_a_reader_that_stops_early_loses_nothing(work: Path) -> None:
    prompt = "word " * 5000
    shell = (f"{sys.executable} -m tui.cli --data-dir data run {prompt} | head -c 5; "
             f"echo; echo status=${{PIPESTATUS[0]}}; {sys.executable} -m tui.cli sessions --data-dir data | head -1")
    result = subprocess.run(["bash", "-c", shell], cwd=work, env=ENV, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
    assert "status=0" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith("ID")
    listing = json.loads(deep_tui(work, "sessions", "--json").stdout)
    assert listing[0]["messages"] == 2, "the prompt and the whole answer are recorded"


def test_a_data_dir_that_is_a_file_is_one_line_and_exit_2(work: Path) -> None:
    (work / "data").write_text("not a directory")
    for args in (("run", "hi"), ("sessions",)):
        result = deep_tui(work, *args)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "is a file, not a directory" in result.stderr
    assert (work / "data").read_text() == "not a directory"


def test_an_empty_prompt_is_a_usage_error(work: Path) -> None:
    result = deep_tui(work, "run", "  ")
    assert result.returncode == 2 and "the prompt is empty" in result.stderr
    assert not (work / "data").exists()


def test_a_config_type_error_names_the_file_and_key(work: Path) -> None:
    (work / "bad.toml").write_text("[context]\nwindow = \"big\"\n")
    result = deep_tui(work, "--config", str(work / "bad.toml"), "run", "hi")
    assert result.returncode == 2
    assert "bad.toml: context.window must be a whole number (got 'big')" in result.stderr


def test_resuming_a_corrupt_history_changes_nothing_on_disk(work: Path) -> None:
    assert deep_tui(work, "run", "hello").returncode == 0
    session = only_session(work)
    directory = work / "data" / "sessions" / session
    (directory / "lock").unlink(missing_ok=True)
    (directory / "messages.json").write_text("{ this is not a history")
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    started = time.monotonic()
    result = deep_tui(work, "run", "--resume", session, "again")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert time.monotonic() - started < 30
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before


def test_an_unknown_resume_id_is_said_before_any_screen_is_drawn(work: Path) -> None:
    deep_tui(work, "run", "read notes.txt")  # one real session, so the prefix below matches nothing
    result = deep_tui(work, "--resume", "zzz")
    assert result.returncode == 2
    assert "no session matches 'zzz'" in result.stderr
    assert "\x1b" not in result.stdout + result.stderr, "the full-screen app never started"
