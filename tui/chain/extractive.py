"""A deterministic summary built from the span itself, for when no summarizer model is available."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.base.metadata_keys import EVICTED_PATH_KEY
from tui.chain.retention import extract_identifiers
from tui.chain.transcript import cap, prompt_text

MAX_PROMPTS = 12
MAX_VALUES = 80
MIN_BUDGET_CHARS = 1_200
MAX_BUDGET_CHARS = 12_000


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def extractive_summary(span: Sequence[ModelMessage], *, previous_summary: str | None, focus: str | None,
                       must_include: Sequence[str] = ()) -> str:
    """The summary sections filled from the span: prompts, tool activity, errors, last answer, identifiers."""
    prompts: list[str] = []
    answers: list[str] = []
    tools: Counter[str] = Counter()
    files: list[str] = []
    errors: list[str] = []
    for message in span:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    prompts.append(prompt_text(part))
                elif isinstance(part, RetryPromptPart):
                    errors.append(_one_line(part.model_response(), 200))
                elif isinstance(part, ToolReturnPart):
                    saved = part.metadata.get(EVICTED_PATH_KEY) if isinstance(part.metadata, dict) else None
                    if isinstance(saved, str) and saved not in files:
                        files.insert(0, saved)  # where detail can be read back: kept before anything else
                    text = part.model_response_str()
                    if "error" in text[:200].lower():
                        errors.append(f"{part.tool_name}: {_one_line(text, 200)}")
        elif isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, TextPart) and part.content.strip():
                    answers.append(part.content)
                elif isinstance(part, ToolCallPart):
                    tools[part.tool_name] += 1
                    path = part.args_as_dict().get("path") if part.args else None
                    if isinstance(path, str) and path not in files:
                        files.append(path)
    values = list(dict.fromkeys([*must_include, *extract_identifiers(span)]))[:MAX_VALUES]
    activity = ", ".join(f"{name} ×{count}" for name, count in tools.most_common())
    sections: list[tuple[str, str]] = []
    if previous_summary:
        sections.append(("Earlier summary (condensed)", previous_summary))
    sections += [
        ("Session intent", _one_line(prompts[0], 300) if prompts else "(no user prompt in this span)"),
        ("User instructions and constraints (verbatim)",
         "\n".join(f"- {cap(p, 400)}" for p in prompts[-MAX_PROMPTS:]) or "- (none)"),
        ("Key decisions", "\n".join(f"- {_one_line(a, 200)}" for a in answers[-5:]) or "- (none recorded)"),
        ("Files and artifacts", ", ".join(files[:40]) or "(none)"),
        ("Errors and fixes", "\n".join(f"- {e}" for e in errors[-8:]) or "- (none)"),
        ("Progress (done / in progress / todo)",
         f"Done: {len(prompts)} user requests handled; tool calls: {activity or 'none'}."),
        ("Current state", answers[-1] if answers else "(no answer in this span)"),
        ("Next steps", "Continue from the most recent user request below; use search_conversation_history "
                       "for any detail of these earlier turns."),
        ("Exact values", ", ".join(values) or "(none)"),
    ]
    span_chars = sum(len(text) for text in (*prompts, *answers)) + 40 * sum(tools.values())
    budget = max(MIN_BUDGET_CHARS, min(MAX_BUDGET_CHARS, span_chars // 4))
    per_section = max(120, budget // (len(sections) + 1))
    lines = ["(extractive summary — written without a language model)"]
    if focus:
        lines.append(f"Focus requested: {focus}")
    for heading, body in sections:
        limit = per_section * 2 if heading in ("Exact values", "User instructions and constraints (verbatim)") else per_section
        lines += ["", f"## {heading}", cap(body, limit)]
    return "\n".join(lines)
