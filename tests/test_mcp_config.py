"""``[mcp.servers.NAME]`` and ``[tools] mcp`` in config.toml, and a project's ``.mcp.json`` (read only when trusted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.agent.mcp.client import server_environment
from tui.agent.mcp.servers import PASSED_ENVIRONMENT, mcp_servers_for
from tui.base.config import ConfigError, Settings
from tui.base.config_layers import load_settings
from tui.base.mcp_config import McpConfigError, McpServerConfig, McpSettings, expand_variables, parse_project_servers
from tui.base.paths import DataDir


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_servers_and_the_policy_are_read(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, """
[tools]
mcp = "never"

[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG = "1" }
approval = "always"

[mcp.servers.docs]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
timeout = 3
"""), required=True)
    assert settings.tools.mcp == "never" and settings.tools.writes == "ask"
    files, docs = settings.mcp.servers
    assert (files.name, files.transport, files.command, files.args, dict(files.env), files.approval) == (
        "files", "stdio", "npx", ("-y", "@modelcontextprotocol/server-filesystem", "."), {"LOG": "1"}, "always")
    assert files.target == "npx -y @modelcontextprotocol/server-filesystem ."
    assert (docs.transport, docs.url, dict(docs.headers), docs.approval, docs.timeout) == (
        "http", "https://mcp.example.com/mcp", {"Authorization": "Bearer ${DOCS_TOKEN}"}, None, 3.0)
    assert Settings().mcp == McpSettings() and Settings().tools.mcp == "ask"


@pytest.mark.parametrize(("text", "message"), [
    ('[tools]\nmcp = "maybe"', "tools.mcp must be one of ask, always, never"),
    ("[mcp]\nservers = 3", r"\[mcp.servers\] must be a table"),
    ("[mcp]\nother = 1", "unknown key mcp.other"),
    ("[mcp.servers.x]\nargs = []", "needs either command"),
    ('[mcp.servers.x]\ncommand = "a"\nurl = "http://h/"', "needs either command"),
    ('[mcp.servers.x]\ncommand = "a"\nheaders = {}', "mcp.servers.x.headers is for a server reached by url"),
    ('[mcp.servers.x]\nurl = "file:///etc/passwd"', "must be an http:// or https:// address"),
    ('[mcp.servers.x]\ncommand = "a"\nargs = [1]', "mcp.servers.x.args must be a string"),
    ('[mcp.servers.x]\ncommand = "a"\nenv = { A = 1 }', "mcp.servers.x.env.A must be a string"),
    ('[mcp.servers.x]\ncommand = "a"\napproval = "yes"', "mcp.servers.x.approval must be one of"),
    ('[mcp.servers.x]\ncommand = "a"\ntimeout = 0', "mcp.servers.x.timeout must be a number of seconds"),
    ('[mcp.servers.x]\ncommand = "a"\nport = 1', "unknown key mcp.servers.x.port"),
    ('[mcp.servers."a b"]\ncommand = "a"', "a server name may only contain"),
    ('[mcp.servers.x]\ncommand = " "', "mcp.servers.x.command must not be empty"),
])
def test_bad_entries_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as raised:
        load_settings(path, required=True)
    assert str(path) in str(raised.value)


def test_a_project_file_is_parsed_into_servers_from_its_bytes() -> None:
    raw = json.dumps({"mcpServers": {
        "local": {"command": "python", "args": ["server.py"], "env": {"A": "b"}},
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${KEY}"}},
        "events": {"type": "sse", "url": "http://localhost:9/sse"},
    }}).encode()
    servers = parse_project_servers(raw, "/p/.mcp.json")
    assert [(s.name, s.transport, s.source) for s in servers] == [
        ("local", "stdio", ".mcp.json"), ("remote", "http", ".mcp.json"), ("events", "sse", ".mcp.json")]
    assert servers[0].args == ("server.py",) and dict(servers[0].env) == {"A": "b"}
    assert parse_project_servers(b"{}", "/p/.mcp.json") == ()


def test_the_user_config_keeps_its_server_when_the_project_names_one_the_same(tmp_path: Path) -> None:
    project = parse_project_servers(json.dumps({"mcpServers": {
        "shared": {"command": "project-server"}, "extra": {"command": "extra-server"}}}).encode(), ".mcp.json")
    mine = McpServerConfig("shared", "stdio", command="my-server")
    settings = Settings(mcp=McpSettings((mine,)))
    data = DataDir(tmp_path / "data")
    trusted = mcp_servers_for(settings, workdir=tmp_path, data_dir=data, project_servers=project)
    assert trusted is not None and [(s.name, s.command) for s in trusted.servers] == [
        ("shared", "my-server"), ("extra", "extra-server")]
    untrusted = mcp_servers_for(settings, workdir=tmp_path, data_dir=data)
    assert untrusted is not None and [s.command for s in untrusted.servers] == ["my-server"]
    assert mcp_servers_for(Settings(), workdir=tmp_path, data_dir=data) is None


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ('{"mcpServers": []}', "expected"),
    ('{"mcpServers": {"x": {"type": "ws", "url": "http://h/"}}}', "type must be stdio, http or sse"),
    ('{"mcpServers": {"x": {"command": "a", "cwd": "/"}}}', "unknown key mcpServers.x.cwd"),
])
def test_a_bad_project_file_names_the_file_and_the_problem(content: str, message: str) -> None:
    with pytest.raises(McpConfigError, match=message) as raised:
        parse_project_servers(content.encode(), "/p/.mcp.json")
    assert str(raised.value).startswith("/p/.mcp.json: ")


def test_variables_and_the_minimal_environment() -> None:
    environ = {"PATH": "/bin", "HOME": "/home/u", "OPENAI_API_KEY": "sk-1", "GITHUB_TOKEN": "gh", "AWS_SECRET": "s"}
    assert expand_variables("Bearer ${GITHUB_TOKEN} ${MISSING} ${NONE:-fallback} $PATH", environ) == (
        "Bearer gh  fallback $PATH")
    config = McpServerConfig("gh", "stdio", command="server", env={"TOKEN": "${GITHUB_TOKEN}", "PATH": "/opt/bin"})
    env = server_environment(config, environ, PASSED_ENVIRONMENT)
    assert env == {"PATH": "/opt/bin", "HOME": "/home/u", "TOKEN": "gh"}  # no key unless the config gives it
