"""Shared by the rewind tests: a real session on the loopback OpenAI-chat server whose tool calls are scripted,
and the working directory's state read without following a link."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

from pydantic_ai import models

from tests.support.openai_server import ChatServerState
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TurnEvent
from tui.base.config import Settings, ToolSettings
from tui.base.paths import DataDir


def factory_for(base_url: str, data: Path, work: Path) -> RuntimeFactory:
    settings = Settings(base_url=base_url, tools=ToolSettings(writes="always", commands="always"))
    return RuntimeFactory(settings=settings, data_dir=DataDir(data), workdir=work,
                          choice=choose_model("openai-chat:loopback", None))


async def open_session(base_url: str, data: Path, work: Path) -> SessionRuntime:
    return await factory_for(base_url, data, work).open_request(SessionRequest())


def write(path: str, content: str) -> tuple[str, str]:
    return "write_file", json.dumps({"path": path, "content": content})


def edit(path: str, old: str, new: str) -> tuple[str, str]:
    return "edit_file", json.dumps({"path": path, "old_text": old, "new_text": new})


def execute(command: str) -> tuple[str, str]:
    return "execute", json.dumps({"command": command})


async def prompt(runtime: SessionRuntime, served: ChatServerState, text: str, *calls: tuple[str, str]) -> list[TurnEvent]:
    """One prompt whose model makes ``calls`` one after the other, then answers."""
    served.tool_calls.extend((f"call_{len(served.requests)}_{index}", name, args)
                             for index, (name, args) in enumerate(calls))
    with models.override_allow_model_requests(True):
        return [event async for event in runtime.run_turn(text)]


def tree_state(root: Path, *, skip: tuple[str, ...] = (".git", "data")) -> dict[str, tuple[object, ...]]:
    """Every entry under ``root``: a file's bytes and executable bit, a link's target, a directory; no link followed."""
    state: dict[str, tuple[object, ...]] = {}
    for directory, dirs, files in os.walk(root):
        relative_dir = os.path.relpath(directory, root)
        if relative_dir == "." :
            dirs[:] = [name for name in dirs if name not in skip]
        for name in dirs + files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                state[relative] = ("dir",)
            elif stat.S_ISREG(info.st_mode):
                state[relative] = ("file", Path(path).read_bytes(), bool(info.st_mode & 0o100))
            else:
                state[relative] = ("special", stat.S_IFMT(info.st_mode))
    return state


def digest_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (a ``.git``) with its bytes' digest and mode, to compare before and after."""
    digests: dict[str, str] = {}
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            content = Path(path).read_bytes() if stat.S_ISREG(info.st_mode) else os.readlink(path).encode()
            digests[os.path.relpath(path, root)] = f"{oct(info.st_mode)} {hashlib.sha256(content).hexdigest()}"
    return digests


def git_init(work: Path) -> None:
    """A real project repository with one commit."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
