"""Prompts sent with `deep-tui run` belong to the session's prompt history: Up recalls them in the app."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.app.app_support import make_app, make_factory
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.widgets.prompt_input import PromptInput
from tui.cli.main import main
from tui.store.prompt_history import HISTORY_FILE_NAME


def run(data: Path, *argv: str) -> None:
    assert main(["run", "--data-dir", str(data), *argv]) == 0


def test_prompts_sent_with_run_are_recalled_by_up_in_the_app(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    factory = make_factory(tmp_path)
    monkeypatch.chdir(factory.workdir)
    data = tmp_path / "data"
    run(data, "ls")
    run(data, "--continue", "read", "notes.txt")
    [session] = [path.name for path in (data / "sessions").iterdir()]
    run(data, "--resume", session, "--fork", "help")
    capsys.readouterr()
    saved = data / "sessions" / session / HISTORY_FILE_NAME
    assert [json.loads(line) for line in saved.read_text().splitlines()] == ["ls", "read notes.txt"]
    [fork] = [path.name for path in (data / "sessions").iterdir() if path.name != session]
    forked = data / "sessions" / fork / HISTORY_FILE_NAME
    assert [json.loads(line) for line in forked.read_text().splitlines()] == ["ls", "read notes.txt", "help"]

    asyncio.run(recall_in_the_app(factory, session))


async def recall_in_the_app(factory: RuntimeFactory, session: str) -> None:
    app = make_app(factory, SessionRequest(resume=session))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "read notes.txt"
        await pilot.press("up")
        assert prompt.text == "ls"
    await app.runtime.aclose()
