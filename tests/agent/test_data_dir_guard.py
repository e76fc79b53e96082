"""The agent's file tools cannot touch deep-tui's own data (issue 8, item 1; item 11's ls and file names).

The data directory holds config.toml (a new ``base_url`` there would send the user's key anywhere),
every session's messages.json, MEMORY.md, the index and the log. The file tools refuse to write,
edit, list or search it — even the default ``./.deep-tui`` inside the working directory, and when it
is reached through a symlink, ``..`` or an absolute path. The one thing they may read there is a
saved output the chain pointed to.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.agent.test_tools import call
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.tools.memory import MemoryFile
from tui.agent.turn_events import ToolCallFinished, TurnFinished
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir

Env = tuple[Path, DataDir, MemoryFile]
CONFIG = 'model = "openai:gpt-4.1"\n'
OTHER_SESSION = "abcdefabcdef"


def _fill(data: DataDir) -> None:
    data.root.mkdir(parents=True, exist_ok=True)
    data.config_file.write_text(CONFIG + "# needle in config\n", encoding="utf-8")
    other = data.session_dir(OTHER_SESSION)
    other.mkdir(parents=True)
    (other / "messages.json").write_text('[{"needle": 1}]', encoding="utf-8")
    data.memory_file().parent.mkdir(parents=True)
    data.memory_file().write_text("- needle remembered\n", encoding="utf-8")
    (data.root / "index.sqlite").write_bytes(b"SQLite needle")
    (data.root / "deep-tui.log").write_text("needle logged\n", encoding="utf-8")


@pytest.fixture
def inside(tmp_path: Path) -> Env:
    """The default layout: the data directory is ``./.deep-tui`` inside the working directory."""
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(work / ".deep-tui")
    _fill(data)
    (work / "notes.md").write_text("needle in the workdir\n", encoding="utf-8")
    return work, data, MemoryFile(data.memory_file())


@pytest.fixture
def beside(tmp_path: Path) -> Env:
    """``--data-dir`` next to the working directory (reachable with ``..``)."""
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(tmp_path / "data")
    _fill(data)
    return work, data, MemoryFile(data.memory_file())


def refused(reply: str) -> bool:
    """Whether a tool answered with an error (a ``ToolFailed`` reaches the model as ``{"error": …}``)."""
    return reply.startswith('{"error":')


def _snapshot(data: DataDir) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(data.root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("path", [
    ".deep-tui/config.toml",
    "./sub/../.deep-tui/config.toml",
    "{data}/config.toml",
    f".deep-tui/sessions/{OTHER_SESSION}/messages.json",
    ".deep-tui/main/MEMORY.md",
    ".deep-tui/index.sqlite",
    ".deep-tui/new-file.txt",
    ".deep-tui",
])
def test_writes_and_edits_into_the_data_dir_are_refused(inside: Env, path: str) -> None:
    _work, data, _ = inside
    path = path.format(data=data.root)
    before = _snapshot(data)
    written = call(inside, "write_file", path=path, content="[]")
    edited = call(inside, "edit_file", path=path, old_text="needle", new_text="pin")
    for reply in (written, edited):
        assert refused(reply) and "deep-tui's data directory" in reply, reply
    assert _snapshot(data) == before


def test_config_and_another_session_are_untouched_from_beside(beside: Env) -> None:
    _work, data, _ = beside
    for path in ("../data/config.toml", str(data.config_file)):
        reply = call(beside, "write_file", path=path, content='base_url = "http://attacker.example"\n')
        assert refused(reply) and "data directory" in reply
    reply = call(beside, "write_file", path=f"../data/sessions/{OTHER_SESSION}/messages.json", content="[]")
    assert refused(reply)
    assert data.config_file.read_text(encoding="utf-8").startswith(CONFIG)
    assert (data.session_dir(OTHER_SESSION) / "messages.json").read_text(encoding="utf-8") == '[{"needle": 1}]'


@pytest.mark.parametrize("path", ["config.toml", "main/MEMORY.md", "index.sqlite", "deep-tui.log",
                                  f"sessions/{OTHER_SESSION}/messages.json"])
def test_reading_deep_tuis_own_files_is_refused(beside: Env, path: str) -> None:
    data = beside[1]
    reply = call(beside, "read_file", path=str(data.root / path))
    assert refused(reply) and "needle" not in reply


def test_ls_glob_and_grep_of_the_workdir_skip_the_data_dir(inside: Env) -> None:
    listing = call(inside, "ls", path=".")
    assert ".deep-tui" not in listing and "notes.md" in listing
    found = call(inside, "glob", pattern="**/*")
    assert found.strip() == "notes.md"
    hits = call(inside, "grep", pattern="needle")
    assert hits.strip() == "notes.md:1: needle in the workdir"
    for tool, args in (("ls", {"path": ".deep-tui"}), ("grep", {"pattern": "needle", "path": ".deep-tui"}),
                       ("glob", {"pattern": "*", "path": ".deep-tui/sessions"})):
        reply = call(inside, tool, **args)
        assert refused(reply) and "needle" not in reply and OTHER_SESSION not in reply


def test_a_symlink_into_the_data_dir_is_refused(beside: Env) -> None:
    work, data, _ = beside
    os.symlink(data.root, work / "innocent")
    os.symlink(data.config_file, work / "settings.toml")
    before = _snapshot(data)
    assert refused(call(beside, "write_file", path="innocent/config.toml", content="x"))
    assert refused(call(beside, "write_file", path="settings.toml", content="x"))
    assert refused(call(beside, "read_file", path="settings.toml"))
    assert refused(call(beside, "ls", path="innocent"))
    assert "innocent" not in call(beside, "ls", path=".")
    assert call(beside, "grep", pattern="needle") == "no matches for 'needle'"
    assert _snapshot(data) == before


def test_a_saved_output_is_readable_but_not_writable(beside: Env) -> None:
    data = beside[1]
    saved = data.large_results_dir / "call-x.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("evicted content\n", encoding="utf-8")
    assert "evicted content" in call(beside, "read_file", path=str(saved))
    assert refused(call(beside, "write_file", path=str(saved), content="forged"))
    assert refused(call(beside, "edit_file", path=str(saved), old_text="evicted", new_text="x"))
    assert saved.read_text(encoding="utf-8") == "evicted content\n"
    os.symlink(data.config_file, data.large_results_dir / "call-y.txt")  # a link cannot launder config.toml
    assert refused(call(beside, "read_file", path=str(data.large_results_dir / "call-y.txt")))


def test_ls_says_nothing_about_a_link_target_outside_the_workdir(beside: Env) -> None:
    work = beside[0]
    secret = work.parent / "secret.bin"
    secret.write_bytes(b"x" * 123_457)
    os.symlink(secret, work / "link")
    listing = call(beside, "ls", path=".")
    assert "123457" not in listing and "link" in listing and "outside the working directory" in listing


@pytest.mark.parametrize("name", ["evil\nname.txt", "evil\x1b[2Jname.txt", "tab\tname.txt", "bell\x07.txt",
                                  "c1\x9bname.txt"])
def test_write_file_refuses_names_with_control_characters(beside: Env, name: str) -> None:
    work = beside[0]
    reply = call(beside, "write_file", path=name, content="x")
    assert refused(reply) and "control characters" in reply
    assert "\x1b" not in reply and "\x9b" not in reply
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("name", ["invoice\u202egpj.exe", "a\u2066b.txt", "x\u202ay.py"])
def test_write_file_refuses_names_with_bidi_overrides(beside: Env, name: str) -> None:
    work = beside[0]
    reply = call(beside, "write_file", path=name, content="x")
    assert refused(reply) and "bidirectional override" in reply
    assert not any(char in reply for char in "\u202a\u202e\u2066")
    assert list(work.iterdir()) == []


class EvictThenReadBack:
    """Reads a big file (evicted by the real chain), then follows the notice's read_file pointer."""

    def __init__(self) -> None:
        self.read_back: str | None = None

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        returns = [part for message in messages if isinstance(message, ModelRequest)
                   for part in message.parts if isinstance(part, ToolReturnPart)]
        if not returns:
            yield {0: DeltaToolCall(name="read_file", json_args='{"path": "big.txt", "limit": 3000}',
                                    tool_call_id="call-big")}
            return
        if len(returns) == 1:
            pointer = re.search(r"read_file\(path='([^']+)', offset=0", returns[0].model_response_str())
            assert pointer is not None, returns[0].model_response_str()[:500]
            args = f'{{"path": "{pointer.group(1)}", "offset": 1500, "limit": 2}}'
            yield {0: DeltaToolCall(name="read_file", json_args=args, tool_call_id="call-back")}
            return
        self.read_back = returns[-1].model_response_str()
        yield "done"


async def test_the_eviction_notice_path_reads_back_through_the_real_chain(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "big.txt").write_text("".join(f"row {n} of the big file\n" for n in range(3000)), encoding="utf-8")
    data = DataDir(work / ".deep-tui")
    script = EvictThenReadBack()
    model = FunctionModel(stream_function=script, model_name="scripted")
    settings = Settings(context=ContextSettings(large_result_tokens=2_000))
    factory = RuntimeFactory(settings=settings, data_dir=data, workdir=work, choice=choose_model("offline", None),
                             chat_model=model)
    runtime = await factory.open_request(SessionRequest())
    events = [event async for event in runtime.run_turn("read big.txt")]
    await runtime.aclose()
    assert isinstance(events[-1], TurnFinished)
    finished = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished[0].evicted_path and Path(finished[0].evicted_path).is_relative_to(data.large_results_dir)
    assert script.read_back is not None and "row 1500 of the big file" in script.read_back
    assert not finished[1].is_error


def test_the_memory_tools_write_no_escape_codes_into_memory(beside: Env) -> None:
    memory = beside[2]
    assert "added" in call(beside, "write_memory", content="fact \x1b]0;owned\x07 \x9b2J")
    assert "updated" in call(beside, "update_memory", old_text="fact", new_text="\x1b[2Jfact")
    text = memory.path.read_text(encoding="utf-8")
    assert "␛[2Jfact ␛]0;owned␇" in text and "\x1b" not in text and "\x9b" not in text


def test_writes_into_the_data_dir_are_refused_without_asking(inside: Env) -> None:
    """The approval gate and the tool agree on what is refused: the user is never asked about a write
    the tool would refuse anyway (the data dir, a control character in the name)."""
    from pydantic_ai.tools import ToolDefinition

    from tui.agent.approval.approval_gate import ApprovalGate
    from tui.agent.tools.kinds import WRITES_FILES_METADATA
    from tui.agent.tools.path_policy import PathPolicy

    work, data, _ = inside
    gate = ApprovalGate(policy=PathPolicy(work, data.root), writes="ask")
    tool = ToolDefinition(name="write_file", metadata=dict(WRITES_FILES_METADATA))
    assert gate._needs_approval(None, tool, {"path": "notes.txt"})  # type: ignore[arg-type]
    assert not gate._needs_approval(None, tool, {"path": str(data.config_file)})  # type: ignore[arg-type]
    assert not gate._needs_approval(None, tool, {"path": "bad\x1bname.txt"})  # type: ignore[arg-type]
