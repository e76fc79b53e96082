"""Issue 20.4: every tool is bounded — linear-time search, capped work, streamed reads, hostile arguments
answered as tool errors — through real agent runs (FunctionModel drives the calls)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools import file_reading, file_search
from tui.agent.tools.memory import MemoryFile
from tui.agent.turn_events import ToolCallFinished, TurnFailed, TurnFinished
from tui.base.config import Settings
from tui.base.paths import DataDir


class ScriptedCalls:
    """Makes each scripted tool call in turn (one per response), then answers "finished"."""

    def __init__(self, calls: list[tuple[str, dict[str, object]]]) -> None:
        self.calls = calls

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        made = sum(1 for message in messages if isinstance(message, ModelResponse))
        if made < len(self.calls):
            tool, args = self.calls[made]
            return ModelResponse(parts=[ToolCallPart(tool, args, f"call-{made}")])
        return ModelResponse(parts=[TextPart("finished")])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


def run_calls(work: Path, calls: list[tuple[str, dict[str, object]]], *,
              tool_timeout: float | None = 120.0) -> list[ToolReturnPart]:
    data = DataDir(work.parent / "data")
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()), writes="always",
                              tool_timeout=tool_timeout)
    agent = Agent(FunctionModel(ScriptedCalls(calls)), toolsets=parts.toolsets, capabilities=parts.capabilities)
    result = agent.run_sync("go")
    assert result.output == "finished"
    return [part for message in result.all_messages() for part in message.parts if isinstance(part, ToolReturnPart)]


def timed_calls(work: Path, calls: list[tuple[str, dict[str, object]]]) -> tuple[list[ToolReturnPart], float]:
    started = time.monotonic()
    returns = run_calls(work, calls)
    return returns, time.monotonic() - started


# -- linear time -------------------------------------------------------------------------------------------


def test_grep_with_a_catastrophic_pattern_on_a_long_line_is_linear(work: Path) -> None:
    (work / "long.txt").write_text("a" * 200_000 + "b\nshort aaa\n")  # Python's re: (a+)+$ never returns here
    (grep,), elapsed = timed_calls(work, [("grep", {"pattern": "(a+)+$"})])
    assert elapsed < 5, f"grep took {elapsed:.1f} s"
    assert grep.outcome == "success"
    assert str(grep.content).strip() == "long.txt:2: short aaa"


def test_glob_with_many_stars_is_linear(work: Path) -> None:
    (work / ("a" * 120 + "b")).write_text("x")  # the old [^/]* translation backtracks for ever on this name
    (work / "xaaaaaaaaaac").write_text("x")
    (glob,), elapsed = timed_calls(work, [("glob", {"pattern": "*a*a*a*a*a*a*a*a*a*a*c"})])
    assert elapsed < 5, f"glob took {elapsed:.1f} s"
    assert str(glob.content).strip() == "xaaaaaaaaaac"


def test_regex_constructs_re2_lacks_are_tool_errors_that_say_what_to_do(work: Path) -> None:
    (work / "a.txt").write_text("foo bar\n")
    look, back, bad, fine = run_calls(work, [
        ("grep", {"pattern": "foo(?= bar)"}),
        ("grep", {"pattern": r"(o)\1"}),
        ("grep", {"pattern": "(unclosed"}),
        ("grep", {"pattern": r"fo{2}\s\w+$"}),
    ])
    assert [look.outcome, back.outcome, bad.outcome] == ["failed"] * 3
    assert "do not support look-around" in str(look.content) and "simpler pattern" in str(look.content)
    assert "do not support backreferences" in str(back.content)
    assert "invalid regular expression '(unclosed'" in str(bad.content)
    assert str(fine.content).strip() == "a.txt:1: foo bar"


def test_grep_finds_lines_across_blocks_and_counts_them_right(work: Path) -> None:
    lines = [f"line {n} {'needle' if n % 10_000 == 7 else 'hay'}" for n in range(1, 60_001)]
    (work / "big.txt").write_text("\n".join(lines))  # ~1 MB: several blocks, the last line without newline
    (work / "crlf.txt").write_bytes(b"one\r\nneedle two\r\n")
    (grep, anchored), _ = timed_calls(work, [("grep", {"pattern": "needle"}),
                                                   ("grep", {"pattern": r"^line 5\d{4} needle$", "glob": "*.txt"})])
    expected = [f"big.txt:{n}: line {n} needle" for n in range(7, 60_001, 10_000)]
    assert str(grep.content).splitlines() == [*expected, "crlf.txt:2: needle two"]
    assert str(anchored.content).splitlines() == ["big.txt:50007: line 50007 needle"]


def test_glob_features_and_missing_paths(work: Path) -> None:
    for name in ("src/app.py", "src/view.tsx", "src/deep/x.ts", "notes.md", "b.md"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("needle\n")
    braces, classes, literal, unclosed, missing_glob, missing_grep, missing_ls, one_file = run_calls(work, [
        ("glob", {"pattern": "src/**/*.{ts,tsx}"}),
        ("glob", {"pattern": "[!n]*.md"}),
        ("glob", {"pattern": "{a,b"}),  # no closing brace: literal, as in a shell
        ("glob", {"pattern": "{a,{b}"}),
        ("glob", {"pattern": "*", "path": "nowhere"}),
        ("grep", {"pattern": "x", "path": "nowhere"}),
        ("ls", {"path": "nowhere"}),
        ("grep", {"pattern": "needle", "path": "src/app.py"}),
    ])
    assert str(braces.content).splitlines() == ["src/deep/x.ts", "src/view.tsx"]
    assert str(classes.content).splitlines() == ["b.md"]
    assert literal.outcome == "success" and str(literal.content) == "no files match '{a,b'"
    assert unclosed.outcome == "failed" and "has no matching '}'" in str(unclosed.content)
    for result in (missing_glob, missing_grep, missing_ls):
        assert result.outcome == "failed" and "No such file or directory" in str(result.content), result.content
    assert str(one_file.content) == "src/app.py:1: needle"


# -- bounded work ------------------------------------------------------------------------------------------


def test_grep_stops_at_its_byte_bound_and_says_so(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.agent.tools import text_search

    monkeypatch.setattr(text_search, "MAX_SCAN_BYTES", 2 * 1024 * 1024)
    for name in ("a.log", "b.log", "c.log"):
        (work / name).write_bytes(b"nothing here\n" * 100_000)  # 1.3 MB each
    (grep,) = run_calls(work, [("grep", {"pattern": "needle"})])
    assert "no matches" in str(grep.content)
    assert "stopped after reading 2 MB (the limit of one search)" in str(grep.content)


def test_grep_caps_hits_and_long_lines(work: Path) -> None:
    (work / "many.txt").write_text("hit\n" * 1_000)
    (work / "wide.txt").write_text("x" * 6_000_000 + " hit at the end\nhit\n")
    grep, wide = run_calls(work, [("grep", {"pattern": "hit", "path": "many.txt"}),
                                  ("grep", {"pattern": "x+ hit", "path": "wide.txt"})])
    assert len(str(grep.content).splitlines()) == 201 and "stopped after 200 matches" in str(grep.content)
    assert "wide.txt:1" in str(wide.content) and "searched in their first 4 MB only" in str(wide.content)
    assert len(str(wide.content)) < 1_000


# -- streamed reads ----------------------------------------------------------------------------------------


def peak_memory_of(work: Path, calls: list[tuple[str, dict[str, object]]]) -> tuple[list[ToolReturnPart], int]:
    tracemalloc.start()
    try:
        returns = run_calls(work, calls)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return returns, peak


def test_read_file_with_a_small_limit_on_a_big_file_stays_small(work: Path) -> None:
    with (work / "big.log").open("w") as out:
        for n in range(3_300_000):  # 33 MB of short lines: 957 MB peak before
            out.write(f"l{n:07d}\n")
    (first, later), peak = peak_memory_of(work, [("read_file", {"path": "big.log", "limit": 5}),
                                                 ("read_file", {"path": "big.log", "offset": 3_299_998, "limit": 5})])
    assert peak < 16 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"
    assert str(first.content).splitlines() == [
        "     1\tl0000000", "     2\tl0000001", "     3\tl0000002", "     4\tl0000003", "     5\tl0000004",
        "[lines 1-5 of 3300000] — continue with read_file(path='big.log', offset=5)"]
    assert str(later.content).splitlines()[-1] == "[lines 3299999-3300000 of 3300000]"


def test_read_file_of_one_enormous_line_stays_small(work: Path) -> None:
    (work / "minified.js").write_bytes(b"x" * 40_000_000 + "é".encode() * 10 + b"\nnext\n")
    (read,), peak = peak_memory_of(work, [("read_file", {"path": "minified.js"})])
    assert peak < 16 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"
    text = str(read.content)
    assert "[line cut: 40,000,010 characters; read on with read_file(path='minified.js', offset=0, char_offset=2000)]" \
        in text and "     2\tnext" in text and "of 2]" in text
    assert len(text) < file_reading.LINE_CHAR_LIMIT + 200


def test_read_file_pages_and_edges(work: Path) -> None:
    (work / "two.txt").write_text("a\nb")  # no final newline
    (work / "empty.txt").write_text("")
    paged, past, empty = run_calls(work, [("read_file", {"path": "two.txt", "offset": 1}),
                                          ("read_file", {"path": "two.txt", "offset": 2}),
                                          ("read_file", {"path": "empty.txt"})])
    assert str(paged.content) == "     2\tb\n[lines 2-2 of 2]"
    assert past.outcome == "failed" and "offset 2 is past the end: two.txt has 2 lines" in str(past.content)
    assert str(empty.content) == "[empty file]"


# -- huge directories --------------------------------------------------------------------------------------


CROWD = 12_000


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A working directory whose one sub-directory holds more entries than the walks and listings below read
    (their bounds are lowered so the test stays fast; bench/bench_tools.py runs the defaults on 1,000,000)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):  # tmpfs when there is one: file creation is 3 times faster
        root = Path(tempfile.mkdtemp(prefix="deep-tui-test-", dir=shm))
    else:
        root = tmp_path_factory.mktemp("crowded")
    work = root / "work"
    (work / "crowd").mkdir(parents=True)
    for n in range(CROWD):
        os.close(os.open(work / "crowd" / f"f{n:06d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    yield work
    shutil.rmtree(root)


def test_ls_glob_and_grep_over_a_crowded_directory_are_capped(crowded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_search, "MAX_WALK_ENTRIES", 10_000)
    monkeypatch.setattr(file_reading, "LS_COUNT_LIMIT", 5_000)
    calls: list[tuple[str, dict[str, object]]] = [("ls", {"path": "crowd"}), ("glob", {"pattern": "**/*.md"}),
                                                  ("grep", {"pattern": "x", "glob": "*.md"}), ("ls", {})]
    started = time.monotonic()
    (crowd, glob, grep, top), peak = peak_memory_of(crowded, calls)
    elapsed = time.monotonic() - started
    assert elapsed < 10, f"{elapsed:.1f} s"
    assert peak < 32 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"
    listing = str(crowd.content).splitlines()
    assert len(listing) == file_reading.LIST_LIMIT + 1 and listing[:-1] == sorted(listing[:-1])
    assert all(row.startswith("f0") and row.endswith(".txt  0") for row in listing[:-1])
    assert listing[-1].startswith("… and more than 9,500 more entries: the listing stopped after reading 10,000")
    for result in (glob, grep):
        assert "stopped after reading 10,000 directory entries (the limit of one search)" in str(result.content)
    assert "no files match '**/*.md'" in str(glob.content) and "no matches for 'x'" in str(grep.content)
    assert str(top.content) == "crowd/"


# -- hostile arguments through a real session ---------------------------------------------------------------


async def test_a_bad_glob_and_a_10_mb_path_are_tool_errors_and_the_turn_goes_on(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\n")
    calls = [("glob", {"pattern": "[z-a]*"}), ("read_file", {"path": "a" * 10_000_000}),
             ("grep", {"pattern": "alpha", "path": "b" * 100_000})]
    sent_sizes: list[int] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        sent_sizes.append(sum(len(json.dumps(m, default=str)) for m in messages))
        made = sum(1 for m in messages if isinstance(m, ModelResponse))
        if made < len(calls):
            name, args = calls[made]
            yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call-{made}")}
            return
        yield "carried on"

    model = FunctionModel(stream_function=stream, model_name="scripted")
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model)
    runtime = await factory.open_request(SessionRequest())
    try:
        events = [event async for event in runtime.run_turn("go")]
    finally:
        await runtime.aclose()
    assert not [event for event in events if isinstance(event, TurnFailed)]
    assert isinstance(events[-1], TurnFinished) and events[-1].output == "carried on"
    finished = [event for event in events if isinstance(event, ToolCallFinished)]
    assert [event.is_error for event in finished] == [True, True, True]
    assert "bad character range z-a" in finished[0].preview
    assert "the path is 10,000,000 characters long" in finished[1].preview
    assert "the path is 100,000 characters long" in finished[2].preview
    assert len(sent_sizes) == 4 and max(sent_sizes) < 200_000, sent_sizes  # every request fits the window


def test_an_overflow_names_a_tool_calls_arguments_not_memory() -> None:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.base.config import ContextSettings
    from tui.chain.budget import WindowBudget
    from tui.chain.overflow import describe_overflow

    messages = [ModelRequest(parts=[UserPromptPart("go")]),
                ModelResponse(parts=[ToolCallPart("read_file", {"path": "a" * 1_000_000}, "call-1")]),
                ModelRequest(parts=[ToolReturnPart("read_file", "refused", "call-1")])]
    text = describe_overflow(messages, tokens=250_000, fixed_tokens=1_400,
                             budget=WindowBudget.for_window(200_000, ContextSettings()), ratio=1.0)
    assert "the arguments of a read_file call take about 250," in text and "MEMORY.md" not in text
