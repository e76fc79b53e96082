"""Summarizer models with faults: faithful (keeps every identifier it was sent), raises, times out,
returns garbage, inflates (longer than its input), drops identifiers; ``extractive``: no model at all."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from fuzzfarm.spec import FaultKind

TIMEOUT_SECONDS = 0.3
"""The summarizer timeout the farm configures (ample for the scripted summarizers, which answer in
milliseconds, even on a loaded machine)."""
FAULT_TIMEOUT_SECONDS = 0.02
"""The timeout configured for the ``timeout`` fault, whose summarizer sleeps far past it: the chain's real
timeout fires all the same, without the farm's wall clock waiting 0.3 s for each attempt."""


def summarizer_timeout(fault: FaultKind) -> float:
    """The ``summarizer_timeout`` the farm sets for a session with ``fault``."""
    return FAULT_TIMEOUT_SECONDS if fault == "timeout" else TIMEOUT_SECONDS
_QUOTED = re.compile(r"\"([^\"\n]{4,160})\"")
_BACKTICKS = re.compile(r"`[^`\n]{2,120}`")
_TOKEN = re.compile(r"\S+")
_MEASURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|min|h|KB|MB|GB|TB|kB|KiB|MiB|GiB|%|px)(?!\w)")


def _prompt(messages: list[ModelMessage]) -> str:
    return "".join(str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart))


def faithful_summary(prompt: str) -> str:
    """Every identifier-looking token of ``prompt`` once (quotes, backticks, measures such as ``42 ms``, words
    with digits, slashes, dots or an error name), in order: short, lossy in prose, faithful in identifiers."""
    kept: dict[str, None] = {}
    for match in _QUOTED.finditer(prompt):
        kept.setdefault(f"\"{match.group(1)}\"")
    for match in _MEASURE.finditer(prompt):
        kept.setdefault(match.group(0))
    for match in _BACKTICKS.finditer(prompt):
        kept.setdefault(match.group(0))
    for match in _TOKEN.finditer(prompt):
        token = match.group(0)
        if any(ch.isdigit() for ch in token) or "/" in token or "." in token.strip(".") or "Error" in token \
                or (token.isupper() and len(token) > 3):
            kept.setdefault(token)
    return "## Session intent\nwork on the project files\n## Exact values\n" + " ".join(kept)


def summarizer_model(fault: FaultKind, seed: int) -> Model | None:
    """The summarizer for ``fault`` (``None`` for ``extractive``: deep-tui's model-free summary)."""
    if fault == "extractive":
        return None
    rng = random.Random(seed ^ 0x5EED)

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = _prompt(messages)
        if fault == "raises":
            raise RuntimeError("HTTP 500 from the summarizer")
        if fault == "timeout":
            await asyncio.sleep(TIMEOUT_SECONDS * 3)  # cancelled by the chain's timeout long before
        if fault == "garbage":
            text = "".join(rng.choice("#*_~<>[]{}()\\|\x1b\x07 abcxyz\n") for _ in range(rng.randint(1, 600)))
        elif fault == "inflate":
            text = "## Session intent\n" + prompt * 2
        elif fault == "drops":
            text = "## Session intent\nThe user and the assistant read some files and talked about them."
        else:
            text = faithful_summary(prompt)
        return ModelResponse(parts=[TextPart(text)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        response = await answer(messages, info)
        part = response.parts[0]
        assert isinstance(part, TextPart)
        yield part.content

    return FunctionModel(answer, stream_function=stream, model_name=f"summarizer-{fault}")
