"""Links and the file tools (issue 20.2, 20.3): hard-linked files are not written, links out of the workdir do not
let a write escape, saved outputs are read only from deep-tui's own regular files, MEMORY.md is never read
through a link, and evicted outputs are never written through one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agent.test_tools import call
from tui.agent.tools.memory import MemoryFile, memory_instructions
from tui.base.nofollow import LinkRefusedError
from tui.base.paths import DataDir
from tui.chain.safe_names import write_output

Env = tuple[Path, DataDir, MemoryFile]


@pytest.fixture
def env(tmp_path: Path) -> Env:
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(tmp_path / "data")
    return work, data, MemoryFile(data.memory_file())


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_file_with_a_second_hard_link_is_not_written_and_the_model_is_told_why(env: Env, tool: str) -> None:
    work = env[0]
    outside = work.parent / "authorized_keys"
    outside.write_text("ssh-ed25519 KEEP\n")
    os.link(outside, work / "innocent.txt")  # a second name for the outside file, inside the workdir
    args = {"content": "pwned\n"} if tool == "write_file" else {"old_text": "KEEP", "new_text": "pwned"}
    reply = call(env, tool, path="innocent.txt", **args)
    assert "2 hard links" in reply and "outside the working directory" in reply and "Reading it is allowed" in reply
    assert outside.read_text() == "ssh-ed25519 KEEP\n"
    assert "KEEP" in call(env, "read_file", path="innocent.txt")  # reads stay allowed


@pytest.mark.parametrize("link_target", ["existing", "dangling"])
def test_a_write_through_a_symlink_out_of_the_workdir_does_not_escape(env: Env, link_target: str) -> None:
    work = env[0]
    outside = work.parent / "outside.txt"
    if link_target == "existing":
        outside.write_text("original\n")
    os.symlink(outside, work / "escape.txt")
    reply = call(env, "write_file", path="escape.txt", content="escaped\n")
    assert "outside the working directory" in reply
    assert (outside.read_text() if outside.exists() else None) == ("original\n" if link_target == "existing" else None)


def test_a_saved_outputs_dir_linked_to_home_does_not_expose_its_files(env: Env) -> None:
    work, data, _memory = env
    home = work.parent / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / "id_rsa").write_text("PRIVATE KEY\n")
    data.root.mkdir(parents=True)
    os.symlink(home, data.large_results_dir)
    for path in (data.large_results_dir / "id_rsa", data.large_results_dir / ".ssh" / "id_rsa"):
        reply = call(env, "read_file", path=str(path))
        assert "PRIVATE KEY" not in reply
        assert "symbolic link" in reply or "outside the working directory" in reply


def test_a_saved_output_that_is_a_link_is_refused(env: Env) -> None:
    work, data, _memory = env
    secret = work.parent / "secret.txt"
    secret.write_text("TOP SECRET\n")
    data.large_results_dir.mkdir(parents=True)
    os.symlink(secret, data.large_results_dir / "call-1.txt")
    reply = call(env, "read_file", path=str(data.large_results_dir / "call-1.txt"))
    assert "TOP SECRET" not in reply and "symbolic link" in reply


def test_eviction_never_writes_through_a_linked_saved_outputs_dir(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside, data / "large_tool_results")
    with pytest.raises(LinkRefusedError, match="large_tool_results is a symbolic link"):
        write_output(data / "large_tool_results", "call-1", "big output", ".txt")
    assert list(outside.iterdir()) == []


def test_memory_linked_to_a_credentials_file_is_neither_read_nor_written(env: Env) -> None:
    work, _data, memory = env
    credentials = work.parent / "credentials"
    credentials.write_text("aws_secret_access_key = SECRET\n")
    memory.path.parent.mkdir(parents=True)
    os.symlink(credentials, memory.path)
    instructions = memory_instructions(memory)()
    assert "SECRET" not in instructions and "symbolic link" in instructions
    for tool, args in (("read_memory", {}), ("write_memory", {"content": "a fact"})):
        reply = call(env, tool, **args)
        assert "SECRET" not in reply and "symbolic link" in reply
    assert credentials.read_text() == "aws_secret_access_key = SECRET\n"
    assert memory.path.is_symlink()
