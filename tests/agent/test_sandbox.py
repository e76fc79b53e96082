"""The sandbox: what a command can and cannot see or change (docs/security.md, "Shell commands and the sandbox").

Each test runs real commands through :func:`tui.agent.shell.command_run.run_command` in a real bubblewrap sandbox and
checks from outside what they reached. They skip, saying why, where bwrap cannot run.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.shell_support import requires_bwrap
from tui.agent.shell.command_run import CommandRun, run_command
from tui.agent.shell.sandbox import Sandbox, SandboxPolicy, clean_environment, is_secret_variable, sandbox_for


async def run(sandbox: Sandbox, command: str, timeout: float = 20) -> CommandRun:
    return await run_command(sandbox, command, timeout=timeout)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@requires_bwrap
async def test_the_workdir_is_writable_and_the_rest_is_not(work: Path) -> None:
    # A real directory outside the workdir that is not under /tmp (the sandbox's /tmp is private, and CI's
    # checkout may itself sit under /tmp).
    outside = Path("/var/tmp") / f".sandbox-probe-{uuid.uuid4().hex}"
    outside.write_text("original\n", encoding="utf-8")
    try:
        done = await run(sandbox_for(work, [], network=False, enabled=True),
                         f"echo made > made.txt && cat made.txt; echo changed > {outside}; echo status=$?")
        assert (work / "made.txt").read_text() == "made\n"
        assert outside.read_text(encoding="utf-8") == "original\n"
        assert "Read-only file system" in done.output and "status=0" not in done.output
    finally:
        outside.unlink()


@requires_bwrap
async def test_the_data_dir_and_the_user_config_dir_are_not_visible(work: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   ) -> None:
    data = work / ".deep-tui"  # the default layout: the data dir inside the (writable) workdir
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "secret.json").write_text("session bytes", encoding="utf-8")
    config = work / "config-home"
    config.mkdir()
    (config / "trust.json").write_text("trusted projects", encoding="utf-8")
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(config))
    from tui.base.paths import user_config_dir

    sandbox = sandbox_for(work, [data, user_config_dir()], network=False, enabled=True)
    done = await run(sandbox, "ls -A .deep-tui config-home; cat .deep-tui/sessions/secret.json config-home/trust.json;"
                              " echo x > .deep-tui/planted; echo done")
    assert "session bytes" not in done.output and "trusted projects" not in done.output
    assert "No such file" in done.output and "Read-only" in done.output and done.output.endswith("done\n")
    assert sorted(p.name for p in data.iterdir()) == ["sessions"]  # nothing planted in the real data dir


@requires_bwrap
async def test_secret_stores_in_the_home_directory_are_hidden(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(work))  # the workdir is the home: its ~/.ssh would otherwise be writable
    (work / ".ssh").mkdir()
    (work / ".ssh" / "id_ed25519").write_text("PRIVATE KEY", encoding="utf-8")
    (work / ".netrc").write_text("machine x password hunter2", encoding="utf-8")
    done = await run(sandbox_for(work, [], network=False, enabled=True),
                     "cat ~/.ssh/id_ed25519 ~/.netrc; ls -A ~/.ssh; echo end")
    assert "PRIVATE KEY" not in done.output and "hunter2" not in done.output
    assert done.output.endswith("end\n")


@requires_bwrap
async def test_the_git_directory_stays_read_only(work: Path) -> None:
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    done = await run(sandbox_for(work, [], network=False, enabled=True),
                     "echo evil > .git/hooks/pre-commit; echo '[core] fsmonitor = evil' >> .git/config;"
                     " echo ok > .git/HEAD; echo end")
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert (work / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n" and done.output.endswith("end\n")
    assert done.output.count("Read-only file system") == 3


@pytest.fixture
def loopback() -> Iterator[int]:
    """A TCP server on 127.0.0.1 answering ``pong``; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.sendall(b"pong\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


CONNECT = ("{python} -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}), 2); "
           "print(s.recv(10).decode().strip())\" 2>&1 | tail -1")


@requires_bwrap
async def test_no_network_unless_the_config_allows_it(work: Path, loopback: int) -> None:
    # The interpreter itself, not the venv's link to it: a venv under /tmp is out of the sandbox's sight.
    command = CONNECT.format(python=os.path.realpath(sys.executable), port=loopback)
    closed = await run(sandbox_for(work, [], network=False, enabled=True), command)
    assert "pong" not in closed.output and "Connection refused" in closed.output
    opened = await run(sandbox_for(work, [], network=True, enabled=True), command)
    assert opened.output.strip() == "pong"  # the same command reaches it when network = true


@requires_bwrap
async def test_no_api_key_or_secret_in_the_environment(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret-2")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "secret-3")
    monkeypatch.setenv("DATABASE_URL", "postgres://me:secret-4@db/x")
    monkeypatch.setenv("PLAIN_SETTING", "visible-5")
    done = await run(sandbox_for(work, [], network=False, enabled=True), "env")
    assert "secret-" not in done.output
    assert "PLAIN_SETTING=visible-5" in done.output


def test_which_variables_are_secrets() -> None:
    secrets = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GH_TOKEN",
               "SSH_AUTH_SOCK", "OPENAI_BASE_URL", "DEEP_TUI_HOME", "NPM_AUTH", "SOME_PASSWORD", "X_APIKEY"]
    kept = ["PATH", "HOME", "LANG", "GIT_AUTHOR_NAME", "VIRTUAL_ENV", "PYTHONPATH", "TERM"]
    assert [name for name in secrets if not is_secret_variable(name, "v")] == []
    assert [name for name in kept if is_secret_variable(name, "v")] == []
    assert is_secret_variable("UPSTREAM", "https://user:pw@example.com/repo")
    env = clean_environment({"PATH": "/bin", "OPENAI_API_KEY": "k"})
    assert env["PATH"] == "/bin" and "OPENAI_API_KEY" not in env and env["TERM"] == "dumb"


@requires_bwrap
async def test_a_private_tmp_and_its_own_processes(work: Path) -> None:
    marker = Path("/tmp") / f"host-only-{uuid.uuid4().hex}"
    marker.write_text("host", encoding="utf-8")
    try:
        done = await run(sandbox_for(work, [], network=False, enabled=True),
                         f"ls {marker} 2>&1; echo inside > /tmp/x && cat /tmp/x; ps -e 2>/dev/null | wc -l")
        assert "No such file" in done.output and "inside" in done.output
        assert int(done.output.split()[-1]) < 10  # its own PID namespace: it sees a handful of processes
    finally:
        marker.unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and ") Z " not in Path(f"/proc/{pid}/stat").read_text()


async def wait_gone(pid_file: Path, within: float = 1.0) -> float:
    """The host PID the command wrote is gone within ``within`` seconds; returns how long it took."""
    started = time.monotonic()
    pid = int(pid_file.read_text().split()[0])
    while pid_alive(pid):
        assert time.monotonic() - started < within, f"process {pid} still alive after {within} s"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


@requires_bwrap
async def test_a_timeout_kills_every_process_the_command_started(work: Path) -> None:
    sandbox = sandbox_for(work, [], network=False, enabled=True)
    started = time.monotonic()
    marker = f"{300 + uuid.uuid4().int % 1000}.5"  # a sleep no other process runs: found by its arguments
    done = await run(sandbox, f"sleep {marker} & echo started; wait", timeout=1)
    assert time.monotonic() - started < 2.0
    assert done.ending == "timeout" and done.output == "started\n" and "timed out after" in done.status_line()
    assert not [line for line in os.popen("ps -eo stat,args").read().splitlines()
                if line.split()[1:] == ["sleep", marker] and not line.startswith("Z")]


async def test_cancelling_kills_the_process_group_within_a_second(work: Path) -> None:
    sandbox = Sandbox(SandboxPolicy(workdir=work), enabled=False)  # unsandboxed: host PIDs are visible to check
    pid_file = work / "pid"
    run_state = CommandRun("x")
    task = asyncio.create_task(run_command(sandbox, f"echo partial; sleep 300 & echo $! > {pid_file}; wait",
                                           timeout=60, run=run_state))
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.01)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_gone(pid_file, within=1.0 - (time.monotonic() - started))
    assert run_state.ending == "cancelled" and run_state.output == "partial\n"


@requires_bwrap
async def test_an_endless_printer_is_cut_at_the_cap_and_killed(work: Path) -> None:
    started = time.monotonic()
    done = await run_command(sandbox_for(work, [], network=False, enabled=True), "yes", timeout=30,
                             cap_bytes=1_000_000)
    assert done.ending == "output_cap" and done.byte_count == 1_000_000 and len(done.output) == 1_000_000
    assert "stopped after 1,000,000 bytes" in done.status_line() and time.monotonic() - started < 5


async def test_no_sandbox_means_nothing_runs_and_says_how(work: Path) -> None:
    missing = Sandbox(SandboxPolicy(workdir=work), bwrap=None)
    assert "no sandbox is available" in str(missing.unavailable()) and "--no-sandbox" in str(missing.unavailable())
    broken = Sandbox(SandboxPolicy(workdir=work), bwrap=Path("/bin/false"))
    assert "bubblewrap cannot run here" in str(broken.unavailable())
    assert Sandbox(SandboxPolicy(workdir=work), enabled=False).unavailable() is None
