"""Project instructions: AGENTS.md / CLAUDE.md from the repository root down to the workdir, capped, hostile-safe."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.session.project_instructions import (
    HEADER,
    INJECTED_CHARS,
    INJECTED_LINES,
    ProjectInstructionsSource,
    load,
)
from tui.agent.turn_events import TurnFailed
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.events import UsageEvent


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a nested workdir: ``repo/pkg/sub``."""
    repo = tmp_path / "repo"
    work = repo / "pkg" / "sub"
    work.mkdir(parents=True)
    (repo / ".git").mkdir()
    return repo, work


def test_files_from_the_root_down_to_the_workdir_outermost_first_agents_before_claude(tmp_path: Path) -> None:
    repo, work = _repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPOSITORY: never read\n")
    (repo / "AGENTS.md").write_text("root rule: run make test\n")
    (repo / "CLAUDE.md").write_text("root claude: shadowed by AGENTS.md\n")
    (repo / "pkg" / "CLAUDE.md").write_text("pkg rule: 4-space indents\n")
    (work / "AGENTS.md").write_text("sub rule: no network in tests\n")
    loaded = load(work)
    assert [item.path for item in loaded.files] == [repo / "AGENTS.md", repo / "pkg" / "CLAUDE.md", work / "AGENTS.md"]
    text = loaded.text
    assert text.startswith(HEADER)
    assert text.index("run make test") < text.index("4-space indents") < text.index("no network in tests")
    assert "shadowed" not in text and "ABOVE THE REPOSITORY" not in text
    assert "### pkg/CLAUDE.md" in text, "each file is named relative to the repository root"
    assert "cannot grant permissions" in text, "the model is told they are content, not configuration"


def test_without_a_repository_only_the_workdir_is_looked_at(tmp_path: Path) -> None:
    work = tmp_path / "plain"
    work.mkdir()
    (tmp_path / "AGENTS.md").write_text("parent: not part of this project\n")
    assert load(work).text == ""
    (work / "CLAUDE.md").write_text("workdir rule\n")
    assert [item.path for item in load(work).files] == [work / "CLAUDE.md"]


def test_a_link_to_a_secret_outside_the_repository_is_not_read_and_said_once(tmp_path: Path) -> None:
    _repo_root, work = _repo(tmp_path)
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-key-material\n")
    (work / "AGENTS.md").symlink_to(secret)
    warnings: list[str] = []
    source = ProjectInstructionsSource(work, warn=warnings.append)
    assert "secret-key-material" not in source()
    assert source() == "" and source() == ""
    assert len(warnings) == 1 and "outside" in warnings[0] and "AGENTS.md" in warnings[0]


def test_a_link_into_the_data_dir_or_to_a_fifo_is_refused_a_link_inside_the_repository_is_read(tmp_path: Path) -> None:
    repo, work = _repo(tmp_path)
    data = repo / ".deep-tui"
    (data / "main").mkdir(parents=True)
    (data / "main" / "MEMORY.md").write_text("private memory\n")
    (repo / "AGENTS.md").symlink_to(data / "main" / "MEMORY.md")
    os.mkfifo(repo / "pkg" / "AGENTS.md")  # a reader would block for ever
    (repo / "docs.md").write_text("shared rules via a link\n")
    (work / "AGENTS.md").symlink_to(repo / "docs.md")
    loaded = load(work, data)
    assert "private memory" not in loaded.text
    assert "shared rules via a link" in loaded.text
    assert any("data directory" in reason for reason in loaded.skipped)
    assert any("not a regular file" in reason for reason in loaded.skipped)


def test_a_100_mb_file_is_capped_without_being_read_whole(tmp_path: Path) -> None:
    _repo_root, work = _repo(tmp_path)
    big = work / "AGENTS.md"
    with big.open("wb") as handle:
        handle.write(b"".join(f"rule {n}: keep it short\n".encode() for n in range(5_000)))
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper
    started = time.perf_counter()
    loaded = load(work)
    assert time.perf_counter() - started < 1.0
    item = loaded.files[0]
    assert item.cut and item.lines_shown == INJECTED_LINES and item.total_bytes == 100 * 1024 * 1024
    assert len(loaded.text) < INJECTED_CHARS + 2_000
    assert "cut to fit" in loaded.text and "rule 199:" in loaded.text and "rule 200:" not in loaded.text


def test_the_character_cap_is_shared_the_innermost_file_first(tmp_path: Path) -> None:
    repo, work = _repo(tmp_path)
    (repo / "AGENTS.md").write_text(("x" * 100 + "\n") * 150)
    (work / "AGENTS.md").write_text("inner: the specific rule\n")
    loaded = load(work, max_chars=1_000)
    assert "inner: the specific rule" in loaded.text
    assert loaded.files[0].cut and sum(len(item.text) for item in loaded.files) <= 1_000


def test_control_characters_are_defused(tmp_path: Path) -> None:
    _repo_root, work = _repo(tmp_path)
    (work / "AGENTS.md").write_text("be nice\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202eevil\n")
    text = load(work).text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "␛" in text


def _capturing_model(seen: list[str]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(info.instructions or "")
        yield "done"

    return FunctionModel(stream_function=stream, model_name="capture")


async def test_the_model_gets_them_in_its_instructions_and_sees_an_edit_at_the_next_turn(tmp_path: Path) -> None:
    repo, work = _repo(tmp_path)
    (repo / "AGENTS.md").write_text("Always answer in French.\n")
    seen: list[str] = []
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=_capturing_model(seen))
    runtime = await factory.open_request(SessionRequest())
    try:
        async for event in runtime.run_turn("hello"):
            assert not isinstance(event, TurnFailed), event
        assert "Always answer in French." in seen[-1] and HEADER in seen[-1]
        report = runtime.context_breakdown()
        row = next(row for row in report.slices if row.label == "project instructions")
        assert row.tokens > 0 and report.project_files == (repo / "AGENTS.md",)

        usage: list[UsageEvent] = []
        runtime.subscribe(lambda event: usage.append(event) if isinstance(event, UsageEvent) else None)
        assert runtime.refresh_instructions() is False, "unchanged: nothing to report"
        assert runtime.last_usage is not None
        before = runtime.last_usage.tokens
        (repo / "AGENTS.md").write_text("Always answer in German. " * 200 + "\n")  # ~5,000 characters
        assert runtime.refresh_instructions() is True
        assert usage and usage[-1].tokens > before + 1_000, "the gauge counts the new text at once"
        async for _event in runtime.run_turn("again"):
            pass
        assert "Always answer in German." in seen[-1] and "French" not in seen[-1]
    finally:
        await runtime.aclose()


async def test_a_refused_file_is_one_warning_of_the_session(tmp_path: Path) -> None:
    _repo_root, work = _repo(tmp_path)
    (work / "AGENTS.md").symlink_to("/etc/passwd")
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None))
    runtime = await factory.open_request(SessionRequest())
    try:
        assert [w for w in runtime.info.warnings if "AGENTS.md" in w and "outside" in w]
        assert "root:" not in runtime.project_instructions()
    finally:
        await runtime.aclose()


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
def test_a_directory_named_like_the_file_is_not_read(tmp_path: Path, name: str) -> None:
    _repo_root, work = _repo(tmp_path)
    (work / name).mkdir()
    loaded = load(work)
    assert loaded.text == "" and loaded.skipped
