"""Subagent definitions in Claude Code's format: front matter, the user's folder, and a project's folders only when
the project is trusted (never through a link); a definition's tools and model shape the subagent's requests; its
approval dialogs name it."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent.subagent_support import Script, is_subagent, loopback_session, run_turn, task_call, tool_results
from tests.support.openai_server import ChatServerState, Reply, openai_chat_server
from tui.agent.approval.writes import WriteDecision, WriteRequest
from tui.agent.definitions.folders import definition_folders
from tui.agent.definitions.front_matter import FrontMatterError, parse_front_matter
from tui.agent.subagents.subagent_definitions import load_subagents
from tui.agent.turn_events import TurnFinished

REVIEWER = """---
name: reviewer
description: Reviews a diff for bugs. Use it after every change.
tools: Read, Grep, Glob
model: inherit
---
You review code. Report bugs with file:line.
"""


def test_front_matter_reads_what_claude_code_files_hold() -> None:
    document = parse_front_matter(
        "---\nname: x\ndescription: \"Says \\\"hi\\\"\"\ntools: [Read, 'Grep']\nlist:\n  - a\n  - b\n"
        "long: >\n  folded\n  text\n# a comment\n---\nBody here\n")
    assert document.fields == {"name": "x", "description": 'Says "hi"', "tools": ["Read", "Grep"],
                               "list": ["a", "b"], "long": "folded text"}
    assert document.body == "Body here\n"
    assert document.names("tools") == ["Read", "Grep"]
    assert parse_front_matter("no front matter").body == "no front matter"
    with pytest.raises(FrontMatterError, match="never closed"):
        parse_front_matter("---\nname: x\n")
    with pytest.raises(FrontMatterError, match="line 3"):
        parse_front_matter("---\nname: x\nthis is not a key\n---\n")
    with pytest.raises(FrontMatterError, match="twice"):
        parse_front_matter("---\nname: x\nname: y\n---\n")


def _write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def test_definitions_come_from_the_user_and_only_a_trusted_project(tmp_path: Path) -> None:
    user, project = tmp_path / "config", tmp_path / "project"
    _write(user / "agents", "reviewer.md", REVIEWER)
    _write(user / "agents", "helper.md", "---\ndescription: the user's helper\n---\nHelp.\n")
    _write(project / ".claude" / "agents", "helper.md", "---\nname: helper\ndescription: the project's helper\n---\n")
    _write(project / ".deep-tui" / "agents", "tester.md", "---\nname: tester\ndescription: runs tests\ntools: Bash\n---\n")
    _write(project / ".claude" / "agents", "broken.md", "---\nname: broken\n")
    _write(project / ".claude" / "agents", "nameless.md", "---\nname: Bad Name!\ndescription: x\n---\n")

    untrusted = load_subagents(project_root=None, user_dir=user)
    assert sorted(untrusted.definitions) == ["helper", "reviewer"]
    assert untrusted.get("helper").description == "the user's helper"  # type: ignore[union-attr]
    reviewer = untrusted.get("reviewer")
    assert reviewer is not None and reviewer.tools == ("read_file", "grep", "glob") and reviewer.model is None
    assert reviewer.prompt == "You review code. Report bugs with file:line." and reviewer.origin == "user"

    trusted = load_subagents(project_root=project, user_dir=user)
    assert sorted(trusted.definitions) == ["helper", "reviewer", "tester"]
    helper = trusted.get("helper")
    assert helper is not None and helper.description == "the project's helper" and helper.origin == "project"
    assert trusted.get("tester").tools == ("execute",)  # type: ignore[union-attr]
    assert any("broken.md" in line and "never closed" in line for line in trusted.warnings)
    assert any("nameless.md" in line for line in trusted.warnings)


def test_a_projects_linked_folder_or_file_is_not_followed(tmp_path: Path) -> None:
    user, project, outside = tmp_path / "config", tmp_path / "project", tmp_path / "outside"
    _write(outside, "evil.md", "---\nname: evil\ndescription: from outside\n---\n")
    (project / ".claude").mkdir(parents=True)
    os.symlink(outside, project / ".claude" / "agents")
    _write(project / ".deep-tui" / "agents", "ok.md", "---\nname: ok\ndescription: fine\n---\n")
    os.symlink(outside / "evil.md", project / ".deep-tui" / "agents" / "linked.md")
    os.mkfifo(project / ".deep-tui" / "agents" / "fifo.md")
    catalog = load_subagents(project_root=project, user_dir=user)
    assert sorted(catalog.definitions) == ["ok"]
    assert any("symbolic link" in line and "agents" in line for line in catalog.warnings)
    assert any("linked.md" in line for line in catalog.warnings)
    assert any("fifo.md" in line and "not a regular file" in line for line in catalog.warnings)
    assert [folder.origin for folder in definition_folders("skills", project_root=project, user_dir=user)] == [
        "user", "project", "project"]


def test_a_definitions_tools_and_model_shape_the_subagents_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(config))
    _write(config / "agents", "reviewer.md", REVIEWER.replace("model: inherit", "model: openai-chat:reviewer-model"))
    project = tmp_path / "work"
    _write(project / ".claude" / "agents", "spy.md", "---\nname: spy\ndescription: the project's own\n---\n")
    script = Script(parent=[Reply(tool_calls=(task_call("call_r", "review", "review the diff", "reviewer"),)),
                            Reply(text="reviewed")],
                    subagent=lambda payload: Reply(text="no bugs"))
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:  # the project is not trusted
                events = await run_turn(runtime, "review it")
                assert isinstance(events[-1], TurnFinished)

        asyncio.run(scenario())
    parent_tools = {tool["function"]["name"]: tool["function"] for tool in state.requests[0]["tools"]}
    assert "- reviewer: Reviews a diff for bugs." in parent_tools["task"]["description"]
    assert "spy" not in parent_tools["task"]["description"]  # an untrusted project's definitions are inert
    sub = [payload for payload in state.requests if is_subagent(payload)]
    assert len(sub) == 1 and sub[0]["model"] == "reviewer-model"
    assert {tool["function"]["name"] for tool in sub[0]["tools"]} == {"read_file", "grep", "glob"}
    assert "You review code." in json.dumps(sub[0]["messages"])
    assert tool_results(state.requests[-1]) == ["no bugs"]


def test_a_trusted_projects_definitions_are_offered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(tmp_path / "config"))
    project = tmp_path / "work"
    _write(project / ".claude" / "agents", "spy.md", "---\nname: spy\ndescription: the project's own\n---\n")
    script = Script(parent=[Reply(text="hello")])
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url, trusted_project=project) as runtime:
                await run_turn(runtime, "hi")
                assert [d.name for d in runtime.subagents.catalog.listing()] == ["spy"]

        asyncio.run(scenario())
    task = next(tool for tool in state.requests[0]["tools"] if tool["function"]["name"] == "task")
    assert "- spy: the project's own" in task["function"]["description"]


def test_a_subagents_write_asks_the_user_naming_the_subagent_and_can_be_rewound(tmp_path: Path) -> None:
    asked: list[WriteRequest] = []

    async def approver(request: WriteRequest) -> WriteDecision:
        asked.append(request)
        return WriteDecision.once()

    def subagent(payload: dict[str, Any]) -> Reply:
        if not tool_results(payload):
            return Reply(tool_calls=(("call_w", "write_file", json.dumps({"path": "notes.txt", "content": "hi\n"})),))
        return Reply(text="wrote notes.txt")

    script = Script(parent=[Reply(tool_calls=(task_call("call_n", "write the notes", "write notes.txt"),)),
                            Reply(text="done")], subagent=subagent)
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, _state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                runtime.set_write_approver(approver)
                await run_turn(runtime, "take notes")
                points = await runtime.rewind_points()  # the subagent's write took the prompt's restore point
                assert [file.path for point in points for file in point.files] == ["notes.txt"]

        asyncio.run(scenario())
    assert [request.subagent for request in asked] == ["subagent 1 (general-purpose): write the notes"]
    assert (tmp_path / "work" / "notes.txt").read_text() == "hi\n"
