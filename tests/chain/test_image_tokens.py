"""Image tokens by the provider's published rule (OpenAI tiles and patches, Anthropic w×h/750, Gemini), the
fallback for the others, and the estimate of a prompt carrying an image."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

from tests.support.images import png
from tui.chain.estimate import BINARY_TOKENS, TokenEstimator
from tui.chain.image_tokens import (
    FALLBACK_RULE,
    anthropic,
    gemini_tiles,
    image_rule,
    known_image_rule,
    openai_patches,
    openai_tiles,
)


def test_openai_tiles_match_the_published_examples() -> None:
    gpt_4o = openai_tiles(85, 170)
    assert gpt_4o(1024, 1024) == 765  # 4 tiles
    assert gpt_4o(2048, 4096) == 1105  # fitted to 1024×2048, then 768×1536: 6 tiles
    assert gpt_4o(512, 512) == 255


def test_openai_patches_match_the_published_examples() -> None:
    assert openai_patches(1.62)(1024, 1024) == 1659  # 1024 patches × 1.62
    assert openai_patches(1.62)(1800, 2400) == 2353  # scaled to 1452 patches


def test_anthropic_is_width_times_height_over_750_capped() -> None:
    assert anthropic(200, 200) == 54
    assert anthropic(1000, 1000) == 1334
    assert anthropic(8000, 8000) == 1600


def test_gemini_counts_258_per_tile() -> None:
    assert gemini_tiles(300, 300) == 258
    assert gemini_tiles(1280, 720) == 516


@pytest.mark.parametrize(("key", "name"), [
    ("openai:gpt-4o", "openai tiles 85+170"), ("openai:gpt-4o-2024-08-06", "openai tiles 85+170"),
    ("openai:gpt-4o-mini", "openai tiles 2833+5667"), ("openai:gpt-4.1-mini", "openai patches ×1.62"),
    ("openai:o3", "openai tiles 75+150"), ("openai:gpt-5.1", "openai tiles 70+140"),
    ("anthropic:claude-sonnet-4-5", "anthropic w×h/750"), ("bedrock:us.anthropic.claude-3-7", "anthropic w×h/750"),
    ("google-gla:gemini-2.5-pro", "gemini tiles"), ("google-gla:gemini-3-pro-preview", "gemini 3 fixed"),
    ("openrouter:openai/gpt-4.1", "openai tiles 85+170"),
])
def test_the_rule_is_chosen_by_the_model_name(key: str, name: str) -> None:
    rule = known_image_rule(key)
    assert rule is not None and rule.name == name


@pytest.mark.parametrize("key", ["function:offline", "test:test", "openai:gpt-loop", "openai:o3-mini",
                                 "ollama:llama3.2", "unknown"])
def test_models_with_no_known_rule_count_by_the_fallback(key: str) -> None:
    assert known_image_rule(key) is None
    assert image_rule(key) is FALLBACK_RULE
    assert FALLBACK_RULE.tokens(1280, 720) == max(openai_tiles(85, 170)(1280, 720), anthropic(1280, 720))


def test_a_prompt_image_is_estimated_by_the_models_rule() -> None:
    message = ModelRequest(parts=[UserPromptPart(["look", BinaryContent(png(1024, 1024), media_type="image/png")])])
    estimator = TokenEstimator()
    estimator.use_image_rule(openai_tiles(85, 170))
    with_tiles = estimator.message_tokens(message)
    estimator.use_image_rule(anthropic)
    with_anthropic = estimator.message_tokens(message)
    assert with_anthropic - with_tiles == anthropic(1024, 1024) - 765, "the cache is dropped with the rule"
    unreadable = ModelRequest(parts=[UserPromptPart(["look", BinaryContent(b"\x89PNG junk", media_type="image/png")])])
    assert estimator.message_tokens(unreadable) >= BINARY_TOKENS
