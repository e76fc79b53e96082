"""``.mcp.json`` as part of a project's config, as the trust code reads it: never through a link or from a
non-regular file, bounded, parsed from the very bytes the digest covers."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tui.base.mcp_config import PROJECT_FILE_LIMIT
from tui.base.paths import trust_store_file
from tui.trust.project import assess_project, project_digest, read_project_config
from tui.trust.store import TrustStore

SERVER = b'{"mcpServers": {"tool": {"command": "tool-server", "args": ["--port", "1"]}}}'


def test_only_a_mcp_json_is_a_project_config_whose_servers_apply_once_trusted(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_bytes(SERVER)
    config = read_project_config(tmp_path)
    assert config is not None and config.error is None and config.layer is None
    assert config.files == (tmp_path / ".mcp.json",)
    assert [(s.name, s.command, s.args) for s in config.servers] == [("tool", "tool-server", ("--port", "1"))]
    assert config.digest == project_digest(None, SERVER) != project_digest(SERVER, None)
    store = TrustStore(trust_store_file())
    trusted, pending = assess_project(tmp_path, [], store)
    assert trusted is None and pending is not None and pending.trustable
    assert [(entry.name, entry.what) for entry in pending.servers] == [("tool", "tool-server --port 1")]
    store.trust(pending.record())
    trusted, pending = assess_project(tmp_path, [], store)
    assert pending is None and trusted is not None and [s.name for s in trusted.servers] == ["tool"]


def test_the_digest_of_config_toml_alone_is_unchanged() -> None:
    toml = b'[tools]\nwrites = "always"\n'
    assert project_digest(toml, None) == "sha256:" + hashlib.sha256(toml).hexdigest()
    assert len({project_digest(toml, None), project_digest(toml, SERVER), project_digest(None, SERVER),
                project_digest(toml, b"{}")}) == 4


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(("make", "problem"), [
    (lambda path: path.symlink_to(path.parent / "elsewhere.json"), "it is a symbolic link (not followed)"),
    (make_fifo, "it is not a regular file"),
    (lambda path: path.mkdir(), "it is not a regular file"),
    (lambda path: path.write_bytes(b" " * (PROJECT_FILE_LIMIT + 1)), "it is larger than"),
    (lambda path: path.write_bytes(b"{nope"), "not valid JSON"),
    (lambda path: path.write_bytes(b'{"mcpServers": {"x": {"command": "a", "cwd": "/"}}}'),
     "unknown key mcpServers.x.cwd"),
])
def test_a_mcp_json_that_cannot_be_used_can_never_be_trusted(tmp_path: Path, make, problem: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "elsewhere.json").write_bytes(SERVER)
    make(tmp_path / ".mcp.json")
    _, pending = assess_project(tmp_path, [], TrustStore(trust_store_file()))
    assert pending is not None and not pending.trustable and pending.config.servers == ()
    assert pending.error is not None and pending.error.startswith(f"{tmp_path}/.mcp.json: ") and problem in pending.error
    assert pending.ignored_line().count("\n") == 0


def test_a_config_toml_that_is_a_directory_is_refused_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / ".deep-tui" / "config.toml").mkdir(parents=True)
    config = read_project_config(tmp_path)
    assert config is not None and config.error is not None and config.error.endswith("it is not a regular file")
