"""``deep-tui run`` with ``@path`` and project instructions (in process, offline model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli.main import main


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha line\nbeta line\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def _recorded(workdir: Path) -> str:
    sessions = list((workdir / ".deep-tui" / "sessions").iterdir())
    assert len(sessions) == 1
    return (sessions[0] / "messages.json").read_text(encoding="utf-8")


def test_run_attaches_a_mentioned_file_and_records_it(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "summarize @notes.txt please"])
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert "deep-tui: attached notes.txt (21 bytes)" in err
    recorded = _recorded(workdir)
    assert "alpha line\\nbeta line" in recorded and "attached-file" in recorded


def test_run_says_once_that_a_linked_agents_md_is_not_read(workdir: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET TOKEN\n")
    (workdir / "AGENTS.md").symlink_to(secret)
    code = main(["run", "hello"])
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert err.count("AGENTS.md is a link to") == 1 and "not read" in err
    assert "TOP SECRET TOKEN" not in _recorded(workdir)
    assert "TOP SECRET" not in json.dumps(err)
