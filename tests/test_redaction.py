"""Secrets stay secret (issue 20.6): a provider's 401 that echoes the API key puts it nowhere — not on stderr,
in deep-tui.log, messages.json, index.sqlite, a search, a saved output, nor an app notification."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai import models

from tests.support.anthropic_server import AnthropicServerState, anthropic_server
from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.base.console import RedactingStream, redacted_stderr
from tui.base.log_setup import configure_logging
from tui.base.redaction import REDACTED, known_secrets, redact, redact_bytes, register_secret, register_url_secrets
from tui.chain.safe_names import write_output
from tui.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-ant-api03-Leaky0123456789-KEY"


def test_provider_keys_in_the_environment_are_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("MISTRAL_API_KEY", "mistral-0123456789")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://me:p4ssw0rd-long@proxy.example/v1")
    monkeypatch.setenv("SOME_FLAG", "not-a-secret-at-all")
    monkeypatch.setenv("OPENAI_API_KEY", "x")  # too short to be taken for a secret (a local server's placeholder)
    secrets = known_secrets()
    assert {KEY, "mistral-0123456789", "ghp_0123456789abcdef", "p4ssw0rd-long"} <= secrets
    assert "not-a-secret-at-all" not in secrets and "x" not in secrets
    text = f"invalid key {KEY}; token ghp_0123456789abcdef; proxy p4ssw0rd-long; x marks the spot"
    assert redact(text) == (f"invalid key {REDACTED}; token {REDACTED}; proxy {REDACTED}; x marks the spot")


def test_registered_secrets_and_json_escaped_forms_are_redacted() -> None:
    register_secret('header "value" with\\slash 123')
    register_url_secrets("https://user:registered-pass-123@host/")
    line = json.dumps({"error": 'bad header "value" with\\slash 123 and registered-pass-123'}).encode()
    cleaned = redact_bytes(line)
    assert b"slash 123" not in cleaned and b"registered-pass-123" not in cleaned
    assert json.loads(cleaned)["error"] == f"bad {REDACTED} and {REDACTED}"
    assert redact_bytes(b"nothing here") == b"nothing here"


def test_the_log_and_stderr_redact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    path = configure_logging(tmp_path, stderr=True)
    try:
        raise ValueError(f"provider said {KEY}")
    except ValueError:
        logging.getLogger("tui.test").warning("turn failed: %s", KEY, exc_info=True)
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert KEY not in path.read_text() and REDACTED in path.read_text()
    assert KEY not in capsys.readouterr().err
    with redacted_stderr():
        assert isinstance(sys.stderr, RedactingStream)
        print(f"deep-tui: error: {KEY}", file=sys.stderr)
    assert capsys.readouterr().err == f"deep-tui: error: {REDACTED}\n"


def test_a_saved_tool_output_holds_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-0123456789abcdef")
    saved = write_output(tmp_path, "call_1", "OPENAI_API_KEY=sk-proj-0123456789abcdef\n", ".txt")
    assert saved.read_text() == f"OPENAI_API_KEY={REDACTED}\n"


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def _leaks(data: Path, secret: str) -> list[str]:
    return [str(path.relative_to(data)) for path in data.rglob("*")
            if path.is_file() and secret.encode() in path.read_bytes()]


def test_a_401_echoing_the_anthropic_key_leaks_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
    with anthropic_server(AnthropicServerState(api_key="the-key-the-server-wants")) as (url, state):
        env["ANTHROPIC_BASE_URL"] = url
        run = _run(["run", "--data-dir", str(data), "-m", "anthropic:claude-sonnet-5-5", "hello"], env)
    assert state.refused == [f"invalid x-api-key: {KEY}"], "the server did echo the key"
    assert run.returncode == 1
    assert KEY not in run.stderr + run.stdout and REDACTED in run.stderr
    assert (data / "deep-tui.log").exists() and (data / "index.sqlite").exists()
    assert _leaks(data, KEY) == []
    stored = next(data.glob("sessions/*/messages.json")).read_text()
    assert f"invalid x-api-key: {REDACTED}" in stored, "the note still says what went wrong"

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert main(["search", "--data-dir", str(data), KEY]) == 1, "the index does not hold the key"
    assert main(["search", "--data-dir", str(data), "x-api-key"]) == 0
    printed = capsys.readouterr()
    assert KEY not in printed.out + printed.err and "x-api-key" in printed.out


def test_a_401_echoing_the_openai_key_leaks_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    secret = "sk-proj-Leaky-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    state = ChatServerState(error_body="Incorrect API key provided: {key}")
    fail_with(state, Fault(status=401))
    with openai_chat_server(state) as (url, _), models.override_allow_model_requests(True):
        status = main(["run", "--data-dir", str(data), "-m", "openai-chat:gpt-4o", "--base-url", url, "hello"])
    printed = capsys.readouterr()
    assert status == 1
    assert secret not in printed.err + printed.out and f"Incorrect API key provided: {REDACTED}" in printed.err
    assert _leaks(data, secret) == []


async def test_an_app_notification_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.app.app_support import make_app
    from tui.agent.models.choice import choose_model
    from tui.agent.session.factory import RuntimeFactory
    from tui.base.config import Settings
    from tui.base.paths import DataDir

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    work = tmp_path / "work"
    work.mkdir()
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None))
    app = make_app(factory)
    async with app.run_test() as pilot:
        app.notify(f"provider error: {KEY}", title=f"title {KEY}", markup=False)
        await pilot.pause()
        [toast] = list(app._notifications)
        assert KEY not in toast.message and KEY not in toast.title
        assert toast.message == f"provider error: {REDACTED}"
        record = logging.LogRecord("tui.test", logging.WARNING, __file__, 1, "failed: %s", (KEY,), None)
        assert app._log_handler.format(record) == f"failed: {REDACTED}", "`textual console` shows no key"


def test_a_chain_event_holds_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """events.jsonl: a summarizer that failed with the key in its error is recorded without it."""
    from tui.store.events_file import EventLog

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    log = EventLog(tmp_path / "events.jsonl")
    log.append({"kind": "compaction_failed", "reason": f"summarizer: 401 invalid x-api-key: {KEY}"})
    log.close()
    line = (tmp_path / "events.jsonl").read_text()
    assert KEY not in line and json.loads(line)["reason"] == f"summarizer: 401 invalid x-api-key: {REDACTED}"


def test_what_a_turn_shows_of_tools_and_failures_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.agent.turn_events import ToolCallFinished, ToolCallStarted, TurnFailed

    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-shown-0123456789")
    started = ToolCallStarted("c1", "write_file", '{"path": ".env", "content": "KEY=sk-proj-shown-0123456789"}')
    finished = ToolCallFinished("c1", "read_file", "KEY=sk-proj-shown-0123456789", size_chars=30)
    failed = TurnFailed("openai answered HTTP 401: Incorrect API key provided: sk-proj-shown-0123456789")
    assert all("sk-proj-shown" not in text for text in (started.args_json, finished.preview, failed.message))
    assert finished.preview == f"KEY={REDACTED}"
