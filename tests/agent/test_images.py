"""Images in a prompt (issue 33.3), through the real provider path against the loopback OpenAI-chat server:

- ``@shot.png`` reaches a model that reads images as an ``image_url`` data URL of the file's exact bytes;
- a model that does not (an unknown one, the offline model) is told in text that there was an image;
- a pasted path (quoted, with ``\\ `` escapes, a ``file://`` URL) attaches the same way;
- an oversized image (bytes or pixels), a non-image ``.png`` and a link out of the workdir are refused in one
  line, and the turn goes on without it;
- the offline model describes the image's type and size.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter

from tests.support.images import jpeg, png
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.attachments.file_mentions import MentionAttacher
from tui.agent.attachments.image_files import MAX_IMAGE_BYTES
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.tools.path_policy import PathPolicy
from tui.agent.turn_events import PromptAttached, TurnEvent, TurnFailed, TurnFinished
from tui.base.config import ProviderSettings, Settings
from tui.base.paths import DataDir

GUARD = 30.0
FAST = ProviderSettings(connect_timeout=2.0, read_timeout=5.0, retries=1, backoff_initial=0.05, backoff_max=0.2)
VISION = "openai-chat:gpt-4o"
TEXT_ONLY = "openai-chat:gpt-loop"


@asynccontextmanager
async def session(tmp_path: Path, model: str, base_url: str | None = None,
                  settings: Settings | None = None) -> AsyncIterator[SessionRuntime]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = settings or Settings(base_url=base_url, provider=FAST)
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model(model, None))
    runtime = await factory.open_request(SessionRequest())
    try:
        with models.override_allow_model_requests(True):
            yield runtime
    finally:
        await runtime.aclose()


async def turn(runtime: SessionRuntime, prompt: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [event async for event in runtime.run_turn(prompt)]

    return await asyncio.wait_for(collect(), GUARD)


def user_content(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The content items of the last user message of a chat-completions request body."""
    user = [message for message in request["messages"] if message["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def image_urls(request: dict[str, Any]) -> list[str]:
    return [item["image_url"]["url"] for message in request["messages"] if isinstance(message.get("content"), list)
            for item in message["content"] if item.get("type") == "image_url"]


def attached(events: list[TurnEvent]) -> PromptAttached:
    found = [event for event in events if isinstance(event, PromptAttached)]
    assert len(found) == 1, events
    return found[0]


async def test_an_image_goes_to_a_vision_model_as_a_data_url_of_its_exact_bytes(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
    data = png(1280, 720, body=b"pixels")
    with openai_chat_server(ChatServerState(reply="a screenshot")) as (base_url, served):
        async with session(tmp_path, VISION, base_url) as runtime:
            (tmp_path / "work" / "shot.png").write_bytes(data)
            events = await turn(runtime, "what is in @shot.png")
            session_id = runtime.info.session_id
    assert any(isinstance(event, TurnFinished) for event in events), events
    assert attached(events).lines == (f"[image: shot.png · 1280×720 · {len(data)} bytes]",)
    assert image_urls(served.requests[-1]) == ["data:image/png;base64," + base64.b64encode(data).decode()]
    texts = [item["text"] for item in user_content(served.requests[-1]) if item["type"] == "text"]
    assert texts[0] == "what is in @shot.png" and "PNG, 1280×720 pixels" in texts[1]
    # on disk: the prompt keeps the image byte for byte, and a copy is saved for the placeholder to name
    raw = (tmp_path / "data" / "sessions" / session_id / "messages.json").read_bytes()
    prompt = ModelMessagesTypeAdapter.validate_json(raw)[0].parts[-1]
    assert [item.data for item in prompt.content if not isinstance(item, str)] == [data]  # type: ignore[union-attr]
    saved = list((tmp_path / "data" / "large_tool_results").glob("image-*.png"))
    assert [path.read_bytes() for path in saved] == [data]


async def test_a_model_that_reads_no_images_is_told_there_was_one(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
    with openai_chat_server(ChatServerState(reply="ok")) as (base_url, served):
        async with session(tmp_path, TEXT_ONLY, base_url) as runtime:
            (tmp_path / "work" / "photo.jpg").write_bytes(jpeg(640, 480))
            events = await turn(runtime, "see @photo.jpg")
    assert any(isinstance(event, TurnFinished) for event in events), events
    body = json.dumps(served.requests[-1])
    assert image_urls(served.requests[-1]) == [] and "image_url" not in body
    note = user_content(served.requests[-1])[1]["text"]
    assert "JPEG, 640×480 pixels" in note and "cannot see images" in note


async def test_a_pasted_path_attaches_the_image(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
    with openai_chat_server(ChatServerState(reply="ok")) as (base_url, served):
        async with session(tmp_path, VISION, base_url) as runtime:
            work = tmp_path / "work"
            (work / "shots").mkdir()
            shot = png(100, 50)
            (work / "shots" / "screen shot 1.png").write_bytes(shot)
            (work / "b.webp").write_bytes(png(10, 10))  # a PNG named .webp: the bytes decide the type
            escaped = str(work / "shots" / "screen shot 1.png").replace(" ", "\\ ")
            alone = await turn(runtime, f"'{work / 'shots' / 'screen shot 1.png'}'")
            among = await turn(runtime, f"compare {escaped} with file://{work / 'b.webp'} please")
    assert attached(alone).lines == (f"[image: shots/screen shot 1.png · 100×50 · {len(shot)} bytes]",)
    assert [line.split(" · ")[0] for line in attached(among).lines] == ["[image: shots/screen shot 1.png",
                                                                          "[image: b.webp"]
    assert len(image_urls(served.requests[0])) == 1
    assert [url.split(",")[0] for url in image_urls(served.requests[-1])][-2:] == ["data:image/png;base64"] * 2


async def test_oversized_and_unreadable_images_are_refused_in_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
    with openai_chat_server(ChatServerState(reply="ok")) as (base_url, served):
        async with session(tmp_path, VISION, base_url) as runtime:
            work = tmp_path / "work"
            (work / "huge.png").write_bytes(png(100, 100, body=b"\0") + b"\0" * MAX_IMAGE_BYTES)
            (work / "wide.png").write_bytes(png(20_000, 10))
            (work / "fake.gif").write_text("GIF? no, just text")
            outside = tmp_path / "outside.png"
            outside.write_bytes(png(10, 10))
            (work / "link.png").symlink_to(outside)
            events = await turn(runtime, "look @huge.png @wide.png @fake.gif @link.png")
    assert any(isinstance(event, TurnFinished) for event in events), "refusals never fail the turn"
    assert not any(isinstance(event, TurnFailed) for event in events)
    refused = attached(events).refused
    assert len(refused) == 4 and all("\n" not in line for line in refused)
    size = (work / "huge.png").stat().st_size
    assert refused[0] == f"huge.png (image of {size:,} bytes, over the cap of {MAX_IMAGE_BYTES:,} bytes)"
    assert refused[1] == "wide.png (image of 20000×10 pixels, over the cap of 8,000 pixels a side)"
    assert refused[2] == "fake.gif (not a readable PNG, JPEG, GIF or WebP image)"
    assert refused[3].startswith("link.png (") and "outside" in refused[3]
    assert image_urls(served.requests[-1]) == []


async def test_the_offline_model_describes_the_image(tmp_path: Path) -> None:
    async with session(tmp_path, "offline", settings=Settings()) as runtime:
        (tmp_path / "work" / "diagram.gif").write_bytes(png(64, 32))
        events = await turn(runtime, "what is this @diagram.gif")
    answer = next(event for event in events if isinstance(event, TurnFinished)).output
    assert answer.startswith("You attached diagram.gif: a PNG image, 64×32 pixels, ")
    assert "cannot see images" in answer


def _attacher(tmp_path: Path, *, vision: bool = True) -> tuple[MentionAttacher, Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    data = work / ".deep-tui"
    attacher = MentionAttacher(PathPolicy(workdir=work, data_root=data), data / "large_tool_results",
                               lambda: 1_000, lambda _event: None, takes_images=lambda: vision)
    return attacher, work


def test_hostile_files_named_like_images_are_refused_without_reading_forever(tmp_path: Path) -> None:
    attacher, work = _attacher(tmp_path)
    os.mkfifo(work / "pipe.png")  # opening it must not wait for a writer
    (work / "dir.gif").mkdir()
    (work / "data.webp").write_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8X")  # a header cut short
    (work / ".deep-tui").mkdir()
    (work / ".deep-tui" / "saved.png").write_bytes(png(10, 10))
    prompt = "@pipe.png @dir.gif @data.webp @.deep-tui/saved.png"
    result = attacher.attach(prompt)
    assert result.content == [prompt], "nothing is attached"
    notes = {attachment.path: attachment.note for attachment in result.attachments}
    assert all(attachment.kind == "refused" for attachment in result.attachments), result.attachments
    assert notes["pipe.png"] == "not a regular file" and notes["dir.gif"] == "not a regular file"
    assert notes["data.webp"] == "not a readable PNG, JPEG, GIF or WebP image"
    assert "data directory" in notes[".deep-tui/saved.png"]


def test_an_image_in_a_prompt_of_many_files_is_attached_after_the_texts(tmp_path: Path) -> None:
    attacher, work = _attacher(tmp_path, vision=True)
    (work / "a.py").write_text("x = 1\n")
    (work / "b.png").write_bytes(png(20, 10))
    result = attacher.attach("compare @b.png with @a.py")
    assert isinstance(result.content, list)
    kinds = [type(item).__name__ for item in result.content]
    assert kinds == ["str", "str", "str", "BinaryContent"]
    assert [attachment.kind for attachment in result.attachments] == ["text", "image"]


def test_an_exported_prompt_names_its_image_once_and_carries_no_bytes(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.store.export import read_document, render_markdown
    from tui.store.meta import SessionMeta

    attacher, work = _attacher(tmp_path)
    (work / "shot.png").write_bytes(png(1280, 720))
    content = attacher.attach("see @shot.png").content
    assert isinstance(content, list)
    document = read_document(SessionMeta(id="x"), [ModelRequest(parts=[UserPromptPart(content)])], tmp_path)
    markdown = render_markdown(document)
    assert "PNG, 1280×720 pixels" in markdown and "[binary]" not in markdown
    assert base64.b64encode(png(1280, 720)).decode()[:40] not in markdown
