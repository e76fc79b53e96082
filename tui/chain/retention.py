"""Retention check: identifiers from a summarized span that the summary must still contain."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from tui.chain.transcript import prompt_text, render_transcript

IDENTIFIER_LIMIT = 200
_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|\b[\w-]+\.(?:py|md|toml|json|ya?ml|txt|js|ts|rs|go|sh|cfg|ini|sql|html|css)\b")
_BACKTICKS = re.compile(r"`([^`\n]{2,120})`")
_NUMBER_WITH_UNIT = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|min|h|KB|MB|GB|TB|kB|k|%|px|tokens|bytes|lines)\b|\bv\d+(?:\.\d+)+\b")
_ERROR_NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:Error|Exception)\b|\bE[A-Z]{3,}\b")
_QUOTED = re.compile(r"\"([^\"\n]{4,160})\"")


def extract_identifiers(messages: Sequence[ModelMessage]) -> list[str]:
    """Paths, backticked commands, numbers with units, error names, quoted user instructions."""
    text = render_transcript(messages, tool_output_cap=4000)
    found: list[str] = []
    for pattern in (_PATH, _BACKTICKS, _NUMBER_WITH_UNIT, _ERROR_NAME):
        for match in pattern.finditer(text):
            found.append(match.group(1) if pattern.groups else match.group(0))
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    found.extend(match.group(1) for match in _QUOTED.finditer(prompt_text(part)))
    unique: list[str] = []
    seen: set[str] = set()
    for item in (value.strip() for value in found):
        if item and item.lower() not in seen:
            seen.add(item.lower())
            unique.append(item)
    return unique[:IDENTIFIER_LIMIT]


def retention_score(summary: str, identifiers: Sequence[str]) -> tuple[float, list[str]]:
    """Share of ``identifiers`` found in ``summary`` (case-insensitive) and the missing ones."""
    if not identifiers:
        return 1.0, []
    lowered = summary.lower()
    missing = [identifier for identifier in identifiers if identifier.lower() not in lowered]
    return (len(identifiers) - len(missing)) / len(identifiers), missing
