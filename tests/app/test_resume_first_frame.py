"""The first frame of ``deep-tui --resume`` draws no more of the tail than fills the terminal, and its
keyboard starts in the prompt: both keep work out of the time until the last message shows."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Markdown

from tests.app.app_support import make_app, make_factory, wait_until
from tests.app.test_resume_tail import _gated_app, _long_session
from tui.app.app import stylesheets
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import UserBlock
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.tail_blocks import least_rows, screenful_start, tail_blocks
from tui.base.metadata_keys import SUMMARY_METADATA_KEY
from tui.store.session_tail import Record, SessionTail

COLUMNS = 40
ROOT = Path(__file__).resolve().parents[2]


def _prompt(content: Any) -> Record:
    return {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": content}]}


def _answer(*parts: dict[str, Any]) -> Record:
    return {"kind": "response", "parts": list(parts)}


def _text(content: str) -> dict[str, Any]:
    return {"part_kind": "text", "content": content}


SAMPLES: list[Record] = [
    _prompt("one line"),
    _prompt("a prompt\n\nover several\nlines " + "and long " * 30),
    _prompt(""),
    _prompt(["look at", {"kind": "text-content", "content": "this"}, {"kind": "image-url", "url": "https://x/y.png"}]),
    _answer(_text("one line")),
    _answer(_text("a paragraph\nwith soft\nbreaks that Markdown joins")),
    _answer(_text("word " * 200)),
    _answer(_text("[a link](https://example.com/" + "a" * 300 + ") and `code`")),
    _answer(_text("# Heading\ntext right below\n- item\n- item two\n  continued\n\n1. first\n2. second\n\n## Next")),
    _answer(_text("```python\nline1\nline2\n\nline4\n```\nafter the fence")),
    _answer(_text("~~~\nan unclosed\nfence")),
    _answer(_text("> a quote\n> on two lines\n\n> another quote")),
    _answer(_text("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |")),
    _answer(_text("<!-- a comment -->\n\nthen text")),
    _answer(_text("Setext heading\n===\n\n***\n\n- - -")),
    _answer(_text("- loose\n\n- list\n\n  with a paragraph\n\n- items")),
    _answer(_text("1) one\n2) two\n\n    indented code\n    more")),
    _answer(_text("1. loose\n\n2. ordered\n\n3. list\n\nthen a paragraph\n\n# and a heading")),
    _answer(_text("[ref]: https://example.com/a\n\n[ref2]: https://example.com/b\n\ntext [ref]")),
    _answer(_text("para\n- list right below\n\npara two\n```\ncode right below\n```\n> quote")),
    _answer(_text("<div>\nhtml\n</div>\n\n<br>\n\nend")),
    _answer(_text("````\n```\nstill code\n````\ntext\n\n- item")),
    _prompt("e\u0301" * 100 + "\u200b" * 80),
    _answer(_text("   "), _text("after blank text")),
    _answer({"part_kind": "thinking", "content": "long thought " * 50}, _text("the answer")),
    _answer({"part_kind": "tool-call", "tool_name": "read_file", "args": {"path": "a.txt"}, "tool_call_id": "c1"},
            {"part_kind": "tool-call", "tool_name": "ls", "args": "{}", "tool_call_id": "c2"}),
    {"kind": "request", "parts": [{"part_kind": "compaction", "content": "what happened before",
                                   "metadata": {SUMMARY_METADATA_KEY: {"strategy": "summary", "replaced": 4,
                                                                       "kept_from": 6}}}]},
]


class _Column(App[None]):
    """Each record's blocks in a column of their own, ``COLUMNS`` wide, stacked in a scroll as in the chat,
    with the app's style sheets (the estimate counts the margins they give prompts)."""

    CSS_PATH: ClassVar = stylesheets()

    def __init__(self, records: list[Record]) -> None:
        super().__init__()
        self.records = records

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for number, record in enumerate(self.records):
                column = Vertical(*tail_blocks(SessionTail("s", None, [record])), id=f"record-{number}")
                column.styles.width = COLUMNS
                column.styles.height = "auto"
                yield column


async def test_no_record_takes_fewer_rows_than_estimated() -> None:
    """The estimate is a lower bound, so a tail cut by it always fills the screen."""
    async with _Column(SAMPLES).run_test(size=(COLUMNS + 4, 60)) as pilot:
        await pilot.pause(0.3)  # Markdown parses after mounting
        heights = {number: pilot.app.query_one(f"#record-{number}").outer_size.height
                   for number in range(len(SAMPLES))}
    too_high = {number: (least_rows(record, COLUMNS), heights[number])
                for number, record in enumerate(SAMPLES) if least_rows(record, COLUMNS) > heights[number]}
    assert not too_high, f"estimated rows > drawn rows (record: (estimate, drawn)): {too_high}"
    assert least_rows(SAMPLES[1], COLUMNS) > 5  # wrapped and multi-line prompts count every row
    assert least_rows(SAMPLES[9], COLUMNS) >= 4  # code lines count one each


def _turns(count: int) -> list[Record]:
    records: list[Record] = []
    for number in range(count):
        records += [_prompt(f"question {number}"), _answer(_text(f"answer **{number}**\n\n- one\n- two"))]
    return records


def test_only_the_newest_records_that_fill_the_screen_are_drawn() -> None:
    records = _turns(10)
    tail = SessionTail("s", None, records, first_index=100, total=120)
    start = screenful_start(records, 80, 12)
    assert 0 < start < len(records) - 2
    assert sum(least_rows(record, 80) for record in records[start:]) >= 12
    assert sum(least_rows(record, 80) for record in records[start + 1:]) < 12  # not one record more

    blocks = tail_blocks(tail, screen=(80, 12))
    assert len(blocks) == len(records) - start
    assert [getattr(block, "message_index", None) for block in blocks] == list(range(100 + start, 120))
    assert isinstance(blocks[-1], AssistantBlock) and blocks[-1].received.startswith("answer **9**")

    assert len(tail_blocks(tail, screen=(80, 1000))) == len(records)  # fewer rows than the screen: all of them
    assert len(tail_blocks(tail)) == len(records)


@pytest.mark.parametrize("size", [(100, 30), (50, 24)])
async def test_the_first_frame_of_a_resumed_session_is_full_with_a_screenful(tmp_path: Path,
                                                                            size: tuple[int, int]) -> None:
    gate = threading.Event()
    app = _gated_app(tmp_path, _long_session(tmp_path), gate)
    try:
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.3)
            chat = app.query_one("#chat", VerticalScroll)
            assert app.factory is None  # still the tail
            assert chat.max_scroll_y > 0  # taller than the view: no gap at the top
            assert 0 < len(chat.query(UserBlock)) < 10  # not the whole page of 20 messages
    finally:
        gate.set()


class _Dialog(Screen[None]):
    def compose(self) -> ComposeResult:
        yield from ()


async def test_the_main_screen_gives_the_keyboard_to_the_prompt(tmp_path: Path) -> None:
    """Not to the first focusable widget (the chat): moving it from there restyles every block of the chat."""
    app = make_app(make_factory(tmp_path))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await app.push_screen(_Dialog())
        app.pop_screen()
        await pilot.pause()
        assert isinstance(app.focused, PromptInput)


def test_the_side_panels_are_loaded_after_the_first_frame() -> None:
    """Hidden until asked for, the panels (editor, file watcher, tabs) are no part of the first frame."""
    code = (
        "import sys\n"
        "import tui.app.app, tui.app.run, tui.app.widgets.tail_blocks\n"
        "deferred = ('tui.app.widgets.memory_editor', 'tui.app.widgets.event_log', 'tui.app.widgets.evicted_browser',\n"
        "            'watchfiles', 'textual.widgets._tabbed_content')\n"
        "loaded = [name for name in deferred if name in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_collector_is_off_while_the_app_starts_and_on_for_the_other_commands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import tui.app.run
    from tui.cli.main import main

    seen: dict[str, bool] = {}

    def fake_run_app(*args: object, **kwargs: object) -> int:
        seen["app"] = gc.isenabled()
        return 0

    monkeypatch.setattr(tui.app.run, "run_app", fake_run_app)
    data = ["--data-dir", str(tmp_path / "data"), "--model", "offline"]
    assert main(data) == 0
    assert seen == {"app": False}
    assert gc.isenabled()  # and on again when main returns
    assert main([*data, "--resume", "nosuchid"]) == 2  # an error before the app: on again too
    assert gc.isenabled()
    assert main(["sessions", *data[:2]]) == 0
    assert gc.isenabled()
    capsys.readouterr()


async def test_the_collector_is_on_again_once_the_session_is_open(tmp_path: Path) -> None:
    gate = threading.Event()
    app = _gated_app(tmp_path, _long_session(tmp_path), gate)
    gc.disable()  # as tui.cli leaves it for the app
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            assert not gc.isenabled()
            gate.set()
            await wait_until(pilot, lambda: app.factory is not None, "the session to open")
            await pilot.pause()
            assert gc.isenabled()
            assert gc.get_freeze_count() > 0  # start-up's objects are left out of later collections
    finally:
        gate.set()
        gc.unfreeze()
        gc.enable()


async def test_a_tail_answer_is_parsed_once_while_it_is_composed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not after mounting, in a thread, as Textual's Markdown does (its blocks would come a frame later)."""

    def no_update(self: Markdown, markdown: str) -> None:
        raise AssertionError("Markdown.update called: the answer was parsed after mounting")

    records = [_answer(_text("Module 7 defines **f_7**.\n\n- it is small\n- it is pure\n\n```py\nx = 1\n```"))]
    blocks = tail_blocks(SessionTail("s", None, records))
    app = _Column([])
    async with app.run_test() as pilot:
        monkeypatch.setattr(Markdown, "update", no_update)
        await app.query_one(VerticalScroll).mount_all(blocks)
        await pilot.pause()
        segment = blocks[0].query_one(Markdown)
        assert [type(child).__name__ for child in segment.children] == \
            ["MarkdownParagraph", "MarkdownBulletList", "AnswerFence"]  # its code block says when it is cut
        assert segment.source == records[0]["parts"][0]["content"]
        assert segment.ready.is_set()  # type: ignore[attr-defined]  # margins settled as for any answer


async def test_without_the_textual_internals_a_tail_answer_is_an_ordinary_segment(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """TailAnswerSegment builds on Markdown internals (Textual 8.2): if a Textual release drops them, the
    tail still shows its answers, parsed after mounting, instead of failing the first frame."""
    from textual.app import App
    from textual.widgets import Markdown

    from tui.app.widgets import tail_blocks
    from tui.app.widgets.answer_block import AnswerSegment

    monkeypatch.setattr(tail_blocks, "PARSES_IN_COMPOSE", False)

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield tail_blocks.TailAnswer("# Title\n\nthe *recorded* answer")

    async with Host().run_test() as pilot:
        await pilot.pause()
        segment = pilot.app.query_one(AnswerSegment)
        assert not isinstance(segment, tail_blocks.TailAnswerSegment)
        await segment.ready.wait()
        assert "the recorded answer" in " ".join(str(block.content) for block in segment.query("MarkdownBlock"))
        assert isinstance(segment, Markdown)
