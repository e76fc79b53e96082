"""Skills (Agent Skills format) from the user's folder and, only when trusted, a project's ``.deep-tui/skills`` and
``.claude/skills``: names and descriptions in the instructions, bodies and resources through ``load_skill`` and
``read_skill_resource`` (through the loopback OpenAI-chat server), never through a link, capped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from tests.agent.extension_support import user_skills, write_skill
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.skills.catalog import load_skills, skills_instructions
from tui.agent.skills.skill_tools import MAX_RESOURCE_BYTES
from tui.base.config import Settings
from tui.base.paths import DataDir


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def _system_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"] if m["role"] in ("system", "developer"))


def _tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def _run(tmp_path: Path, project: Path, trusted: bool, calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    state = ChatServerState(reply="done", tool_calls=calls)
    with openai_chat_server(state) as (base_url, served):
        factory = RuntimeFactory(settings=Settings(base_url=base_url), data_dir=DataDir(tmp_path / "data"),
                                 workdir=project, choice=choose_model("openai-chat:loopback", None),
                                 trusted_project=project if trusted else None)
        runtime = await factory.open_request(SessionRequest())
        with models.override_allow_model_requests(True):
            async for _ in runtime.run_turn("go"):
                pass
        await runtime.aclose()
    return served.requests


def test_user_and_trusted_project_skills_project_wins_untrusted_inert(project: Path) -> None:
    write_skill(user_skills(), "review", "User review checklist", "USER BODY")
    write_skill(user_skills(), "deploy", "How we deploy", "DEPLOY BODY")
    write_skill(project / ".claude" / "skills", "review", "Project review rules", "PROJECT BODY")
    write_skill(project / ".deep-tui" / "skills", "lint", "Project lint rules", "LINT BODY")

    untrusted = load_skills(project_root=None)
    assert sorted(untrusted.skills) == ["deploy", "review"]
    assert untrusted.skills["review"].origin == "user"

    trusted = load_skills(project_root=project)
    assert sorted(trusted.skills) == ["deploy", "lint", "review"]
    assert trusted.skills["review"].description == "Project review rules"
    assert trusted.skills["review"].origin == "project"
    text = skills_instructions(trusted)
    assert "- lint (project): Project lint rules" in text
    assert "BODY" not in text  # only names and descriptions


def test_links_and_bad_skills_are_skipped_with_a_reason(project: Path, tmp_path: Path) -> None:
    outside = write_skill(tmp_path / "elsewhere", "stolen", "Outside the project", "SECRET")
    skills = project / ".deep-tui" / "skills"
    skills.mkdir(parents=True)
    os.symlink(outside, skills / "stolen")
    linked = skills / "linked-file"
    linked.mkdir()
    os.symlink(outside / "SKILL.md", linked / "SKILL.md")
    bad = skills / "nodesc"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: nodesc\n---\nbody", encoding="utf-8")
    catalog = load_skills(project_root=project)
    assert catalog.skills == {}
    joined = "\n".join(catalog.warnings)
    assert "symbolic link" in joined and "no description" in joined


async def test_the_model_loads_a_skill_and_its_resource_through_the_loopback_server(tmp_path: Path,
                                                                                   project: Path) -> None:
    write_skill(project / ".deep-tui" / "skills", "pdf", "Fill PDF forms", "Use forms.md for the steps.",
                resources={"forms.md": "STEP ONE", "docs/deep.md": "NESTED"})
    calls = [("c1", "load_skill", json.dumps({"skill_name": "pdf"})),
             ("c2", "read_skill_resource", json.dumps({"skill_name": "pdf", "resource_name": "forms.md"})),
             ("c3", "read_skill_resource", json.dumps({"skill_name": "pdf", "resource_name": "docs/deep.md"}))]
    requests = await _run(tmp_path, project, True, calls)
    assert "- pdf (project): Fill PDF forms" in _system_text(requests[0])
    assert "Use forms.md" not in _system_text(requests[0])
    results = _tool_results(requests[-1])
    assert "Use forms.md for the steps." in results[0]
    assert results[1] == "STEP ONE" and results[2] == "NESTED"


async def test_an_untrusted_projects_skills_are_not_offered(tmp_path: Path, project: Path) -> None:
    write_skill(project / ".claude" / "skills", "pdf", "Fill PDF forms", "BODY")
    requests = await _run(tmp_path, project, False, [("c1", "load_skill", json.dumps({"skill_name": "pdf"}))])
    assert "Fill PDF forms" not in _system_text(requests[0])
    tools = [tool["function"]["name"] for tool in requests[0].get("tools", [])]
    assert "load_skill" not in tools


async def test_resources_never_leave_the_skill_folder_and_are_capped(tmp_path: Path, project: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    folder = write_skill(project / ".deep-tui" / "skills", "pdf", "Fill PDF forms", "BODY",
                         resources={"big.txt": "x" * (MAX_RESOURCE_BYTES + 1)})
    os.symlink(tmp_path / "secret.txt", folder / "link.txt")
    os.symlink(tmp_path, folder / "dirlink")
    calls = [(f"c{i}", "read_skill_resource", json.dumps({"skill_name": "pdf", "resource_name": name}))
             for i, name in enumerate(["../../../secret.txt", "link.txt", "dirlink/secret.txt", "/etc/passwd",
                                       "big.txt", "missing.md"])]
    calls.append(("c9", "load_skill", json.dumps({"skill_name": "nope"})))
    requests = await _run(tmp_path, project, True, calls)
    results = _tool_results(requests[-1])
    assert len(results) == 7
    assert not any("TOP SECRET" in result or "root:" in result for result in results)
    assert "'..'" in results[0]
    assert "symbolic link" in results[1] and "symbolic link" in results[2]
    assert "relative" in results[3]
    assert f"{MAX_RESOURCE_BYTES:,} bytes" in results[4]
    assert "no file missing.md" in results[5]
    assert "no skill named 'nope'" in results[6] and "pdf" in results[6]
