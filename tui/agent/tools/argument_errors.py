"""A tool call with wrong arguments gets one clear line back (the model reads it, the chat shows it), not
pydantic's validation dump: which arguments were wrong or missing, and which the tool takes.

:class:`ToolArgumentErrors` turns the ``ValidationError`` of a call's arguments into a ``ModelRetry`` carrying that
line: the call is retried as pydantic-ai retries a malformed call (it counts against the tool's retries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

MAX_PROBLEMS = 4
"""At most this many problems are named (the line stays a line)."""


def expected_arguments(tool_def: ToolDefinition) -> str:
    """``path, old_text, new_text`` (optional ones marked): what the tool takes, from its JSON schema."""
    schema = tool_def.parameters_json_schema or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    names = [name if name in required else f"{name} (optional)" for name in properties]
    return ", ".join(names) if names else "no arguments"


def _location(error: Any) -> str:
    return ".".join(str(part) for part in error.get("loc", ()) if part != "")


def argument_error_line(tool_name: str, tool_def: ToolDefinition, error: ValidationError) -> str:
    """``Wrong arguments for edit_file: no argument named old_string, new_string; missing old_text, new_text. It
    takes path, old_text, new_text.``"""
    details = error.errors(include_url=False, include_input=False)
    unknown = [_location(detail) for detail in details
               if detail.get("type") in ("unexpected_keyword_argument", "extra_forbidden")]
    missing = [_location(detail) for detail in details if detail.get("type") == "missing"]
    other = [f"{_location(detail)}: {detail.get('msg', 'invalid')}" if _location(detail) else str(detail.get("msg"))
             for detail in details
             if detail.get("type") not in ("unexpected_keyword_argument", "extra_forbidden", "missing")]
    problems = ([f"no argument named {', '.join(unknown)}"] if unknown else []) + \
               ([f"missing {', '.join(missing)}"] if missing else []) + other
    shown = "; ".join(problems[:MAX_PROBLEMS]) + (f"; and {len(problems) - MAX_PROBLEMS} more"
                                                 if len(problems) > MAX_PROBLEMS else "")
    return f"Wrong arguments for {tool_name}: {' '.join(shown.split())}. It takes {expected_arguments(tool_def)}."


@dataclass
class ToolArgumentErrors(AbstractCapability[Any]):
    """Answers a call whose arguments fail validation with :func:`argument_error_line`."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def on_tool_validate_error(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                     args: Any, error: ValidationError | ModelRetry) -> Any:
        if isinstance(error, ValidationError):
            raise ModelRetry(argument_error_line(call.tool_name, tool_def, error)) from None
        raise error
