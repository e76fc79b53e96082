"""``@path``: the workdir's files for completion (gitignore respected, bounded) and attachments under the path
policy (big files saved like evicted outputs, binary described, nothing outside the workdir or in the data dir)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tui.agent.attachments.file_mentions import MentionAttacher, mentioned_paths
from tui.agent.attachments.workdir_files import list_files, match_files
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.tools.path_policy import PathPolicy
from tui.agent.turn_events import PromptAttached, TurnFailed
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent, EvictedEvent
from tui.text.attachment_text import attachment_label
from tui.text.message_text import prompt_text


def _attacher(tmp_path: Path, limit: int = 1_000) -> tuple[MentionAttacher, list[ChainEvent], Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    data = work / ".deep-tui"
    events: list[ChainEvent] = []
    attacher = MentionAttacher(PathPolicy(workdir=work, data_root=data), data / "large_tool_results",
                               lambda: limit, events.append)
    return attacher, events, work


def test_only_mentions_of_existing_paths_count(tmp_path: Path) -> None:
    _made, _events, work = _attacher(tmp_path)
    (work / "app.py").write_text("print('hi')\n")
    (work / "my notes.md").write_text("notes\n")
    prompt = 'fix @app.py, see @"my notes.md"; @dataclass and bob@app.py and @missing.txt stay text; again @app.py'
    assert mentioned_paths(prompt, work) == ["app.py", "my notes.md"]


def test_a_small_text_file_goes_in_whole_and_shows_as_name_and_size(tmp_path: Path) -> None:
    attacher, events, work = _attacher(tmp_path)
    (work / "app.py").write_text("def main():\n    return 42\n")
    attached = attacher.attach("explain @app.py")
    assert isinstance(attached.content, list) and attached.content[0] == "explain @app.py"
    item = attached.content[1]
    assert isinstance(item, str) and "def main():\n    return 42" in item
    assert attachment_label(item) == "[@app.py, 26 bytes]"
    assert prompt_text(attached.content) == "explain @app.py [@app.py, 26 bytes]", "the chat shows no content"
    assert [a.describe() for a in attached.attachments] == ["app.py (26 bytes)"] and not events


def test_a_big_file_is_saved_like_an_evicted_output_with_a_preview_and_a_pointer(tmp_path: Path) -> None:
    attacher, events, work = _attacher(tmp_path, limit=1_000)
    lines = [f"line {number}: some log text" for number in range(3_000)]
    (work / "build.log").write_text("\n".join(lines) + "\n")
    attached = attacher.attach("why did @build.log fail")
    item = attached.content[1]
    assert isinstance(item, str) and len(item) < 5_000
    assert "line 0:" in item and "line 2999:" in item and "line 1500:" not in item, "head and tail"
    evicted = [event for event in events if isinstance(event, EvictedEvent)]
    assert len(evicted) == 1 and f"read_file(path={evicted[0].path!r}" in item
    assert Path(evicted[0].path).read_text() == "\n".join(lines) + "\n", "saved byte for byte"
    assert attached.attachments[0].kind == "preview"


def test_a_binary_file_is_described_not_dumped(tmp_path: Path) -> None:
    """(A .png, .jpg, .gif or .webp is attached as an image: tests/agent/test_images.py.)"""
    attacher, _events, work = _attacher(tmp_path)
    (work / "logo.bmp").write_bytes(b"BM\x00\x00\x00\x00IHDR" + bytes(range(256)) * 4)
    attached = attacher.attach("what is @logo.bmp")
    item = attached.content[1]
    assert isinstance(item, str) and "binary file, image/bmp" in item and "IHDR" not in item
    assert attached.attachments[0].kind == "binary"


def test_links_out_of_the_workdir_and_the_data_dir_are_refused(tmp_path: Path) -> None:
    attacher, _events, work = _attacher(tmp_path)
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY MATERIAL\n")
    (work / "innocent.txt").symlink_to(secret)
    (work / ".deep-tui" / "main").mkdir(parents=True)
    (work / ".deep-tui" / "main" / "MEMORY.md").write_text("private memory\n")
    attached = attacher.attach(f"read @innocent.txt @.deep-tui/main/MEMORY.md @../id_rsa @{secret}")
    assert all("PRIVATE KEY" not in str(item) and "private memory" not in str(item) for item in attached.content)
    assert [a.kind for a in attached.attachments] == ["refused"] * 4
    assert "outside the working directory" in attached.attachments[0].describe()
    assert "data directory" in attached.attachments[1].describe()


def test_listing_respects_gitignore_and_leaves_out_the_data_dir(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("x\n")
    (work / "secret.env").write_text("KEY=1\n")
    (work / "new_untracked.py").write_text("y\n")
    (work / ".gitignore").write_text("secret.env\n")
    (work / ".deep-tui" / "main").mkdir(parents=True)
    (work / ".deep-tui" / "main" / "MEMORY.md").write_text("m\n")
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "src/app.py", ".gitignore"], cwd=work, check=True)
    listing = list_files(work, work / ".deep-tui")
    assert listing.source == "git"
    assert set(listing.paths) == {".gitignore", "src/app.py", "new_untracked.py"}


def test_the_walk_skips_hidden_and_ignored_directories_and_is_bounded(tmp_path: Path) -> None:
    work = tmp_path / "plain"
    for directory in ("src", ".venv/lib", "node_modules/pkg", ".deep-tui/sessions"):
        (work / directory).mkdir(parents=True)
        (work / directory / "file.py").write_text("x\n")
    (work / "src" / ".hidden.py").write_text("x\n")
    listing = list_files(work, work / ".deep-tui")
    assert listing.source == "walk" and listing.paths == ("src/file.py",)
    for number in range(300):
        (work / "src" / f"m{number:03}.py").write_text("x\n")
    bounded = list_files(work, None, max_files=100)
    assert bounded.truncated and len(bounded.paths) == 100
    timed = list_files(work, None, time_budget=0.0)
    assert timed.truncated and len(timed.paths) < 301


def test_matching_prefers_the_file_name_and_short_paths() -> None:
    paths = ["docs/application.md", "src/app.py", "src/deep/nested/app_main.py", "tests/test_a_p_p.py", "README.md"]
    assert match_files(paths, "app") == ["src/app.py", "docs/application.md", "src/deep/nested/app_main.py",
                                         "tests/test_a_p_p.py"]
    assert match_files(paths, "nested") == ["src/deep/nested/app_main.py"], "a directory match counts too"
    assert match_files(paths, "")[0] == "README.md"
    assert match_files(paths, "zzz") == []


def test_matching_puts_the_most_contiguous_match_first() -> None:
    """``@mod_39_4`` in a tree of ``module_<i>_<jj>.py``: ``module_39_40`` … ``module_39_49`` hold ``_39_4`` in one
    piece and come before ``module_39_04`` (``mod`` … ``_39_`` … ``4``), though it sorts first by name."""
    paths = [f"src/pkg_{j}/module_{i}_{j:02d}.py" for i in range(100) for j in range(100)]
    paths += ["notes/mod_39_4.md", "mod_39/part_4.py", "src/pkg_34/module_139_34.py"]
    ranked = match_files(paths, "mod_39_4", limit=len(paths))
    assert ranked[0] == "notes/mod_39_4.md", "the whole query in one piece comes first"
    assert ranked[1:11] == [f"src/pkg_{j}/module_39_{j}.py" for j in range(40, 50)], "then mod + _39_4 in a name"
    assert ranked[11] == "mod_39/part_4.py", "then two pieces across a directory (mod_39 + _4)"
    assert ranked[12] == "src/pkg_4/module_39_04.py", "then three pieces (mod + _39_ + 4), the shortest first"
    assert "src/pkg_34/module_139_34.py" in ranked, "a match the first place of a piece would miss is still found"


async def test_a_turn_sends_the_attachment_records_it_and_reports_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.yaml").write_text("port: 8080\n")
    seen: list[list[ModelMessage]] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(messages)
        yield "the port is 8080"

    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=FunctionModel(stream_function=stream))
    runtime = await factory.open_request(SessionRequest())
    try:
        events = [event async for event in runtime.run_turn("which port is in @config.yaml?")]
        assert not [event for event in events if isinstance(event, TurnFailed)]
        assert PromptAttached(("config.yaml (11 bytes)",)) in events
        last = seen[-1][-1]
        assert isinstance(last, ModelRequest)
        part = next(part for part in last.parts if isinstance(part, UserPromptPart))
        assert isinstance(part.content, list) and "port: 8080" in str(part.content[1])
        recorded = json.loads(runtime.handle.messages.path.read_text())
        assert "port: 8080" in json.dumps(recorded), "messages.json holds what the model saw"
    finally:
        await runtime.aclose()


@pytest.mark.parametrize("typed", ["@/etc/passwd", "@~/.ssh/id_rsa"])
def test_absolute_and_home_paths_are_refused(tmp_path: Path, typed: str) -> None:
    attacher, _events, _work = _attacher(tmp_path)
    attached = attacher.attach(f"look at {typed}")
    if attached.attachments:
        assert attached.attachments[0].kind == "refused"
        assert len(attached.content) == 1


def test_many_small_files_are_budgeted_as_a_whole_and_the_rest_saved_in_one_file(tmp_path: Path) -> None:
    """Issue 29: each file under the per-file limit, together over the prompt's budget — the first go inline, the
    rest are saved in one file (one eviction event) behind short stubs; past 20, files are named, not attached."""
    work = tmp_path / "work"
    work.mkdir()
    data = work / ".deep-tui"
    events: list[ChainEvent] = []
    attacher = MentionAttacher(PathPolicy(workdir=work, data_root=data), data / "large_tool_results",
                               lambda: 1_000, events.append, budget_tokens=lambda: 900)
    for number in range(24):
        (work / f"m{number}.py").write_text("".join(f"ROW_{number}_{row} = {row}\n" for row in range(20)))
    attached = attacher.attach("look at " + " ".join(f"@m{number}.py" for number in range(24)))
    assert isinstance(attached.content, list)
    items = [item for item in attached.content[1:] if isinstance(item, str)]
    assert sum(len(json.dumps(item)) // 4 for item in items) <= 900
    inline = [n for n in range(20) if any(f"ROW_{n}_19 = 19" in item for item in items)]
    assert inline and inline == list(range(len(inline))) and len(inline) < 20
    [event] = [event for event in events if isinstance(event, EvictedEvent)]
    saved = Path(event.path).read_text(encoding="utf-8")
    assert all(f"ROW_{n}_19 = 19" in saved for n in range(len(inline), 20))
    kinds = [a.kind for a in attached.attachments]
    assert kinds == ["text"] * len(inline) + ["preview"] * (20 - len(inline)) + ["refused"] * 4
    assert attached.attachments[-1].describe() == "m23.py (more than 20 files in one prompt)"
    assert [attachment_label(item) for item in items] == [f"[@m{n}.py, {(work / f'm{n}.py').stat().st_size} bytes]"
                                                         for n in range(20)], "each file still named in the record"


def test_a_refused_attachment_reads_not_attached_never_attached() -> None:
    """Issue 29: a refused @mention read "attached: x not attached: why"; the line now lists what was attached,
    then what was not, and why."""
    from tui.text.attachment_text import attached_line, describe_attachment

    good = describe_attachment("a.py", 6, "text")
    missing = describe_attachment("nope.py", 0, "refused", "no such file")
    assert attached_line([good, missing], [missing]) == "attached: a.py (6 bytes) · not attached: nope.py (no such file)"
    assert attached_line([missing], [missing]) == "not attached: nope.py (no such file)"
    assert attached_line([good]) == "attached: a.py (6 bytes)"
    assert "not attached" not in describe_attachment("src", 0, "directory"), "a directory is named, and listable"
