"""One source per fact in the chain (issue 28): the capability and the manager import one another no more, one
function reads a summary's metadata, and the tool-name sets come from the tools' own marks."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import grimp
from pydantic_ai import FunctionToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import tui
from tests.chain.support import make_harness
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.kinds import WRITES_FILES_METADATA, ToolKinds
from tui.agent.tools.memory import MemoryFile
from tui.base import metadata_keys
from tui.base.paths import DataDir
from tui.chain import summary_message
from tui.chain.estimate import TokenEstimator
from tui.chain.retention import extract_identifiers, retention_score
from tui.chain.summary_message import make_summary_message
from tui.chain.tool_compaction import compact_tool_calls
from tui.store import messages_file

PACKAGE = Path(tui.__file__).parent


def test_no_module_of_the_chain_imports_itself_back() -> None:
    graph = grimp.build_graph("tui", exclude_type_checking_imports=False)  # a type-only import is an arrow too
    chain = sorted(module for module in graph.modules if module.startswith("tui.chain."))
    circles = [module for module in chain
               if graph.find_downstream_modules(module) & graph.find_upstream_modules(module)]
    assert circles == []
    assert "tui.chain.manager" not in graph.find_modules_directly_imported_by("tui.chain.context_capability")


def test_one_function_reads_a_summary_s_metadata_from_a_message_or_its_record() -> None:
    summary = make_summary_message("## Session intent\nfix it", strategy="summary", kept_from=7, replaced=5,
                                   retention=0.9)
    record = json.loads(ModelMessagesTypeAdapter.dump_json([summary]))[0]
    assert summary_message.summary_info is metadata_keys.summary_info
    assert metadata_keys.summary_info(summary) == metadata_keys.summary_info(record) == {
        "strategy": "summary", "kept_from": 7, "replaced": 5, "retention": 0.9}
    plain = ModelRequest(parts=[UserPromptPart("hello")])
    assert metadata_keys.summary_info(plain) is None
    assert metadata_keys.summary_info(json.loads(ModelMessagesTypeAdapter.dump_json([plain]))[0]) is None
    assert metadata_keys.summary_info({"kind": "response", "parts": record["parts"]}) is None
    assert not hasattr(messages_file, "summary_metadata")
    from tui.app.widgets import tail_blocks  # the resumed tail, drawn before pydantic-ai loads, reads it too

    assert tail_blocks.summary_info is metadata_keys.summary_info and not hasattr(tail_blocks, "_summary_info")


def test_the_tool_name_sets_come_from_the_tools_marks(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    parts = build_agent_parts(workdir=tmp_path, data_dir=data, memory=MemoryFile(tmp_path / "MEMORY.md"))
    assert parts.kinds == ToolKinds(file_writing=frozenset({"write_file", "edit_file"}),
                                    command_running=frozenset({"execute"}),
                                    memory_writing=frozenset({"write_memory", "update_memory"}))
    assert parts.approval_gate.command_tools == parts.kinds.command_running


def test_a_new_tool_marked_as_writing_files_is_compacted_as_one(tmp_path: Path) -> None:
    """A tool the chain has never heard of: its mark alone makes tier 2 point its old arguments at the file."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool_plain(toolset, metadata=WRITES_FILES_METADATA)
    def save_notes(path: str, text: str) -> str:
        """Save notes."""
        return "saved"

    kinds = ToolKinds.of(tool.tool_def for tool in toolset.tools.values())
    assert kinds.file_writing == {"save_notes"}
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("take notes")]),
        ModelResponse(parts=[ToolCallPart("save_notes", {"path": "notes.md", "text": "n" * 4_000}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("save_notes", "saved", "c1")]),
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    result = compact_tool_calls(messages, estimator=TokenEstimator(), large_results_dir=tmp_path,
                                protect_recent_tokens=0, file_writing_tools=kinds.file_writing)
    call = result.messages[1].parts[0]
    assert isinstance(call, ToolCallPart) and call.args_as_dict()[metadata_keys.ELIDED_ARG] is True
    assert "notes.md" in call.args_as_dict()["note"] and result.masked_args == 1
    unmarked = compact_tool_calls(messages, estimator=TokenEstimator(), large_results_dir=tmp_path,
                                  protect_recent_tokens=0, file_writing_tools=frozenset())
    assert unmarked.masked_args == 0


def test_the_chain_names_no_tool(tmp_path: Path) -> None:
    parts = build_agent_parts(workdir=tmp_path, data_dir=DataDir(tmp_path / "data"),
                              memory=MemoryFile(tmp_path / "MEMORY.md"))
    names = {name for toolset in parts.toolsets for name in toolset.tools}
    typed = [f"{path.name}:{node.lineno} {node.value}"
             for path in sorted((PACKAGE / "chain").glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and node.value in names]
    assert typed == [], "the agent passes tool names in (ToolKinds); the chain restates none"


def test_tool_and_argument_names_are_not_lost_identifiers() -> None:
    """Issue 29 §17: a summary that kept every file name is not flagged for leaving out `path` or `limit`."""
    span: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("look at src/app.py and tests/test_app.py")]),
        ModelResponse(parts=[TextPart("I'll call `read_file` with `path`, `offset` and `limit` on `src/app.py`."),
                             ToolCallPart("read_file", {"path": "src/app.py", "offset": 0, "limit": 400}, "r1")]),
        ModelRequest(parts=[ToolReturnPart("read_file", "     1\timport os\n[lines 1-1 of 1]", "r1")]),
        ModelResponse(parts=[TextPart("Next `grep` with `pattern` over tests/test_app.py; `ConfigError` is raised.")]),
    ]
    identifiers = extract_identifiers(span, vocabulary={"grep", "pattern", "glob"})
    assert {"src/app.py", "tests/test_app.py", "ConfigError"} <= set(identifiers)
    assert not {"path", "offset", "limit", "read_file", "grep", "pattern"} & {i.lower() for i in identifiers}
    score, missing = retention_score("Read src/app.py and tests/test_app.py; ConfigError raised.", identifiers)
    assert score == 1.0 and missing == []


async def test_the_manager_learns_the_tools_vocabulary_from_their_definitions(tmp_path: Path) -> None:
    from pydantic_ai.tools import ToolDefinition

    harness = make_harness(tmp_path)
    harness.manager.prime_fixed_tokens(["be brief"], [ToolDefinition(
        name="read_file", parameters_json_schema={"type": "object", "properties": {"path": {}, "limit": {}}})])
    assert harness.manager.compactor.tool_vocabulary == {"read_file", "path", "limit"}


async def test_a_turn_tells_of_a_memory_change_by_the_tools_mark(tmp_path: Path) -> None:
    from tui.agent.models.choice import choose_model
    from tui.agent.session.factory import RuntimeFactory, SessionRequest
    from tui.base.config import Settings
    from tui.chain.events import ChainEvent, MemoryChanged

    work = tmp_path / "work"
    work.mkdir()
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None))
    runtime = await factory.open_request(SessionRequest())
    seen: list[ChainEvent] = []
    runtime.subscribe(seen.append)
    async for _ in runtime.run_turn("remember the build uses make"):
        pass
    await runtime.aclose()
    assert any(isinstance(event, MemoryChanged) for event in seen)
