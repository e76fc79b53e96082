"""A prompt whose content is a list (typed text, images, documents) reads the same everywhere (issue 11.9)."""

from __future__ import annotations

from pydantic_ai.messages import BinaryContent, ImageUrl, ModelRequest, TextContent, UserPromptPart

from tui.agent.models.offline import _latest_prompt
from tui.chain.retention import extract_identifiers
from tui.chain.transcript import render_transcript
from tui.store.search.searchable_text import message_text

PROMPT = ModelRequest(parts=[UserPromptPart([
    TextContent("compare src/app/main.py with the diagram"),
    ImageUrl("https://example.com/diagram.png"),
    BinaryContent(b"%PDF-1.7" + b"0" * 2048, media_type="application/pdf"),
])])


def test_typed_text_and_media_read_the_same_in_the_transcript_search_and_the_offline_model() -> None:
    for text in (render_transcript([PROMPT]), message_text(PROMPT), _latest_prompt([PROMPT])):
        assert "compare src/app/main.py with the diagram" in text
        assert "<TextContent>" not in text
        assert "[image: https://example.com/diagram.png]" in text
    assert "[application/pdf, 2 KB]" in render_transcript([PROMPT])
    assert "src/app/main.py" in extract_identifiers([PROMPT])
