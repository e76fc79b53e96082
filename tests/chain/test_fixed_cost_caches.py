"""The per-request costs the chain keeps between requests (instructions, tool definitions, their vocabulary, the
budget) are never stale: each request's figures equal what working them out afresh gives."""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from tests.chain.support import make_harness
from tui.chain.accounting import TokenAccountant
from tui.chain.budget import WindowBudget
from tui.chain.estimate import TokenEstimator, _quoted, instructions_tokens, tool_definition_tokens
from tui.chain.manager import ContextManager
from tui.chain.request_facts import ToolVocabularyCache, tool_vocabulary


@dataclass
class _Run:
    messages: list[ModelMessage]


@dataclass
class _Request:
    messages: list[ModelMessage]
    model_request_parameters: ModelRequestParameters
    model_settings: dict[str, Any] | None = None
    model: None = None


@dataclass
class _Conversation:
    manager: ContextManager
    history: list[ModelMessage] = field(default_factory=list)

    def request(self, instructions: str, tools: list[ToolDefinition], max_tokens: int | None = None) -> None:
        """One model request through the chain's hooks, ``instructions`` and ``tools`` built anew as pydantic-ai
        does for every request."""
        self.history.append(ModelRequest(parts=[UserPromptPart("next")], instructions="".join(list(instructions))))
        request = _Request(list(self.history), ModelRequestParameters(function_tools=copy.deepcopy(tools)),
                           {"max_tokens": max_tokens} if max_tokens else None)
        asyncio.run(self.manager.before_request(_Run(self.history), request))  # type: ignore[arg-type]
        self.history.append(ModelResponse(parts=[TextPart("ok")]))

    def assert_fresh(self, instructions: str, tools: list[ToolDefinition]) -> None:
        assert self.manager.fixed_tokens == instructions_tokens([instructions]) + tool_definition_tokens(tools)
        assert self.manager.compactor.tool_vocabulary == tool_vocabulary(tools)


def _tool(name: str, description: str = "Reads a file.", **properties: str) -> ToolDefinition:
    schema = {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}
    return ToolDefinition(name=name, description=description, parameters_json_schema=schema)


def test_changed_instructions_are_counted_again_equal_ones_are_not_stale(tmp_path: Path) -> None:
    conversation = _Conversation(make_harness(tmp_path, window=10_000_000).manager)
    tools = [_tool("read_file", path="string")]
    prompt = "Be careful. " * 800
    steps = [
        prompt,
        prompt,  # the same text, a new string
        prompt[:-1] + "!",  # the same length, the last character differs
        prompt[:-1] + "é",  # the same length, but it encodes longer
        prompt + "Also: be brief.",
        "",  # no instructions at all
        prompt,
    ]
    seen = set()
    for instructions in steps:
        conversation.request(instructions, tools)
        conversation.assert_fresh(instructions, tools)
        seen.add(conversation.manager.fixed_tokens)
    assert len(seen) == 4, "four different costs among the steps (a changed character of the same width costs the same)"


def test_changed_tool_definitions_are_counted_again_even_under_the_same_names(tmp_path: Path) -> None:
    conversation = _Conversation(make_harness(tmp_path, window=10_000_000).manager)
    base = [_tool("read_file", path="string", offset="integer"), _tool("grep", pattern="string")]
    steps = [
        base,
        base,  # new definitions (and schemas) of the same tools
        [_tool("read_file", "Reads a file, with line numbers, from an offset.", path="string", offset="integer"),
         _tool("grep", pattern="string")],  # a description changed
        [_tool("read_file", path="string", limit="integer"), _tool("grep", pattern="string")],  # an argument renamed
        [_tool("read_file", path="string", offset="integer")],  # a tool gone
        [*base, _tool("write_file", path="string", content="string")],  # a tool added
        [],
        base,
    ]
    for tools in steps:
        conversation.request("Be brief.", tools)
        conversation.assert_fresh("Be brief.", tools)


def test_the_vocabulary_cache_follows_the_tools_by_value() -> None:
    vocabulary = ToolVocabularyCache()
    first = [_tool("read_file", path="string")]
    assert vocabulary(first) == {"read_file", "path"}
    assert vocabulary(copy.deepcopy(first)) == {"read_file", "path"}
    first[0].parameters_json_schema["properties"]["Offset"] = {"type": "integer"}  # changed in place
    assert vocabulary(first) == {"read_file", "path", "offset"}
    assert vocabulary([]) == frozenset()
    accountant = TokenAccountant(TokenEstimator())
    before = accountant.fixed_tokens([], first)
    first[0].parameters_json_schema["properties"]["limit"] = {"type": "integer", "description": "lines at most"}
    assert accountant.fixed_tokens([], first) == tool_definition_tokens(first) > before


def test_the_budget_follows_max_tokens_a_model_switch_and_new_settings(tmp_path: Path) -> None:
    manager = make_harness(tmp_path, window=200_000).manager
    conversation = _Conversation(manager)
    tools: list[ToolDefinition] = []
    conversation.request("Be brief.", tools, max_tokens=4_321)
    assert manager.budget.reserve == 4_321
    conversation.request("Be brief.", tools, max_tokens=4_321)
    assert manager.budget.reserve == 4_321
    manager.use_model(None, None)  # the budget goes back to the window's own; the next request sets it again
    assert manager.budget.reserve != 4_321
    conversation.request("Be brief.", tools, max_tokens=4_321)
    assert manager.budget.reserve == 4_321
    assert manager.compactor.budget is manager.budget
    conversation.request("Be brief.", tools)
    assert manager.budget == WindowBudget.for_window(manager.window, manager.settings)
    manager.set_compaction(threshold=0.5)
    conversation.request("Be brief.", tools, max_tokens=1_234)
    assert manager.budget == WindowBudget.for_window(manager.window, manager.settings, 1_234)
    assert manager.compactor.budget is manager.budget


def test_quoted_length_is_json_dumps_length() -> None:
    for text in ["", "plain", 'quotes " and \\ back', "tabs\tand\nnewlines\r", "ünïcödé — ✓ 😀", "\x00\x1f\ud800"]:
        assert _quoted(text) == len(json.dumps(text))
