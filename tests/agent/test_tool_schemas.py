"""Tool schemas are built once per process; every runtime's tools still run their own closures."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import FunctionToolset, Tool

from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir


def _tools(workdir: Path, memory: Path) -> dict[str, Tool[None]]:
    parts = build_agent_parts(workdir=workdir, data_dir=DataDir(workdir / ".deep-tui"), memory=MemoryFile(memory))
    return {name: tool for toolset in parts.toolsets for name, tool in toolset.tools.items()}


async def test_a_second_runtime_reuses_the_schemas_but_runs_its_own_tools(tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    for directory, text in ((first_dir, "first memory"), (second_dir, "second memory")):
        directory.mkdir()
        (directory / "MEMORY.md").write_text(text)
    first = _tools(first_dir, first_dir / "MEMORY.md")
    second = _tools(second_dir, second_dir / "MEMORY.md")
    assert first.keys() == second.keys() and {"read_file", "write_file", "read_memory"} <= first.keys()
    for name in first:
        one, two = first[name], second[name]
        assert one.tool_def == two.tool_def, name
        assert one.function_schema.validator is two.function_schema.validator, name
        assert two.function_schema.function is two.function, name
    assert first["write_file"].metadata == second["write_file"].metadata
    read_first, read_second = first["read_memory"].function_schema, second["read_memory"].function_schema
    assert "first memory" in await read_first.call({}, None)  # a plain tool: no RunContext
    assert "second memory" in await read_second.call({}, None)


def test_the_cached_schema_is_what_pydantic_ai_builds(tmp_path: Path) -> None:
    def shout(text: str, times: int = 2) -> str:
        """Repeat ``text`` loudly."""
        return text.upper() * times

    plain: FunctionToolset[None] = FunctionToolset()
    plain.tool_plain(shout)
    cached_first: FunctionToolset[None] = FunctionToolset()
    cached_second: FunctionToolset[None] = FunctionToolset()
    tool_schemas.tool_plain(cached_first)(shout)
    tool_schemas.tool_plain(cached_second)(shout)
    assert plain.tools["shout"].tool_def == cached_first.tools["shout"].tool_def == cached_second.tools["shout"].tool_def
