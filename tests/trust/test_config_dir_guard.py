"""The agent's file tools cannot touch the user's deep-tui config directory (settings, trusted projects), even
when the working directory contains it (deep-tui run in $HOME): a model must not trust a project for the user."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.test_tools import call
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir, trust_store_file, user_config_file


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, DataDir, MemoryFile]:
    work = tmp_path / "home"
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(work / ".config" / "deep-tui"))
    user_config_file().parent.mkdir(parents=True)
    user_config_file().write_text('model = "openai-chat:mine"\n', encoding="utf-8")
    trust_store_file().write_text('{"version": 1, "projects": {}}\n', encoding="utf-8")
    data = DataDir(tmp_path / "data")
    return work, data, MemoryFile(data.memory_file())


@pytest.mark.parametrize("path", [".config/deep-tui/trusted-projects.json", ".config/deep-tui/config.toml",
                                  ".config/deep-tui/new.txt", "{config}/trusted-projects.json"])
def test_writes_and_edits_there_are_refused(home, path: str) -> None:  # type: ignore[no-untyped-def]
    path = path.format(config=user_config_file().parent)
    for reply in (call(home, "write_file", path=path, content='{"version": 1, "projects": {"/evil": {}}}'),
                  call(home, "edit_file", path=path, old_text="{}", new_text="{1}"),
                  call(home, "read_file", path=path)):
        assert reply.startswith('{"error":') and "deep-tui config directory" in reply, reply
    assert trust_store_file().read_text(encoding="utf-8") == '{"version": 1, "projects": {}}\n'
    assert not (user_config_file().parent / "new.txt").exists()


def test_listing_and_searching_skip_it(home) -> None:  # type: ignore[no-untyped-def]
    (home[0] / "notes.md").write_text("openai-chat:mine in the workdir\n", encoding="utf-8")
    listing = call(home, "ls", path=".config")
    assert "deep-tui" not in listing
    hits = call(home, "grep", pattern="openai-chat:mine")
    assert "notes.md" in hits and "config.toml" not in hits
