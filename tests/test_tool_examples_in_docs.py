"""Every tool call written as an example in README.md and docs/ names arguments the tool really takes (the README
once showed edit_file(old_string=…, new_string=…), which the tool refuses)."""

from __future__ import annotations

import re
from pathlib import Path

from tui.agent.shell.execute_tool import ShellState, shell_toolset
from tui.agent.shell.sandbox import Sandbox, SandboxPolicy
from tui.agent.tools.file_tools import file_toolset
from tui.agent.tools.path_policy import PathPolicy

ROOT = Path(__file__).resolve().parents[1]


def _tool_arguments(tmp_path: Path) -> dict[str, set[str]]:
    toolsets = [file_toolset(PathPolicy(workdir=tmp_path, data_root=tmp_path / "data")),
                shell_toolset(ShellState(Sandbox(SandboxPolicy(workdir=tmp_path), enabled=False)))]
    return {name: set(tool.function_schema.json_schema.get("properties", {}))
            for toolset in toolsets for name, tool in toolset.tools.items()}


def test_every_tool_example_uses_the_tools_argument_names(tmp_path: Path) -> None:
    tools = _tool_arguments(tmp_path)
    assert tools["edit_file"] >= {"path", "old_text", "new_text"}, tools
    call = re.compile(r"\b(" + "|".join(map(re.escape, tools)) + r")\(([^)\n]*)\)")
    checked = 0
    wrong: list[str] = []
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), start=1):
            for match in call.finditer(line):
                names = set(re.findall(r"(?:^|,\s*)([a-z_]+)\s*=", match.group(2)))
                names |= {name for name in re.findall(r"(?:^|,\s*)([a-z_]+)\s*(?=,|$)", match.group(2))
                          if name in tools[match.group(1)] or name.endswith("_string")}
                checked += bool(names)
                wrong += [f"{document.name}:{number}: {match.group(1)}({name}=…)"
                          for name in sorted(names - tools[match.group(1)])]
    assert checked >= 4, "the examples were found"
    assert not wrong, wrong
