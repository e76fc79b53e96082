"""``deep-tui run --output-format json | stream-json`` and ``--input-format stream-json`` (issue 33.1): stdout is
JSON only and parses; a turn with tools, an eviction, a summary, a refusal, an interrupt and a provider error
each show in the objects and in the exit status. The offline model in process; the loopback OpenAI server in a
subprocess for the provider paths."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.cli.main import main
from tui.cli.structured.runner import parse_input_line
from tui.cli.structured.schema import EXIT_REFUSED, SCHEMA_VERSION


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha line\nbeta line\n", encoding="utf-8")
    (work / "big.txt").write_text("\n".join(str(n) for n in range(1, 3001)) + "\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["run", "--model", "offline", *argv])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]  # every stdout line is JSON, or this raises
    return code, lines, err


def results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["type"] == "result"]


def test_json_prints_one_result_object_for_a_turn_with_tools(workdir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_json(capsys, "--output-format", "json", "read", "notes.txt")
    assert code == 0, err
    [result] = lines
    assert result["type"] == "result" and result["version"] == SCHEMA_VERSION
    assert result["exit_reason"] == "success" and result["exit_code"] == 0
    assert "alpha line" in result["answer"] and result["tool_calls"] == 1
    assert result["model"] == "offline" and result["session_id"]
    assert result["usage"]["output_tokens"] > 0 and result["usage"]["window"] > 0
    assert result["cost_usd"] == 0.0 and result["refused"] == [] and result["evictions"] == []
    assert "deep-tui: session" in err  # notices on stderr


def test_stream_json_shows_the_tool_call_and_its_result_as_they_happen(workdir: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_json(capsys, "--output-format", "stream-json", "read", "notes.txt")
    assert code == 0, err
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "session" and kinds[-1] == "result" and kinds.count("result") == 1
    [call] = [line for line in lines if line["type"] == "tool_call"]
    [result] = [line for line in lines if line["type"] == "tool_result"]
    assert call["name"] == "read_file" and call["args"] == {"path": "notes.txt"}
    assert result["id"] == call["id"] and "alpha line" in result["preview"] and result["saved_path"] is None
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("result")
    text = "".join(line["text"] for line in lines if line["type"] == "text")
    assert text == lines[-1]["answer"]
    assert "usage" in kinds


def test_an_eviction_names_the_saved_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_json(capsys, "--output-format", "stream-json", "--context-window", "4000",
                                "read", "big.txt")
    assert code == 0, err
    [eviction] = [line for line in lines if line["type"] == "eviction"]
    [tool_result] = [line for line in lines if line["type"] == "tool_result"]
    saved = Path(eviction["saved_path"])
    assert "3000" in saved.read_text(encoding="utf-8")  # the whole output, byte for byte, on disk
    assert tool_result["saved_path"] == eviction["saved_path"] and tool_result["saved_chars"]
    assert results(lines)[0]["evictions"] == [eviction]


def test_a_refused_write_is_exit_3_and_named(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_json(capsys, "--output-format", "stream-json", "write", "plan.md", "step one")
    assert code == EXIT_REFUSED == 3, err
    assert not (workdir / "plan.md").exists()
    [refused] = [line for line in lines if line["type"] == "tool_refused"]
    assert refused["name"] == "write_file" and "--allow-writes" in refused["reason"]
    [result] = results(lines)
    assert result["exit_reason"] == "refused" and result["exit_code"] == 3
    assert [r["name"] for r in result["refused"]] == ["write_file"]


def test_stream_json_input_drives_a_multi_turn_session_with_a_summary(workdir: Path, capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = [json.dumps({"type": "user", "prompt": f"turn {i} " + " ".join(f"w{i}x{j}" for j in range(250))})
               for i in range(4)]
    stdin = "\n".join([*prompts, "not json", "", json.dumps({"prompt": "read notes.txt"})]) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code, lines, err = run_json(capsys, "--output-format", "stream-json", "--input-format", "stream-json",
                                "--context-window", "4000")
    assert code == 2, err  # the bad line, said on stderr and skipped; nothing worse happened
    assert "deep-tui: stdin line 5: not JSON" in err
    turns = results(lines)
    assert [turn["prompt"].split(" ")[0] for turn in turns] == ["turn"] * 4 + ["read"]
    assert len({turn["session_id"] for turn in turns}) == 1, "one session for every line"
    assert all(turn["exit_reason"] == "success" for turn in turns)
    summaries = [c for turn in turns for c in turn["compactions"] if c["strategy"] == "summary"]
    assert summaries and summaries[0]["tokens_after"] < summaries[0]["tokens_before"]
    assert any(line["type"] == "compaction" and line["phase"] == "started" for line in lines)
    assert "alpha line" in turns[-1]["answer"]


def test_json_output_with_stream_json_input_prints_one_result_per_line(workdir: Path,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"prompt": "hello"}\n{"prompt": "read notes.txt"}\n'))
    code, lines, err = run_json(capsys, "--output-format", "json", "--input-format", "stream-json")
    assert code == 0, err
    assert [line["type"] for line in lines] == ["result", "result"]


@pytest.mark.parametrize("line, problem", [
    ("[1]", "not a JSON object"), ('{"type": "tool"}', "unknown type"), ('{"prompt": 3}', 'no "prompt"'),
    ('{"prompt": "  "}', 'no "prompt"'),
])
def test_bad_input_lines_say_why(line: str, problem: str) -> None:
    error = parse_input_line(line)
    assert isinstance(error, ValueError) and problem in str(error)
    assert parse_input_line('{"type": "user", "prompt": "hi"}') == "hi"


@pytest.mark.parametrize("argv, message", [
    (["--input-format", "stream-json", "--output-format", "json", "hello"], "give no PROMPT"),
    (["--input-format", "stream-json"], "needs --output-format json or stream-json"),
    (["--output-format", "json"], "the prompt is empty"),
])
def test_misuse_is_a_usage_error(workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                 message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}


def _config(data: Path, base_url: str) -> None:
    data.mkdir()
    (data / "config.toml").write_text(f'base_url = "{base_url}"\n[provider]\nretries = 0\n', encoding="utf-8")


def test_a_provider_error_is_exit_1_with_the_error_in_the_result(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with openai_chat_server(ChatServerState()) as (base_url, server):
        fail_with(server, Fault(status=500))
        _config(data, base_url)
        completed = subprocess.run(
            [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "openai-chat:loopback",
             "--output-format", "stream-json", "hello"],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert completed.returncode == 1, completed.stderr
    lines = [json.loads(line) for line in completed.stdout.splitlines()]
    [result] = results(lines)
    assert result["exit_reason"] == "error" and result["exit_code"] == 1
    assert "500" in result["error"] and result["model"] == "openai-chat:loopback"
    assert "Traceback" not in completed.stderr


def test_an_interrupt_ends_the_turn_with_an_interrupted_result_and_130(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with openai_chat_server(ChatServerState(hang_cap=60)) as (base_url, server):
        fail_with(server, Fault(hang=True))
        _config(data, base_url)
        process = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "openai-chat:loopback",
             "--output-format", "stream-json", "hello"],
            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            first = json.loads(process.stdout.readline())
            assert first["type"] == "session"
            deadline = time.monotonic() + 60
            while not server.request_times and time.monotonic() < deadline:  # the turn's request is waiting
                time.sleep(0.02)
            assert server.request_times, "the request never arrived"
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 130, err
    lines = [json.loads(line) for line in out.splitlines()]
    [result] = results(lines)
    assert result["exit_reason"] == "interrupted" and result["signal"] == "SIGINT" and result["exit_code"] == 130
    assert "Traceback" not in err
