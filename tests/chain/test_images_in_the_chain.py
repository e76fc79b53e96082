"""Images go through the chain (issue 33.3), against the loopback OpenAI-chat server counting each request as
the provider does (text at four characters a token, each image by OpenAI's published tile rule for gpt-4o):

- the gauge counts an image by the model's rule;
- an image of a turn older than the protection window is sent as a one-line placeholder naming its saved copy,
  while messages.json keeps it byte for byte;
- in an 8k window, twenty images never make a request over the window;
- after ``/model`` to a model that reads no images, the old images go as placeholders.
"""

from __future__ import annotations

import base64
import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import BinaryContent, ModelMessagesTypeAdapter

from tests.agent.test_images import VISION, image_urls, session, turn
from tests.support.images import png
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.turn_events import TurnFailed, TurnFinished
from tui.base.config import ContextSettings, Settings
from tui.base.image_header import read_image_header
from tui.chain.events import CompactionFinished, UsageEvent
from tui.text.attachment_text import IMAGE_PLACEHOLDER_OPEN

WINDOW = 8_000


def gpt_4o_image_tokens(width: int, height: int) -> int:
    """OpenAI's rule, written out here from its documentation (not deep-tui's code): fit in 2048², short side to
    768, 85 + 170 per 512-px tile."""
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def provider_count(payload: dict[str, Any]) -> int:
    """A request as the provider counts it: its text and tool definitions at four characters a token (the image
    data left out), plus each image by the tile rule."""
    stripped = copy.deepcopy(payload)
    images = 0
    for message in stripped.get("messages", []):
        for item in message["content"] if isinstance(message.get("content"), list) else []:
            if item.get("type") == "image_url":
                header = read_image_header(base64.b64decode(item["image_url"]["url"].split(",", 1)[1]))
                assert header is not None
                images += gpt_4o_image_tokens(header.width, header.height)
                item["image_url"]["url"] = ""
    text = len(json.dumps(stripped.get("messages", []))) + len(json.dumps(stripped.get("tools", [])))
    return text // 4 + images


def placeholders(payload: dict[str, Any]) -> list[str]:
    return [item["text"] for message in payload["messages"] if isinstance(message.get("content"), list)
            for item in message["content"] if item.get("type") == "text"
            and item["text"].startswith(IMAGE_PLACEHOLDER_OPEN)]


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")


def settings(base_url: str, window: int = WINDOW) -> Settings:
    from tests.agent.test_images import FAST
    return Settings(base_url=base_url, provider=FAST, context=ContextSettings(window=window))


async def test_the_gauge_counts_an_image_by_the_models_rule(tmp_path: Path, key: None) -> None:
    with openai_chat_server(ChatServerState(reply="ok", count_prompt=provider_count)) as (base_url, _served):
        async with session(tmp_path, VISION, settings=settings(base_url, 200_000)) as runtime:
            (tmp_path / "work" / "big.png").write_bytes(png(2048, 4096))
            usage: list[UsageEvent] = []
            runtime.subscribe(lambda event: usage.append(event) if isinstance(event, UsageEvent)
                                           else None)
            await turn(runtime, "hello")
            before = usage[-1].tokens
            await turn(runtime, "and @big.png")
            assert usage[-1].tokens - before >= 1105, "the image counts 1,105 tokens for gpt-4o, not a flat guess"
            assert runtime.context_breakdown().slices  # the /context report carries an "images" row
            assert any(row.label == "images" and row.tokens >= 1105 for row in runtime.context_breakdown().slices)


async def test_an_old_image_is_sent_as_a_placeholder_and_kept_whole_on_disk(tmp_path: Path, key: None) -> None:
    images = {f"shot{n}.png": png(1280, 720, body=bytes([n])) for n in range(6)}
    with openai_chat_server(ChatServerState(reply="seen", count_prompt=provider_count)) as (base_url, served):
        async with session(tmp_path, VISION, settings=settings(base_url)) as runtime:
            for name, data in images.items():
                (tmp_path / "work" / name).write_bytes(data)
            compactions: list[CompactionFinished] = []
            runtime.subscribe(lambda event: compactions.append(event)
                                           if isinstance(event, CompactionFinished) else None)
            for name in images:
                events = await turn(runtime, f"what is in @{name} now")
                assert any(isinstance(event, TurnFinished) for event in events), events
            session_id = runtime.info.session_id
    chat = [request for request in served.requests if request["messages"][-1]["role"] == "user"]
    last = chat[-1]
    assert image_urls(last)[-1] == "data:image/png;base64," + base64.b64encode(images["shot5.png"]).decode(), \
        "the running turn's image is sent whole"
    lines = placeholders(last)
    assert lines and lines[0].startswith(f"{IMAGE_PLACEHOLDER_OPEN}shot0.png · 1280×720 · ")
    assert all("\n" not in line and "large_tool_results/image-" in line for line in lines)
    saved = Path(lines[0].split("saved at ", 1)[1].rstrip("]"))
    assert saved.read_bytes() == images["shot0.png"], "the placeholder names the image's saved copy"
    assert any(event.images_replaced for event in compactions)
    raw = (tmp_path / "data" / "sessions" / session_id / "messages.json").read_bytes()
    recorded = [item.data for message in ModelMessagesTypeAdapter.validate_json(raw) for part in message.parts
                if part.part_kind == "user-prompt" and not isinstance(part.content, str)
                for item in part.content if isinstance(item, BinaryContent)]
    assert recorded == list(images.values()), "every image is on disk byte for byte"


async def test_twenty_images_in_an_8k_window_never_send_a_request_over_it(tmp_path: Path, key: None) -> None:
    with openai_chat_server(ChatServerState(reply="seen", count_prompt=provider_count)) as (base_url, served):
        async with session(tmp_path, VISION, settings=settings(base_url)) as runtime:
            for number in range(20):
                name = f"screen{number}.png"
                (tmp_path / "work" / name).write_bytes(png(1280 + number, 720, body=bytes([number])))
                events = await turn(runtime, f"and this one: @{name}")
                assert not any(isinstance(event, TurnFailed) for event in events), events
    sizes = [provider_count(request) for request in served.requests]
    assert len(sizes) >= 20 and max(sizes) <= WINDOW, sizes
    assert any(placeholders(request) for request in served.requests), "the old images made room"
    assert sum(len(image_urls(request)) for request in served.requests) >= 20, "each turn sent its own image"


async def test_after_switching_to_a_model_that_reads_no_images_old_images_go_as_placeholders(
        tmp_path: Path, key: None) -> None:
    with openai_chat_server(ChatServerState(reply="ok", count_prompt=provider_count)) as (base_url, served):
        async with session(tmp_path, VISION, settings=settings(base_url, 200_000)) as runtime:
            (tmp_path / "work" / "shot.png").write_bytes(png(640, 480))
            await turn(runtime, "look @shot.png")
            assert len(image_urls(served.requests[-1])) == 1
            await runtime.switch_model("openai-chat:gpt-loop")
            events = await turn(runtime, "and now?")
            assert any(isinstance(event, TurnFinished) for event in events), events
    assert image_urls(served.requests[-1]) == []
    assert placeholders(served.requests[-1])[0].startswith(f"{IMAGE_PLACEHOLDER_OPEN}shot.png · 640×480")
