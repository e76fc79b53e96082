"""Retention check: the identifiers of a summarized span that its summary must still contain.

Identifiers are what a reader of the summary would need verbatim to carry on: file paths, names in
backticks, error names, numbers with units, ids and hashes, and what the user put in quotes (one found inside
another, like the hash suffix of a saved output's path, is part of it and not counted apart). They are
taken from the span itself (the whole of it, not what was sent to the summarizer), after deep-tui's own
notices are removed — "401 lines" and "553 tokens" in an eviction notice describe deep-tui's bookkeeping,
not the work. They are ranked: what the user said first, then the assistant and its tool calls, then tool
output, so the list a summary is judged on starts with what matters most. The names of the tools and of
their arguments (`read_file`, `path`, `offset`, `limit`) are the agent's vocabulary, not the work's: a summary
is not asked to keep them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Iterator, Sequence
from contextlib import suppress

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.text.message_text import prompt_text

IDENTIFIER_LIMIT = 200
TOOL_OUTPUT_SHARE = 0.5
"""At most this share of the identifiers may come from tool output (the rest is what was said and done)."""

_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b"
                   r"|\b[\w-]+\.(?:py|md|toml|json|ya?ml|txt|js|ts|tsx|rs|go|sh|cfg|ini|sql|html|css|c|h|cpp|java)\b")
_BACKTICKS = re.compile(r"`([^`\n]{2,120})`")
_NUMBER_WITH_UNIT = re.compile(r"\b\d+(?:\.\d+)?[ \t]?(?:ms|s|min|h|KB|MB|GB|TB|kB|KiB|MiB|GiB|%|px)(?![\w])"
                               r"|\bv\d+(?:\.\d+)+\b")
_ERROR_NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:Error|Exception|Warning)\b|\bE[A-Z]{3,}\b")
_HEX_ID = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_IDENTIFIER_PATTERNS = (_PATH, _BACKTICKS, _NUMBER_WITH_UNIT, _ERROR_NAME, _HEX_ID)
_QUOTED = re.compile(r"\"([^\"\n]{4,160})\"")
QUOTED_RANK = -1

_NOTICES = (
    # tier 1 (eviction): "[The whole output of grep (12,345 characters, 401 lines, about 553 tokens) was saved …]"
    re.compile(r"\(\d[\d,]* characters, \d[\d,]* lines, about \d[\d,]* tokens\)"),
    re.compile(r"Read it with read_file\([^)]*\) and page on with a higher offset\."),
    # tier 2: "[older output of X compacted to save context (12,345 characters); saved at …]"
    re.compile(r"compacted to save context \(\d[\d,]* characters\)"),
    re.compile(r"\d[\d,]* characters of [\w, ]+ elided to save context"),
    re.compile(r"read_file\(path='[^']*'(?:, \w+=\d+)*\)"),
    # previews and pages
    re.compile(r"\[… \d[\d,]* (?:lines omitted|characters cut) …\]"),
    re.compile(r"\[line cut: \d[\d,]* characters[^\]\n]*\]"),
    re.compile(r"\[line \d+, characters [\d,]+-[\d,]+ of [\d,]+\]"),
    re.compile(r"\[lines \d+-\d+ of \d+\]"),
    re.compile(r"… stopped after [\d,]+ \w+[^\n]*"),
    re.compile(r"\[deep-tui: [^\]]*\]"),
    re.compile(r"\(interrupted: [^)]*\)|\(no answer: [^)]*\)"),
)


def strip_notices(text: str) -> str:
    """``text`` without deep-tui's own bookkeeping (sizes in eviction and compaction notices, page footers)."""
    for pattern in _NOTICES:
        text = pattern.sub(" ", text)
    return text


def _matches(text: str) -> list[tuple[int, str]]:
    """(offset, identifier) in order of appearance. A match inside another one (the hash suffix of a saved
    output's path, a path in backticks) is part of it: one identifier, not two."""
    found: list[tuple[int, int, str]] = []
    for pattern in _IDENTIFIER_PATTERNS:
        for match in pattern.finditer(text):
            value = (match.group(1) if pattern.groups else match.group(0)).strip()
            if value:
                found.append((match.start(), match.end(), value))
    found.sort(key=lambda item: (item[0], -item[1]))
    kept: list[tuple[int, str]] = []
    covered_to = -1
    for start, end, value in found:
        if end <= covered_to:
            continue
        kept.append((start, value))
        covered_to = max(covered_to, end)
    return kept


def identifiers_in(text: str) -> list[str]:
    """The identifiers in one text, in order of appearance (duplicates kept; one inside another counts once)."""
    return [value for _, value in _matches(text)]


def identifier_counts(lines: Sequence[str]) -> list[int]:
    """How many identifiers each line holds once deep-tui's notices are removed (what :func:`identifiers_in`
    finds in it), from one pass of each pattern over the whole text instead of a dozen per line."""
    text = "\n".join(lines)
    for pattern in _NOTICES:  # blanked, not removed: every offset still falls on its own line
        text = pattern.sub(lambda match: " " * len(match.group(0)), text)
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    counts = [0] * len(lines)
    for start, _ in _matches(text):
        counts[bisect_right(starts, start) - 1] += 1
    return counts


def _sources(messages: Sequence[ModelMessage]) -> Iterator[tuple[int, str]]:
    """(rank, text) for every text of the span: 0 user, 1 assistant and tool calls, 2 tool output, and
    ``QUOTED_RANK`` for what the user put in quotes (taken whole)."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    text = prompt_text(part.content)
                    yield 0, text
                    for quoted in _QUOTED.finditer(text):
                        yield QUOTED_RANK, quoted.group(1)  # a quoted instruction counts whole
                elif isinstance(part, ToolReturnPart):
                    yield 2, part.model_response_str()
                elif isinstance(part, RetryPromptPart):
                    yield 2, part.model_response()
                elif isinstance(part, CompactionPart) and part.content:
                    yield 1, part.content
        elif isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, (TextPart, ThinkingPart)):
                    yield 1, part.content
                elif isinstance(part, ToolCallPart):
                    yield 1, f"{part.tool_name}({part.args_as_json_str()})"


def tool_vocabulary(messages: Sequence[ModelMessage]) -> set[str]:
    """The names of the tools called in ``messages`` and of their arguments, lower-cased."""
    names: set[str] = set()
    for message in messages:
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    names.add(part.tool_name.lower())
                    with suppress(ValueError, AssertionError):  # arguments that are not a JSON object: no names
                        names.update(str(key).lower() for key in part.args_as_dict(raise_if_invalid=True))
    return names


def extract_identifiers(messages: Sequence[ModelMessage], limit: int = IDENTIFIER_LIMIT, *,
                        vocabulary: Collection[str] = ()) -> list[str]:
    """The span's identifiers, most important first, each once (case-insensitive), at most ``limit``.

    What was said and done comes first, in order of appearance (each at its best rank); then tool output's
    first identifiers that were not said, at most ``limit × TOOL_OUTPUT_SHARE``. Tool output is scanned only
    until that many are found (it is most of a span's text). Tool and argument names — those of the calls in
    the span and ``vocabulary`` (the tools' definitions) — are not identifiers."""
    ignored = {name.lower() for name in vocabulary} | tool_vocabulary(messages)
    said: dict[str, tuple[int, int, str]] = {}
    outputs: list[str] = []
    order = 0
    for rank, text in _sources(messages):
        if rank >= 2:
            outputs.append(text)
            continue
        for identifier in [text.strip()] if rank == QUOTED_RANK else identifiers_in(strip_notices(text)):
            key = identifier.lower()
            if key in ignored:
                continue
            if key not in said or said[key][0] > rank:
                said[key] = (rank, order, identifier)
            order += 1
    chosen = [identifier for _, _, identifier in sorted(said.values())][:limit]
    room = min(int(limit * TOOL_OUTPUT_SHARE), limit - len(chosen))
    seen = set(said) | ignored
    for text in outputs:
        if room <= 0:
            break
        for identifier in _identifiers_by_chunk(text):
            key = identifier.lower()
            if key in seen:
                continue
            seen.add(key)
            chosen.append(identifier)
            room -= 1
            if room <= 0:
                break
    return chosen


def _identifiers_by_chunk(text: str, chunk_chars: int = 8_192) -> Iterator[str]:
    """:func:`identifiers_in` of ``text`` without its notices, a few kilobytes (whole lines) at a time, so a
    caller that has enough stops reading a long output early."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + chunk_chars)
        end = len(text) if end < 0 else end + 1
        yield from identifiers_in(strip_notices(text[start:end]))
        start = end


def retention_score(summary: str, identifiers: Sequence[str]) -> tuple[float, list[str]]:
    """Share of ``identifiers`` found in ``summary`` (case-insensitive) and the missing ones."""
    if not identifiers:
        return 1.0, []
    lowered = summary.lower()
    missing = [identifier for identifier in identifiers if identifier.lower() not in lowered]
    return (len(identifiers) - len(missing)) / len(identifiers), missing
