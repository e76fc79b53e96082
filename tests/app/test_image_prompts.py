"""An image attached to a prompt reads ``[image: shot.png · 1280×720 · 68 bytes]`` under it, live, in a reopened
chat's first frame and in the reopened chat; a hostile file name is made terminal-safe; the offline model's
answer says what the image is."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.support.images import png
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.widgets.chat_blocks import NoticeBlock, UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.tail_blocks import tail_blocks
from tui.base.paths import DataDir
from tui.store.session_tail import read_session_tail

SIZE = (80, 24)


def _shown(blocks: object) -> list[str]:
    return [str(block.render()) for block in blocks  # type: ignore[attr-defined]
            if isinstance(block, (UserBlock, NoticeBlock))]


def _chat(app: DeepTuiApp) -> list[str]:
    return _shown(app.query_one(ChatView).query("UserBlock, NoticeBlock"))


async def test_the_image_line_reads_the_same_live_and_reopened(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    data = png(1280, 720)
    (factory.workdir / "shot.png").write_bytes(data)
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"what is @shot.png please", "enter")
        await wait_idle(app, pilot)
        live = _chat(app)
        answer = app.runtime.messages[-1].parts[0].content  # type: ignore[union-attr]
        session_id = app.runtime.info.session_id
        await app.runtime.aclose()
    line = f"[image: shot.png · 1280×720 · {len(data)} bytes]"
    assert live[:2] == ["you  what is @shot.png please", line], live
    assert str(answer).startswith(f"You attached shot.png: a PNG image, 1280×720 pixels, {len(data)} bytes.")

    first_frame = _shown(tail_blocks(read_session_tail(DataDir(tmp_path / "data"), session_id, 20)))
    assert first_frame[:2] == live[:2], first_frame

    reopened = make_app(make_factory(tmp_path), SessionRequest(resume=session_id))
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(_chat(reopened)) >= 2, "the reopened chat")
        assert _chat(reopened)[:2] == live[:2]


async def test_a_hostile_image_name_is_shown_terminal_safe(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    (factory.workdir / "a\x1b[31mred.png").write_bytes(png(10, 10))
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(PromptInput).text = 'look @"a\x1b[31mred.png" now'  # as pasted: ESC is no key to type
        await pilot.press("enter")
        await wait_idle(app, pilot)
        shown = _chat(app)
        await app.runtime.aclose()
    image_lines = [text for text in shown if text.startswith("[image: ")]
    assert len(image_lines) == 1 and "\x1b" not in image_lines[0] and "red.png · 10×10" in image_lines[0]


async def test_a_pasted_absolute_path_is_sent_as_a_prompt_not_taken_for_a_command(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    (factory.workdir / "shots").mkdir()
    (factory.workdir / "shots" / "screen 1.png").write_bytes(png(300, 200))
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        prompt.insert(str(factory.workdir / "shots" / "screen 1.png").replace(" ", "\\ "))  # as a paste inserts it
        await wait_until(pilot, lambda: prompt.text.endswith("screen\\ 1.png"), "the pasted path")
        await pilot.press("enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: any(text.startswith("[image: ") for text in _chat(app)), "the image line")
        shown = _chat(app)
        notices = [str(notification.message) for notification in app._notifications]
        await app.runtime.aclose()
    assert "[image: shots/screen 1.png · 300×200 · " in "\n".join(shown)
    assert not any("nknown command" in text for text in notices), notices
