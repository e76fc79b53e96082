"""A project's ``.mcp.json`` is part of its trusted config (issue 21.4): an untrusted clone's servers never start,
``deep-tui trust`` lists them and starts them from then on, a change to the file or a link asks again, and
``--revoke`` stops them again. ``run`` is a real process talking to the loopback provider; the server is the
test MCP server, which writes a marker file (its pid) the moment it is started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.base.paths import trust_store_file, user_config_file
from tui.cli.launch import LaunchContext, ProjectTrustGate, resolve_context
from tui.cli.main import build_parser, main
from tui.trust.project import TrustChoice
from tui.trust.store import TrustStore

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-test-user-secret-0123456789"


def mcp_json(marker: Path, *, extra_args: tuple[str, ...] = ()) -> str:
    """A ``.mcp.json`` whose one server (``tester``) writes ``marker`` as soon as it starts."""
    return json.dumps({"mcpServers": {"tester": {
        "command": sys.executable, "args": ["-m", "tests.support.mcp_server", *extra_args],
        "env": {"MCP_TEST_PID_FILE": str(marker), "PYTHONPATH": str(REPO)}}}})


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned project with only a ``.mcp.json`` (no ``.deep-tui/config.toml``), as the working directory."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".mcp.json").write_text(mcp_json(tmp_path / "started"), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def deep_tui(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYDANTIC_AI_NO_BANNER": "1"}
    for name in ("DEEP_TUI_HOME", "DEEP_TUI_MODEL"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "tui.cli", *argv], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def offered_tools(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def project_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "project config" in line or ".mcp.json" in line]


def test_a_clones_mcp_json_starts_nothing_until_trusted_and_again_after_revoke(
        clone: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "started"
    state = ChatServerState(reply="done")
    with openai_chat_server(state) as (url, _server):
        user_config_file().parent.mkdir(parents=True)
        user_config_file().write_text(f'model = "openai-chat:gpt-4.1"\nbase_url = "{url}"\n[tools]\nmcp = "always"\n',
                                      encoding="utf-8")

        untrusted = deep_tui(clone, "run", "use", "the", "tools")
        assert untrusted.returncode == 0, untrusted.stderr
        assert not marker.exists(), "an untrusted project's MCP server must never start"
        assert project_lines(untrusted.stderr) == [
            f"deep-tui: ignoring the project config {clone}/.mcp.json: this project is not trusted "
            f"(review and trust it: deep-tui trust {clone})"]
        assert state.requests and "echo" not in offered_tools(state.requests[0])

        code, out, _ = cli(capsys, "trust", "--yes")
        assert code == 0, out
        assert f"config:  {clone}/.mcp.json" in out
        assert "MCP servers it would start, from .mcp.json (they run as you, outside any sandbox):" in out
        assert f"   tester  {sys.executable} -m tests.support.mcp_server  (env: MCP_TEST_PID_FILE={marker} " \
               f"PYTHONPATH={REPO})" in out

        state.requests.clear()
        state.tool_calls = [("c1", "echo", '{"text": "hello from the project server"}')]
        trusted = deep_tui(clone, "run", "use", "the", "tools")
        assert trusted.returncode == 0, trusted.stderr
        assert marker.exists(), "the trusted project's server started"
        assert project_lines(trusted.stderr) == [], trusted.stderr
        assert "echo" in offered_tools(state.requests[0]), "its tool is offered to the model"
        assert "hello from the project server" in json.dumps(state.requests[1]["messages"]), "and it ran"

        code, out, _ = cli(capsys, "trust", "--revoke")
        assert code == 0 and "ignored again" in out
        marker.unlink()
        state.requests.clear()
        revoked = deep_tui(clone, "run", "use", "the", "tools")
        assert revoked.returncode == 0, revoked.stderr
        assert not marker.exists() and "echo" not in offered_tools(state.requests[0])
        assert len(project_lines(revoked.stderr)) == 1 and "this project is not trusted" in revoked.stderr


def test_a_change_to_mcp_json_after_trust_asks_again(clone: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    user_config_file().parent.mkdir(parents=True)
    user_config_file().write_text('model = "offline"\n', encoding="utf-8")
    assert cli(capsys, "trust", "--yes")[0] == 0
    marker = tmp_path / "started"
    (clone / ".mcp.json").write_text(mcp_json(marker, extra_args=("--quiet",)), encoding="utf-8")  # a `git pull`

    changed = deep_tui(clone, "run", "hello")
    assert changed.returncode == 0, changed.stderr
    assert not marker.exists()
    assert project_lines(changed.stderr) == [
        f"deep-tui: ignoring the project config {clone}/.mcp.json: it changed since you trusted this project "
        f"(review and trust it: deep-tui trust {clone})"]
    code, out, _ = cli(capsys, "trust", "--yes")
    assert code == 0 and "it changed since you trusted it on" in out
    assert f" * tester  {sys.executable} -m tests.support.mcp_server --quiet" in out  # * marks what is new


def test_a_config_toml_trust_still_holds_without_mcp_json_and_either_file_changing_asks_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "project"
    (root / ".deep-tui").mkdir(parents=True)
    toml = root / ".deep-tui" / "config.toml"
    toml.write_text('[tools]\nwrites = "always"\n', encoding="utf-8")
    monkeypatch.chdir(root)
    assert cli(capsys, "trust", "--yes")[0] == 0
    record = TrustStore(trust_store_file()).lookup(root)
    import hashlib  # a record made before .mcp.json joined: the digest of config.toml alone

    assert record is not None and record.digest == "sha256:" + hashlib.sha256(toml.read_bytes()).hexdigest()
    code, out, _ = cli(capsys, "trust", "--yes")
    assert code == 0 and "already trusted" in out

    (root / ".mcp.json").write_text(mcp_json(tmp_path / "started"), encoding="utf-8")
    code, out, _ = cli(capsys, "trust", "--yes")
    assert code == 0 and "it changed since you trusted it" in out and " * tester  " in out
    assert f"config:  {toml}" in out and f"config:  {root}/.mcp.json" in out
    toml.write_text('[tools]\nwrites = "ask"\n', encoding="utf-8")
    code, out, _ = cli(capsys, "trust", "--yes")
    assert code == 0 and "it changed since you trusted it" in out and "   tester  " in out  # the server is as trusted


def test_a_mcp_json_that_is_a_link_is_refused_in_one_line(clone: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    user_config_file().parent.mkdir(parents=True)
    user_config_file().write_text('model = "offline"\n', encoding="utf-8")
    target = tmp_path / "elsewhere.json"
    marker = tmp_path / "started"
    target.write_text(mcp_json(marker), encoding="utf-8")
    (clone / ".mcp.json").unlink()
    (clone / ".mcp.json").symlink_to(target)

    result = deep_tui(clone, "run", "hello")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert project_lines(result.stderr) == [
        f"deep-tui: ignoring the project config (it cannot be used: {clone}/.mcp.json: it is a symbolic link "
        "(not followed))"]
    code, _, err = cli(capsys, "trust", "--yes")
    assert code == 2 and "it is a symbolic link (not followed)" in err
    assert TrustStore(trust_store_file()).records() == {}


def test_the_answer_decides_which_servers_the_session_gets(clone: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def context() -> LaunchContext:
        return resolve_context(build_parser().parse_args([]))

    untrusted = context()
    assert untrusted.pending_project is not None and untrusted.project_servers == ()
    assert [server.name for server in untrusted.pending_project.config.servers] == ["tester"]
    gate = ProjectTrustGate(untrusted)
    gate.decide(TrustChoice.NOT_NOW)
    assert gate.context.project_servers == ()
    gate = ProjectTrustGate(context())
    gate.decide(TrustChoice.ONCE)  # this session only: started, not remembered
    assert [server.name for server in gate.context.project_servers] == ["tester"]
    assert TrustStore(trust_store_file()).records() == {} and context().pending_project is not None

    monkeypatch.setenv("DEEP_TUI_HOME", str(tmp_path / "mine"))  # the user's data directory: no project config
    chosen = context()
    assert chosen.pending_project is None and chosen.project_servers == ()
    assert chosen.mcp_notices == (".mcp.json ignored: with $DEEP_TUI_HOME the project's config is not read, so its "
                                  "MCP servers were not started",)
