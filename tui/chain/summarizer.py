"""Tier 3's summarizer: an LLM summary of the whole span, or an extractive one without a model."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model

from tui.chain.estimate import TokenEstimator
from tui.chain.extractive import extractive_summary
from tui.chain.transcript import cap, dense_extract, render_transcript

SUMMARY_SECTIONS = (
    "Session intent",
    "User instructions and constraints (verbatim)",
    "Key decisions",
    "Files and artifacts",
    "Errors and fixes",
    "Progress (done / in progress / todo)",
    "Current state",
    "Next steps",
    "Exact values",
)

SUMMARIZER_INSTRUCTIONS = (
    "You condense the earlier part of a conversation between a user and a coding agent, so the agent can "
    "continue the work after those turns leave its context. The agent will see only your summary and the "
    "recent turns. Write Markdown with exactly these level-2 sections, in order: "
    + "; ".join(SUMMARY_SECTIONS)
    + ". Quote user instructions and constraints verbatim. Preserve exact values: file paths, commands, "
    "numbers with units, ids, error names and messages. If an earlier summary is given, merge it: keep what "
    "still matters, update progress. Be dense; no preamble. The agent's todo list (its write_todos calls) and "
    "the user's standing instructions (/keep) are kept outside the conversation and given to the agent with "
    "every request: do not repeat them; under Progress, say only what the list does not."
)

DEFAULT_CHUNK_TOKENS = 100_000
TOOL_OUTPUT_CAP = 6_000
"""Characters of one tool output sent to the summarizer (a dense extract when longer)."""
PREVIOUS_SUMMARY_SHARE = 0.25
"""At most this share of a summarizer request is the earlier summary it merges."""
_SECRET_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]+"),
    re.compile(r"(?i)(bearer|api[_-]?key|token|secret|password)([\s:=\"']+)[^\s\"',]+"),
    re.compile(r"\b[A-Za-z0-9_\-]{24,}\b"),
)


class SummarizerError(Exception):
    """The summarizer failed; ``str()`` is a reason safe to show and log (secrets redacted)."""


def redact(text: str) -> str:
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) + m.group(2) + "[redacted]") if m.re.groups == 2 else "[redacted]", text)
    return text


def _reason(error: BaseException) -> str:
    first_line = next((line for line in str(error).splitlines() if line.strip()), "")
    detail = redact(first_line.strip())[:160]
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


class Summarizer:
    """Summarizes spans of history; ``model=None`` gives the deterministic extractive summary."""

    def __init__(self, model: Model | None, *, timeout: float = 120, chunk_tokens: int | None = None) -> None:
        self.model = model
        self.timeout = timeout
        window = model.context_window if model is not None else None
        self.chunk_tokens = chunk_tokens or (window // 2 if window else DEFAULT_CHUNK_TOKENS)
        self._agent: Agent[None, str] | None = (
            Agent(model, output_type=str, instructions=SUMMARIZER_INSTRUCTIONS) if model is not None else None
        )
        self.responses: list[ModelResponse] = []
        """The summarizer model's responses not yet priced (the session takes them: ``tui.agent.models.cost``)."""

    async def summarize(self, span: Sequence[ModelMessage], *, previous_summary: str | None,
                        focus: str | None, must_include: Sequence[str] = ()) -> str:
        """The summary of ``span`` (merged with ``previous_summary``); raises :class:`SummarizerError`."""
        if self._agent is None:
            return extractive_summary(span, previous_summary=previous_summary, focus=focus,
                                      must_include=must_include)
        summary = previous_summary
        chunks = self._chunks(span)
        for number, chunk in enumerate(chunks, start=1):
            last = number == len(chunks)
            prompt = self._prompt(chunk, summary, focus, must_include if last else (),
                                  part=(number, len(chunks)))
            summary = await self._run(prompt)
        return summary or ""

    def _chunks(self, span: Sequence[ModelMessage]) -> list[Sequence[ModelMessage]]:
        estimator = TokenEstimator()
        chunks: list[Sequence[ModelMessage]] = []
        start, size = 0, 0
        for index, message in enumerate(span):
            tokens = estimator.message_tokens(message)
            if size and size + tokens > self.chunk_tokens:
                chunks.append(span[start:index])
                start, size = index, 0
            size += tokens
        chunks.append(span[start:])
        return chunks

    def _prompt(self, chunk: Sequence[ModelMessage], previous: str | None, focus: str | None,
                must_include: Sequence[str], *, part: tuple[int, int]) -> str:
        """One summarizer request, never larger than ``chunk_tokens`` (its window's share for the input)."""
        budget_chars = self.chunk_tokens * 3  # JSON escapes make a character of prompt more than a quarter token
        sections: list[str] = []
        if previous:
            sections.append(f"<earlier_summary>\n{cap(previous, int(budget_chars * PREVIOUS_SUMMARY_SHARE))}\n"
                            "</earlier_summary>")
        if focus:
            sections.append(f"<focus>\nThe user asked this summary to focus on: {cap(focus, 2_000)}\n"
                            "Keep everything about it in detail.\n</focus>")
        if must_include:
            listed = cap("\n".join(f"- {item}" for item in must_include), budget_chars // 8)
            sections.append(f"<must_include>\nThese identifiers appear in the conversation and must appear "
                            f"verbatim in the summary:\n{listed}\n</must_include>")
        label = f" (part {part[0]} of {part[1]})" if part[1] > 1 else ""
        room = max(2_000, budget_chars - sum(len(section) for section in sections) - len(SUMMARIZER_INSTRUCTIONS) - 200)
        transcript = dense_extract(render_transcript(chunk, tool_output_cap=TOOL_OUTPUT_CAP), room)
        sections.append(f"<conversation{label}>\n{transcript}\n</conversation>")
        return "\n\n".join(sections)

    async def _run(self, prompt: str) -> str:
        assert self._agent is not None
        try:
            result = await asyncio.wait_for(self._agent.run(prompt), timeout=self.timeout)
        except TimeoutError:
            raise SummarizerError(f"the summarizer did not answer within {self.timeout:g}s") from None
        except asyncio.CancelledError:
            raise
        except Exception as error:  # any model/provider failure becomes a reported, redacted reason
            raise SummarizerError(_reason(error)) from None
        self.responses.extend(message for message in result.new_messages() if isinstance(message, ModelResponse))
        text = result.output.strip()
        if not text:
            raise SummarizerError("the summarizer returned an empty summary")
        return text
