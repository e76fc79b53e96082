"""A code block whose lines run past the chat's edge says so under it, and shows the whole block on a click or
Enter (issue 29, "code blocks are cut with no marker")."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.app.app_support import make_app, make_factory, reply_model, wait_idle, wait_until
from tui.app.app import DeepTuiApp
from tui.app.screens.basic_dialogs import TextViewerModal
from tui.app.widgets.code_fence import AnswerFence, FenceCutMark, cut_lines, cut_words
from tui.store import session_store

LONG = "result = compute(" + ", ".join(f"argument_{n}" for n in range(8)) + ")"
CODE = f"def short():\n    return 1\n\n{LONG}\nprint({LONG!r})\n"
ANSWER = f"Here it is:\n\n```python\n{CODE}```\n\nAnd a short one:\n\n```\nok = True\n```\n"


def test_cut_lines_counts_the_lines_past_the_width_and_the_longest_overrun() -> None:
    assert cut_lines("abc\nabcdef\nab", 4) == (1, 2)
    assert cut_lines("abc\nab", 4) == (0, 0)
    assert cut_lines("界界界", 4) == (1, 2)  # cells, not characters
    assert cut_words(2, 41) == ("→ 2 lines cut at the edge (up to 41 more columns) · click here or Enter to see the "
                                "whole block")


async def answered(tmp_path: Path, pilot, app: DeepTuiApp) -> list[AnswerFence]:  # type: ignore[no-untyped-def]
    await pilot.press(*"show me", "enter")
    await wait_idle(app, pilot)
    await wait_until(pilot, lambda: len(app.query(AnswerFence)) == 2, "the two code blocks")
    return list(app.query(AnswerFence))


def mark_text(fence: AnswerFence) -> str:
    mark = fence.query_one(FenceCutMark)
    return str(mark.render()) if mark.display else ""


@pytest.mark.parametrize("how", ["click", "enter"])
async def test_a_cut_code_block_says_how_much_and_opens_whole(tmp_path: Path, how: str) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model(ANSWER)))
    async with app.run_test(size=(80, 24)) as pilot:
        long_block, short_block = await answered(tmp_path, pilot, app)
        width = long_block.size.width - 4  # the code's padding
        lines, columns = cut_lines(CODE, width)
        assert lines == 2 and columns > 0
        await wait_until(pilot, lambda: mark_text(long_block) == cut_words(2, columns), "the mark under the block")
        assert mark_text(short_block) == ""  # everything fits: no mark
        mark = long_block.query_one(FenceCutMark)
        if how == "click":
            mark.scroll_visible(animate=False)
            await pilot.pause()
            await pilot.click(mark)
        else:
            mark.focus()
            await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextViewerModal), "the whole block")
        shown = "".join(str(static.render()) for static in app.screen.query(Static))
        assert LONG in shown.replace("\n", "") or all(part in shown for part in LONG.split(", "))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TextViewerModal), "the viewer to close")


async def test_the_mark_follows_the_width(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model(ANSWER)))
    async with app.run_test(size=(80, 24)) as pilot:
        long_block, _ = await answered(tmp_path, pilot, app)
        await wait_until(pilot, lambda: "2 lines cut" in mark_text(long_block), "the mark at 80 columns")
        await pilot.resize_terminal(200, 24)  # every line fits now
        await wait_until(pilot, lambda: mark_text(long_block) == "", "the mark to go")
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: "2 lines cut" in mark_text(long_block), "the mark again")


def test_the_mark_under_a_cut_code_block_at_80x24(snap_compare, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def answer(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await answered(tmp_path, pilot, app)
        long_block = app.query(AnswerFence).first()
        await wait_until(pilot, lambda: "2 lines cut" in mark_text(long_block), "the mark")
        chat = app.query_one("#chat")
        chat.release_anchor()
        chat.scroll_to_widget(long_block, animate=False, top=True)
        await pilot.pause()

    monkeypatch.setattr(session_store.secrets, "token_hex", lambda size: "c0de" * (size // 2))  # the title bar's id
    app = make_app(make_factory(tmp_path, chat_model=reply_model(ANSWER)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=answer)
