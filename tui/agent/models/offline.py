"""The offline stand-in model: deterministic, local, and calling the real tools.

With no LLM configured deep-tui still starts and every part of the chain can
be exercised. It understands a few commands (``help`` lists them); anything
else gets an honest reply saying it is offline and what is in its context.
"""

from __future__ import annotations

import json
import secrets
import shlex
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tui.base.image_header import FORMAT_NAMES
from tui.text.attachment_text import AttachmentHeader, attachment_header, human_bytes
from tui.text.message_text import typed_text
from tui.text.terminal_text import visible
from tui.text.wording import plural

OFFLINE_MODEL_NAME = "offline"
CHUNK_CHARS = 24
PREVIEW_LINES = 40

HELP_TEXT = """\
I am deep-tui's offline stand-in, not an LLM (choose one with --model, DEEP_TUI_MODEL or a provider API key).
I understand these commands, each calling the real tool:
- `read PATH` — read a file (read_file)
- `ls [PATH]` — list a directory
- `grep PATTERN [PATH]` — search file contents
- `write PATH` then the content (on the next lines, or after the path)
- `remember TEXT` — append to MEMORY.md
- `recall QUERY` — search this session's history
- `help` — this list"""


@dataclass(frozen=True)
class ToolRequest:
    tool_name: str
    args: dict[str, str]


def parse_command(prompt: str) -> ToolRequest | None:
    """The tool call a prompt asks for, or ``None`` when it is not a command."""
    stripped = prompt.strip()
    first_line, _, rest_lines = stripped.partition("\n")
    verb, _, argument = first_line.strip().partition(" ")
    verb = verb.lower()
    argument = argument.strip()
    if verb in ("read", "ls"):
        argument = argument.removeprefix("@")  # `read @app.py`: the file named as the prompt's completion writes it
    if verb == "read" and argument:
        return ToolRequest("read_file", {"path": argument})
    if verb == "ls":
        return ToolRequest("ls", {"path": argument or "."})
    if verb == "grep" and argument:
        try:
            words = shlex.split(argument)
        except ValueError:
            words = argument.split()
        args = {"pattern": words[0]}
        if len(words) > 1:
            args["path"] = words[1]
        return ToolRequest("grep", args)
    if verb == "write" and argument:
        path, _, inline = argument.partition(" ")
        content = rest_lines if rest_lines else inline
        return ToolRequest("write_file", {"path": path, "content": content + ("\n" if content else "")})
    if verb == "remember" and (argument or rest_lines):
        return ToolRequest("write_memory", {"content": "\n".join(filter(None, [argument, rest_lines]))})
    if verb == "recall" and argument:
        return ToolRequest("search_conversation_history", {"query": argument})
    return None


def _latest_prompt(messages: Sequence[ModelMessage]) -> str:
    """What the user typed last: the prompt's own text, without the files attached with ``@path``."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return typed_text(part.content)
    return ""


def _latest_images(messages: Sequence[ModelMessage]) -> list[AttachmentHeader]:
    """The images attached to the last prompt (their attachment items: the offline model reads no image)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    if isinstance(part.content, str):
                        return []
                    headers = (attachment_header(item) for item in part.content)
                    return [header for header in headers if header is not None and header.kind == "image"]
    return []


def describe_images(images: Sequence[AttachmentHeader]) -> str:
    """``You attached shot.png: a PNG image, 1280×720 pixels, 140 KB. I cannot see images…`` (empty: none)."""
    if not images:
        return ""
    described = "; ".join(
        f"{visible(image.path)}: a {FORMAT_NAMES.get(image.media_type or '', 'image')} image"
        + (f", {image.pixels[0]}×{image.pixels[1]} pixels" if image.pixels else "")
        + (f", {human_bytes(image.size_bytes, kb_decimals=0)}" if image.size_bytes is not None else "")
        for image in images)
    return f"You attached {described}. As the offline stand-in I cannot see images, only what they are.\n\n"


def _context_chars(messages: Sequence[ModelMessage]) -> int:
    total = 0
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                total += len(content)
            elif isinstance(content, list):  # a prompt with attachments: its text items (an image's line, not bytes)
                total += sum(len(item) for item in content if isinstance(item, str))
            elif isinstance(part, ToolCallPart):
                total += len(part.args_as_json_str())
    return total


def _reply_to_tool_results(request: ModelRequest) -> str | None:
    results = [part for part in request.parts if isinstance(part, (ToolReturnPart, RetryPromptPart))]
    if not results:
        return None
    pieces: list[str] = []
    for part in results:
        if isinstance(part, RetryPromptPart):
            pieces.append(f"The tool `{part.tool_name}` refused: {part.model_response().strip()}")
            continue
        if part.outcome == "denied":
            pieces.append(f"The tool `{part.tool_name}` was not run: {part.model_response_str().strip()}")
            continue
        if part.outcome in ERROR_OUTCOMES:
            pieces.append(f"The tool `{part.tool_name}` failed: {part.model_response_str(wrap_if_error=False).strip()}")
            continue
        text = part.model_response_str()
        lines = text.splitlines()
        shown = "\n".join(lines[:PREVIEW_LINES])
        more = f"\n… ({len(lines) - PREVIEW_LINES} more lines)" if len(lines) > PREVIEW_LINES else ""
        pieces.append(f"`{part.tool_name}` returned:\n\n```\n{shown}{more}\n```")
    return "\n\n".join(pieces)


def _decide(messages: Sequence[ModelMessage]) -> ToolRequest | str:
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest):
        reply = _reply_to_tool_results(last)
        if reply is not None:
            return reply
    prompt = _latest_prompt(messages)
    if prompt.strip().lower() == "help":
        return HELP_TEXT
    command = parse_command(prompt)
    if command is not None:
        return command
    tokens = (_context_chars(messages) + 3) // 4
    return (
        describe_images(_latest_images(messages)) + "I am deep-tui's offline stand-in, not an LLM, so I cannot answer that. "
        f"My context holds {plural(len(messages), 'message')} (about {tokens:,} tokens). "
        "Type `help` for the commands I can run with the real tools."
    )


def _call_id(messages: Sequence[ModelMessage]) -> str:
    """Unique like a provider's ids: the message count alone repeats after a summary or in a fork."""
    return f"offline-{len(messages)}-{secrets.token_hex(4)}"


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    decision = _decide(messages)
    if isinstance(decision, ToolRequest):
        return ModelResponse(parts=[ToolCallPart(decision.tool_name, decision.args, _call_id(messages))])
    return ModelResponse(parts=[TextPart(decision)])


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    decision = _decide(messages)
    if isinstance(decision, ToolRequest):
        yield {0: DeltaToolCall(name=decision.tool_name, json_args=json.dumps(decision.args),
                                tool_call_id=_call_id(messages))}
        return
    for start in range(0, len(decision), CHUNK_CHARS):
        yield decision[start:start + CHUNK_CHARS]


def build_offline_model() -> FunctionModel:
    """The stand-in model (streams like a real one)."""
    return FunctionModel(function=_respond, stream_function=_stream, model_name=OFFLINE_MODEL_NAME)
