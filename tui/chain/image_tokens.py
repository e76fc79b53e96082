"""What an image costs in a request, by the provider's own published rule where one is known.

- OpenAI, tiles (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3; detail "auto" taken as "high"): the image is fitted
  into 2048×2048, then scaled down until its short side is at most 768 px; it costs a base plus a price per
  512×512 tile it covers (85 + 170 per tile for gpt-4o; 2833 + 5667 for gpt-4o-mini; 75 + 150 for o1/o3;
  70 + 140 for gpt-5).
- OpenAI, patches (gpt-4.1-mini/nano, gpt-5-mini/nano, o4-mini): 32×32 patches, at most 1536 (the image is
  scaled down to fit), times the model's multiplier.
- Anthropic (claude-*): scaled down to a long edge of 1568 px, then width × height / 750, at most 1,600.
- Google (gemini-*): 258 tokens for an image whose sides are both at most 384 px, else 258 per 768×768 tile;
  Gemini 3 models: 1,120 per image (their default "high" media resolution).
- Any other model: the larger of the gpt-4o tile rule and Anthropic's rule (at most 1,600 for one image), so
  an unknown model's images are not under-counted; the calibration against the provider's own counts corrects
  the rest.

No pydantic-ai here: a rule is chosen by the model's name (``provider:model`` as the calibration keys it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

ImageTokens = Callable[[int, int], int]
"""Tokens of one image of ``width`` × ``height`` pixels."""

ANTHROPIC_MAX_TOKENS = 1_600
ANTHROPIC_LONG_EDGE = 1_568
GEMINI_TILE_TOKENS = 258
GEMINI_3_TOKENS = 1_120


def openai_tiles(base: int, per_tile: int) -> ImageTokens:
    """OpenAI's tile rule (detail "high") with this base and price per 512-px tile."""
    def tokens(width: int, height: int) -> int:
        w, h = float(width), float(height)
        if max(w, h) > 2048:
            scale = 2048 / max(w, h)
            w, h = w * scale, h * scale
        if min(w, h) > 768:
            scale = 768 / min(w, h)
            w, h = w * scale, h * scale
        return base + per_tile * math.ceil(w / 512) * math.ceil(h / 512)
    return tokens


def openai_patches(multiplier: float) -> ImageTokens:
    """OpenAI's patch rule: 32-px patches, at most 1536 (the image scaled down to fit), times ``multiplier``."""
    def tokens(width: int, height: int) -> int:
        patches = math.ceil(width / 32) * math.ceil(height / 32)
        if patches > 1536:
            shrink = math.sqrt(32 * 32 * 1536 / (width * height))
            w, h = width * shrink, height * shrink
            shrink *= min(math.floor(w / 32) / (w / 32), math.floor(h / 32) / (h / 32))
            patches = min(1536, math.ceil(width * shrink / 32) * math.ceil(height * shrink / 32))
        return math.ceil(patches * multiplier)
    return tokens


def anthropic(width: int, height: int) -> int:
    """Anthropic's rule: scaled to a long edge of 1568 px, width × height / 750, at most 1,600."""
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    return min(ANTHROPIC_MAX_TOKENS, math.ceil(width * scale * height * scale / 750))


def gemini_tiles(width: int, height: int) -> int:
    """Gemini 2's rule: 258 for a small image (both sides ≤ 384 px), else 258 per 768×768 tile."""
    if width <= 384 and height <= 384:
        return GEMINI_TILE_TOKENS
    return GEMINI_TILE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


def gemini_fixed(width: int, height: int) -> int:
    """Gemini 3: a fixed count per image at the default media resolution."""
    return GEMINI_3_TOKENS


_GPT_4O_TILES = openai_tiles(85, 170)


def fallback(width: int, height: int) -> int:
    """For a model with no known rule: the larger of the gpt-4o tile rule and Anthropic's."""
    return max(_GPT_4O_TILES(width, height), anthropic(width, height))


@dataclass(frozen=True)
class ImageRule:
    """A provider's rule for image tokens, and its name for docs and tests."""

    name: str
    tokens: ImageTokens


_OPENAI_RULES: tuple[tuple[str, ImageRule], ...] = (
    # the more specific names first: "gpt-4o-mini" before "gpt-4o"
    (r"gpt-4o-mini", ImageRule("openai tiles 2833+5667", openai_tiles(2833, 5667))),
    (r"gpt-4\.1-mini|gpt-5-mini", ImageRule("openai patches ×1.62", openai_patches(1.62))),
    (r"gpt-4\.1-nano|gpt-5-nano", ImageRule("openai patches ×2.46", openai_patches(2.46))),
    (r"o4-mini", ImageRule("openai patches ×1.72", openai_patches(1.72))),
    (r"gpt-5", ImageRule("openai tiles 70+140", openai_tiles(70, 140))),
    (r"o1|o3|computer-use", ImageRule("openai tiles 75+150", openai_tiles(75, 150))),
    (r"gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo", ImageRule("openai tiles 85+170", _GPT_4O_TILES)),
)
_OPENAI_TEXT_ONLY = r"(?:o1-mini|o1-preview|o3-mini|gpt-oss)"
"""OpenAI models that read no images (their names would otherwise match a rule above)."""
_ANTHROPIC = ImageRule("anthropic w×h/750", anthropic)
_GEMINI_3 = ImageRule("gemini 3 fixed", gemini_fixed)
_GEMINI = ImageRule("gemini tiles", gemini_tiles)
FALLBACK_RULE = ImageRule("fallback", fallback)


def _model_name(model_key: str) -> str:
    """The model's own name in ``provider:model`` (or ``vendor/model``, ``vendor.model-v1``), lower case."""
    return model_key.rpartition(":")[2].rpartition("/")[2].lower()


def known_image_rule(model_key: str) -> ImageRule | None:
    """The provider's rule for ``model_key`` (``openai:gpt-4o``), or ``None`` when the model is not one whose
    images deep-tui knows how to count (nor, then, whether it takes images at all)."""
    name = _model_name(model_key)
    if "claude" in name:
        return _ANTHROPIC
    if "gemini" in name:
        return _GEMINI_3 if re.search(r"gemini-[3-9]", name) else _GEMINI
    if re.match(_OPENAI_TEXT_ONLY + r"(?:$|[-.:@])", name):
        return None
    for pattern, rule in _OPENAI_RULES:
        if re.match(rf"(?:{pattern})(?:$|[-.:@])", name):
            return rule
    return None


def image_rule(model_key: str) -> ImageRule:
    """The rule to count ``model_key``'s images by: the provider's where known, else :data:`FALLBACK_RULE`."""
    return known_image_rule(model_key) or FALLBACK_RULE
