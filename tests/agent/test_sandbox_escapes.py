"""Nothing a command does may run later outside the sandbox (issue 29, points 1–7).

Each test performs the attack for real, through the real bubblewrap sandbox (:func:`run_command`), then checks
from outside — with the host's own ``git``, a real listening unix socket, the real files — that it failed.
Paths a command must not reach are made under ``/var/tmp`` (never ``/tmp``: the sandbox's ``/tmp`` is private,
so a file there would be out of reach for the wrong reason).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ToolReturnPart

from tests.agent.shell_support import CommandModel, open_runtime, requires_bwrap, turn
from tui.agent.shell.command_run import CommandRun, run_command
from tui.agent.shell.sandbox import Sandbox, sandbox_for
from tui.agent.shell.user_command import run_user_command
from tui.agent.turn_events import TurnFinished
from tui.base.paths import trust_store_file, user_config_dir
from tui.trust.known_dirs import known_data_dirs, record_data_dir, recorded_data_dirs
from tui.trust.store import TrustRecord, TrustStore

PYTHON = os.path.realpath(sys.executable)  # the interpreter itself: a venv under /tmp is out of the sandbox's sight
GIT = shutil.which("git")
requires_git = pytest.mark.skipif(GIT is None, reason="no git on this machine")


async def run(sandbox: Sandbox, command: str) -> CommandRun:
    return await run_command(sandbox, command, timeout=60)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A fresh directory outside the workdir and outside /tmp, removed afterwards."""
    folder = Path("/var/tmp") / f"deep-tui-escape-{uuid.uuid4().hex}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def work(outside: Path) -> Path:
    folder = outside / "work"
    folder.mkdir()
    return folder


def host_git(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's ``git`` on the host, outside the sandbox."""
    assert GIT is not None
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", HOME=str(directory))
    return subprocess.run([GIT, *args], cwd=directory, env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def planting(workdir: Path, marker: Path, target: str) -> str:
    """A command that writes a hook script, then makes ``target`` (a ``.git``) a repository whose
    ``core.fsmonitor`` and ``pre-commit`` hook run it."""
    hook = workdir / "hook.sh"
    return (f"printf '#!/bin/sh\\necho ran >> {marker}\\n' > {hook}; chmod +x {hook}; "
            f"mkdir -p {target}/hooks {target}/objects {target}/refs/heads; "
            f"echo 'ref: refs/heads/main' > {target}/HEAD; "
            f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = {hook}\\n\\thooksPath = hooks\\n' "
            f"> {target}/config; cp {hook} {target}/hooks/pre-commit; echo planted-{target}=$?")


# -- 1. planting a git repository -------------------------------------------------------------------------


@requires_bwrap
@requires_git
async def test_a_moved_or_replaced_git_directory_runs_nothing_at_the_next_git_status(work: Path,
                                                                                   outside: Path) -> None:
    assert host_git(work, "init", "-q").returncode == 0
    config_before = (work / ".git" / "config").read_bytes()
    marker = outside / "ran.txt"
    attack = ("mv .git .git-orig; echo mv=$?; rm -rf .git; echo rm=$?; "
              f"echo '[core] fsmonitor = {work}/hook.sh' >> .git/config; echo config=$?; "
              "echo x > .git/hooks/pre-commit; echo hook=$?; umount .git; echo umount=$?; "
              + planting(work, marker, ".git"))
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "mv=1" in done.output and "Device or resource busy" in done.output
    assert "config=0" not in done.output and "hook=0" not in done.output and "umount=0" not in done.output
    assert (work / ".git" / "config").read_bytes() == config_before and not (work / ".git-orig").exists()
    status = host_git(work, "status")
    assert status.returncode == 0 and not marker.exists()
    host_git(work, "add", "-A")
    host_git(work, "commit", "-qm", "x")
    assert not marker.exists()  # no hook ran either


@requires_bwrap
@requires_git
async def test_a_git_directory_planted_where_there_was_none_runs_nothing(work: Path, outside: Path) -> None:
    # The workdir is a subdirectory of a repository: a .git made in it would shadow the parent's.
    assert host_git(outside, "init", "-q").returncode == 0
    marker = outside / "ran.txt"
    (work / "sub").mkdir()
    attack = (planting(work, marker, ".git") + "; " + planting(work, marker, "sub/.git") + "; "
              "mkdir -p deep/er && " + planting(work, marker, "evil")
              + "; printf 'gitdir: ../../evil\\n' > deep/er/.git; ls -A")
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "planted-.git=0" not in done.output and "Read-only file system" in done.output
    assert not (work / ".git").exists()  # the placeholder is gone again
    assert not (work / "sub" / ".git").exists() and (work / "sub" / ".git.blocked-by-deep-tui").is_dir()
    assert not (work / "deep" / "er" / ".git").exists()
    assert "sub/.git.blocked-by-deep-tui" in done.status_line() and "deep/er/.git" in done.status_line()
    for directory in (work, work / "sub", work / "deep" / "er"):
        host_git(directory, "status")
    assert not marker.exists()


@requires_bwrap
async def test_a_background_process_cannot_plant_after_the_check(work: Path) -> None:
    (work / "sub").mkdir()
    done = await run(sandbox_for(work, [], network=False, enabled=True),
                     "(while :; do mkdir -p sub/.git 2>/dev/null; done) & sleep 0.3; echo started")
    assert "started" in done.output and "sub/.git.blocked-by-deep-tui" in done.status_line()
    # The check ran once the whole sandbox had ended: the loop is gone, nothing was made after it.
    assert sorted(p.name for p in (work / "sub").iterdir()) == [".git.blocked-by-deep-tui"]
    assert not [line for line in os.popen("ps -eo args").read().splitlines() if "mkdir -p sub/.git" in line]


@requires_bwrap
@requires_git
async def test_a_bare_repository_planted_or_present_runs_nothing(work: Path, outside: Path) -> None:
    # git takes any directory holding HEAD, objects/ and refs/ for a repository: no ".git" in the name needed,
    # and its config may name a work tree and an fsmonitor that `git status` there runs.
    assert host_git(work, "init", "-q", "--bare", "existing.git").returncode == 0
    marker = outside / "ran.txt"
    hook = work / "hook.sh"
    config = (f"[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = {work}\\n"
              f"\\tfsmonitor = {hook}\\n")
    attack = (f"printf '#!/bin/sh\\necho ran >> {marker}\\n' > {hook}; chmod +x {hook}; "
              "mkdir -p fake/objects fake/refs/heads; echo 'ref: refs/heads/main' > fake/HEAD; "
              f"printf '{config}' > fake/config; printf '{config}' > existing.git/config; echo existing=$?")
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "existing=0" not in done.output and "fake/HEAD.blocked-by-deep-tui" in done.status_line()
    assert (work / "fake" / "HEAD.blocked-by-deep-tui").exists() and not (work / "fake" / "HEAD").exists()
    for directory in (work / "fake", work / "existing.git"):
        host_git(directory, "status")
    assert not marker.exists()


@requires_bwrap
@requires_git
async def test_an_existing_nested_repository_stays_read_only(work: Path, outside: Path) -> None:
    (work / "vendor" / "lib").mkdir(parents=True)
    assert host_git(work / "vendor" / "lib", "init", "-q").returncode == 0
    marker = outside / "ran.txt"
    attack = ("cd vendor/lib; mv .git g; echo mv=$?; "
              f"git config core.fsmonitor {work}/hook.sh; echo config=$?")
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "mv=1" in done.output and "config=0" not in done.output
    host_git(work / "vendor" / "lib", "status")
    assert not marker.exists() and "fsmonitor" not in (work / "vendor" / "lib" / ".git" / "config").read_text()


@requires_bwrap
@requires_git
async def test_a_hooks_directory_in_the_tree_stays_read_only(work: Path, outside: Path) -> None:
    assert host_git(work, "init", "-q").returncode == 0
    assert host_git(work, "config", "core.hooksPath", ".husky/_").returncode == 0
    (work / ".husky" / "_").mkdir(parents=True)
    (work / ".husky" / "_" / "pre-commit").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (work / ".husky" / "_" / "pre-commit").chmod(0o755)
    marker = outside / "ran.txt"
    attack = (f"printf '#!/bin/sh\\necho ran >> {marker}\\n' > .husky/_/pre-commit; echo hook=$?; "
              f"printf '#!/bin/sh\\necho ran >> {marker}\\n' > .husky/_/post-commit; echo new=$?; "
              "mv .husky/_ .husky/old; echo mv=$?")
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "hook=0" not in done.output and "new=0" not in done.output and "mv=0" not in done.output
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    host_git(work, "add", "a.txt")
    assert host_git(work, "commit", "-qm", "a").returncode == 0
    assert not marker.exists()


@requires_bwrap
@requires_git
async def test_git_still_reads_the_repository_inside_the_sandbox(work: Path) -> None:
    assert host_git(work, "init", "-q").returncode == 0
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    done = await run(sandbox_for(work, [], network=False, enabled=True),
                     f"{GIT} status --short; echo status=$?; {GIT} add a.txt; echo add=$?")
    assert "?? a.txt" in done.output and "status=0" in done.output and "add=0" not in done.output


# -- 2. running as root -------------------------------------------------------------------------------------


@requires_bwrap
async def test_no_capability_is_left_even_as_root(work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = outside / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = SECRET-AWS", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    attack = ("grep CapEff /proc/self/status; umount ~/.aws; echo umount=$?; cat ~/.aws/credentials; "
              f"mount -o remount,rw /; echo remount=$?; mount -o remount,bind,rw {outside}; echo rebind=$?; "
              f"touch {outside}/escaped; echo touch=$?; mount -t tmpfs none {work}/.git; echo mount=$?")
    done = await run(sandbox_for(work, [], network=False, enabled=True), attack)
    assert "CapEff:\t0000000000000000" in done.output
    assert "umount=0" not in done.output and "remount=0" not in done.output and "rebind=0" not in done.output
    assert "mount=0" not in done.output and "SECRET-AWS" not in done.output
    assert not (outside / "escaped").exists()
    if os.geteuid() == 0:
        assert "must be superuser" in done.output  # root outside, nothing inside


# -- 3. a workdir holding the user's config dir -----------------------------------------------------------


@requires_bwrap
async def test_a_workdir_holding_the_home_cannot_change_move_or_shadow_the_config(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = work  # deep-tui started in ~
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DEEP_TUI_CONFIG_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    config = user_config_dir()
    assert config == home / ".config" / "deep-tui"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[tools]\ncommands = \"ask\"\n", encoding="utf-8")
    (home / ".bashrc").write_text("# mine\n", encoding="utf-8")
    (home / "src").mkdir()
    data = home / "src" / ".deep-tui"
    (data / "main").mkdir(parents=True)
    attack = ("mv .config .config-away; echo mv-config=$?; mv .config/deep-tui x; echo mv-dir=$?; "
              "mkdir -p .config-new/deep-tui; echo '[[mcp.servers]]' > .config/deep-tui/config.toml; "
              "echo write=$?; echo 'export DEEP_TUI_CONFIG_HOME=~/.config-new/deep-tui' >> .bashrc; echo rc=$?; "
              "echo evil > .bash_profile; echo profile=$?; mkdir .local; echo local=$?; "
              "mv src src2; echo mv-src=$?; mv src/.deep-tui elsewhere; echo mv-data=$?; "
              "echo mine > src/work.txt; echo work=$?")
    sandbox = sandbox_for(home, [data, config], network=False, enabled=True)
    done = await run(sandbox, attack)
    for step in ("mv-config", "mv-dir", "write", "rc", "profile", "local", "mv-src", "mv-data"):
        assert f"{step}=0" not in done.output, step
    assert "work=0" in done.output and (home / "src" / "work.txt").read_text() == "mine\n"
    assert (config / "config.toml").read_text() == "[tools]\ncommands = \"ask\"\n"
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert sorted(p.name for p in home.iterdir()) == [".bashrc", ".config", "src"]
    assert (home / "src" / ".deep-tui").is_dir()


@requires_bwrap
async def test_a_missing_config_dir_is_made_before_a_command_can_make_it(work: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(work / "conf" / "deep-tui"))
    config = user_config_dir()
    done = await run(sandbox_for(work, [config], network=False, enabled=True),
                     "mkdir -p conf/deep-tui; echo '[x]' > conf/deep-tui/config.toml; echo write=$?; "
                     "mv conf conf2; echo mv=$?")
    assert "write=0" not in done.output and "mv=0" not in done.output
    assert config.is_dir() and list(config.iterdir()) == []


@requires_bwrap
def test_a_config_file_named_with_config_cannot_be_changed_by_a_command(work: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai import models

    from tests.support.openai_server import ChatServerState, openai_chat_server
    from tui.cli.main import main

    monkeypatch.chdir(work)
    config = work / "my-deep-tui.toml"  # applies without trust: the user named it
    config.write_text("[tools]\nnetwork = false\n", encoding="utf-8")
    call = json.dumps({"command": "cat my-deep-tui.toml; echo '[mcp.servers.x]' >> my-deep-tui.toml; echo w=$?; "
                                  "mv my-deep-tui.toml gone.toml; echo mv=$?"})
    with openai_chat_server(ChatServerState(reply="ok", tool_calls=[("c1", "execute", call)])) as (url, served), \
            models.override_allow_model_requests(True):
        assert main(["run", "--config", str(config), "--allow-commands", "--model", "openai-chat:loopback",
                     "--base-url", url, "go"]) == 0
    tool_text = next(m for m in served.requests[-1]["messages"] if m["role"] == "tool")["content"]
    assert "network = false" not in tool_text and "w=0" not in tool_text and "mv=0" not in tool_text
    assert config.read_text(encoding="utf-8") == "[tools]\nnetwork = false\n"


# -- 4. unix sockets ----------------------------------------------------------------------------------------


@pytest.fixture
def listening_socket(outside: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A real unix stream server outside the workdir (as tmux's would be); yields its path and what it got."""
    path = outside / "tmux-0" / "default"
    path.parent.mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                received.append(connection.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    stop.set()
    thread.join()
    server.close()


UNIX_ATTACK = """
import socket, sys
path = sys.argv[1]
for kind in ("stream", "dgram-pair"):
    try:
        if kind == "stream":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(b"send-keys")
        else:
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            a.sendto(b"send-keys", path)
        print(kind, "connected")
    except OSError as error:
        print(kind, "refused:", error.strerror)
a, b = socket.socketpair()
a.sendall(b"x")
print("pair", b.recv(1).decode())
import asyncio
asyncio.run(asyncio.sleep(0))
print("asyncio ok")
"""


@requires_bwrap
@pytest.mark.parametrize("network", [False, True])
async def test_no_unix_socket_outside_the_workdir_can_be_reached(work: Path, network: bool,
                                                                 listening_socket: tuple[Path, list[bytes]]) -> None:
    path, received = listening_socket
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # the server does answer, from outside
    probe.connect(str(path))
    probe.sendall(b"hello")
    probe.close()
    (work / "attack.py").write_text(UNIX_ATTACK, encoding="utf-8")
    done = await run(sandbox_for(work, [], network=network, enabled=True), f"{PYTHON} attack.py {path}")
    assert "stream refused: Operation not permitted" in done.output
    assert "dgram-pair refused: Operation not permitted" in done.output
    assert "pair x" in done.output and "asyncio ok" in done.output  # a stream socketpair still works
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.connect(str(path))  # a last connection, so every earlier one has been taken
    probe.sendall(b"bye")
    probe.close()
    while len(received) < 2 or received[-1] != b"bye":
        threading.Event().wait(0.01)
    assert b"send-keys" not in received


@requires_bwrap
@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux on this machine")
async def test_a_tmux_server_outside_the_workdir_takes_no_keys_from_a_command(work: Path, outside: Path) -> None:
    tmux = shutil.which("tmux")
    assert tmux is not None
    sock = outside / "tmux" / "default"  # not under /tmp, as in the report
    sock.parent.mkdir()
    marker = outside / "typed.txt"
    env = {**os.environ, "TMUX": ""}
    subprocess.run([tmux, "-S", str(sock), "new-session", "-d", "-s", "victim", "sh"], env=env, check=True,
                   timeout=30)
    try:
        done = await run(sandbox_for(work, [], network=False, enabled=True),
                         f"{tmux} -S {sock} send-keys -t victim 'touch {marker}' Enter; echo sent=$?; "
                         f"{tmux} -S {sock} list-sessions; echo listed=$?")
        assert "sent=0" not in done.output and "listed=0" not in done.output
        # The server is alive and takes keys from outside: a marker typed now lands, the command's never did.
        check = outside / "outside.txt"
        subprocess.run([tmux, "-S", str(sock), "send-keys", "-t", "victim", f"touch {check}", "Enter"], env=env,
                       check=True, timeout=30)
        for _ in range(3000):
            if check.exists():
                break
            threading.Event().wait(0.01)
        assert check.exists() and not marker.exists()
    finally:
        subprocess.run([tmux, "-S", str(sock), "kill-server"], env=env, check=False, timeout=30)


@requires_bwrap
async def test_io_uring_is_not_available(work: Path) -> None:
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); params = ctypes.create_string_buffer(120); "
            "r = libc.syscall(425, 4, params); print('io_uring', r, os.strerror(ctypes.get_errno()))")
    done = await run(sandbox_for(work, [], network=False, enabled=True), f"{PYTHON} -c \"{code}\"")
    assert "io_uring -1 Function not implemented" in done.output


@requires_bwrap
async def test_the_session_keyring_is_out_of_reach(work: Path) -> None:
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "r = libc.syscall(250 if os.uname().machine == 'x86_64' else 219, 0, -3, 0); "
            "print('keyctl', r, os.strerror(ctypes.get_errno()))")
    done = await run(sandbox_for(work, [], network=False, enabled=True), f"{PYTHON} -c \"{code}\"")
    assert "keyctl -1 Operation not permitted" in done.output


# -- 5. other projects' data dirs ---------------------------------------------------------------------------


@requires_bwrap
async def test_every_data_dir_deep_tui_knows_of_is_hidden(tmp_path: Path, work: Path, outside: Path) -> None:
    recorded = outside / "other" / ".deep-tui"
    (recorded / "main").mkdir(parents=True)
    (recorded / "main" / "MEMORY.md").write_text("OTHER PROJECT MEMORY", encoding="utf-8")
    trusted_project = outside / "trusted"
    (trusted_project / ".deep-tui" / "sessions").mkdir(parents=True)
    (trusted_project / ".deep-tui" / "sessions" / "s.json").write_text("TRUSTED SESSION", encoding="utf-8")
    record_data_dir(recorded)
    TrustStore(trust_store_file()).trust(TrustRecord(str(trusted_project), "sha256:x", "2026-01-01T00:00:00Z"))
    assert {str(recorded), str(trusted_project / ".deep-tui")} <= {str(p) for p in known_data_dirs()}

    done = await run(sandbox_for(work, [], network=False, enabled=True),
                     f"cat {recorded}/main/MEMORY.md {trusted_project}/.deep-tui/sessions/s.json; "
                     f"ls -A {recorded} {trusted_project}/.deep-tui; cat {user_config_dir()}/*; echo end")
    assert "OTHER PROJECT MEMORY" not in done.output and "TRUSTED SESSION" not in done.output
    assert "sha256" not in done.output
    assert done.output.endswith("end\n")


async def test_opening_a_session_records_its_data_dir(tmp_path: Path, work: Path) -> None:
    runtime = await open_runtime(tmp_path, work, CommandModel("true"), data=tmp_path / "project-data")
    assert recorded_data_dirs()[0] == (tmp_path / "project-data").resolve()
    await runtime.aclose()
    record_data_dir(tmp_path / "second")
    record_data_dir(tmp_path / "project-data")
    assert recorded_data_dirs()[:2] == [(tmp_path / "project-data").resolve(), (tmp_path / "second").resolve()]
    stored = json.loads((user_config_dir() / "data-dirs.json").read_text())
    assert len(stored["dirs"]) == 2  # each once, newest first


def test_a_damaged_list_of_data_dirs_hides_what_the_trust_store_names(tmp_path: Path) -> None:
    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "data-dirs.json").write_text("{not json", encoding="utf-8")
    TrustStore(trust_store_file()).trust(TrustRecord(str(tmp_path), "sha256:x", "2026-01-01T00:00:00Z"))
    assert known_data_dirs() == [tmp_path / ".deep-tui"]


# -- 6. secrets in URLs -------------------------------------------------------------------------------------


@requires_bwrap
async def test_passwords_in_urls_never_reach_a_command(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://:PASSWORD-1@host/0")
    monkeypatch.setenv("UPSTREAM", "https://ghp_0123456789abcdefPASSWORD2@github.com/x.git")
    monkeypatch.setenv("APP_DSN", "host=db user=me password=PASSWORD-3")
    monkeypatch.setenv("SIGNED", "https://bucket/x?X-Amz-Signature=1&sig=PASSWORD-4")
    monkeypatch.setenv("BROKER_PLAIN", "redis://cache:6379/0")
    done = await run(sandbox_for(work, [], network=False, enabled=True), "env")
    assert "PASSWORD" not in done.output
    assert "BROKER_PLAIN=redis://cache:6379/0" in done.output


# -- 7. smaller holes ---------------------------------------------------------------------------------------


@requires_bwrap
async def test_a_nul_byte_in_a_command_is_a_tool_error_and_the_turn_goes_on(tmp_path: Path, work: Path) -> None:
    model = CommandModel("echo a\x00b > nul.txt")
    runtime = await open_runtime(tmp_path, work, model, commands="always")
    events = await turn(runtime)
    assert isinstance(events[-1], TurnFinished)
    [returned] = model.returns
    assert isinstance(returned, ToolReturnPart) and returned.outcome == "failed"  # a tool error, not a crash
    assert "NUL byte" in str(returned.content) and not (work / "nul.txt").exists()
    await runtime.aclose()


@requires_bwrap
def test_run_with_a_nul_byte_in_a_command_exits_0(work: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from pydantic_ai import models

    from tests.support.openai_server import ChatServerState, openai_chat_server
    from tui.cli.main import main

    monkeypatch.chdir(work)
    call = json.dumps({"command": "echo a\x00b > nul.txt"})
    with openai_chat_server(ChatServerState(reply="ok", tool_calls=[("c1", "execute", call)])) as (url, served), \
            models.override_allow_model_requests(True):
        assert main(["run", "--allow-commands", "--model", "openai-chat:loopback", "--base-url", url, "go"]) == 0
    tool_text = next(m for m in served.requests[-1]["messages"] if m["role"] == "tool")["content"]
    assert "NUL byte" in tool_text and "embedded null byte" not in capsys.readouterr().err
    assert not (work / "nul.txt").exists()


@requires_bwrap
async def test_a_nul_byte_in_a_user_command_is_refused(tmp_path: Path, work: Path) -> None:
    async def ignore(_: str) -> None:
        return None

    result = await run_user_command(sandbox_for(work, [], network=False, enabled=True), "echo a\x00b > nul.txt",
                                    on_output=ignore, large_results_dir=tmp_path / "saved",
                                    large_result_tokens=1000, number=1)
    assert not result.ran and "NUL byte" in result.status and not (work / "nul.txt").exists()
    direct = await run(sandbox_for(work, [], network=False, enabled=True), "echo a\x00b")
    assert direct.ending == "failed_to_start" and "NUL byte" in direct.status_line()


def test_no_sandbox_prints_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", "--no-sandbox", "--model", "offline", "hello"]) == 0
    assert "deep-tui: warning: --no-sandbox: shell commands (the agent's and !command) run WITHOUT a sandbox: " \
           "they can read and change anything you can" in capsys.readouterr().err
    assert main(["run", "--model", "offline", "hello"]) == 0
    assert "--no-sandbox" not in capsys.readouterr().err


def test_a_cached_scan_still_finds_a_git_planted_deep_down(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.agent.shell import git_guard

    monkeypatch.setattr(git_guard, "RACY_SECONDS", 0.0)  # every directory counts as settled: all cached
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (tmp_path / "x" / "y").mkdir(parents=True)
    cache = git_guard.ScanCache()
    listed: list[str] = []
    real_list = git_guard._list
    monkeypatch.setattr(git_guard, "_list", lambda path, identity: listed.append(path) or real_list(path, identity))
    assert git_guard.scan_git_entries(tmp_path, cache=cache).found == {}
    assert len(listed) == 6
    listed.clear()
    assert git_guard.scan_git_entries(tmp_path, cache=cache).found == {} and listed == []  # nothing changed
    (deep / ".git").mkdir()
    found = git_guard.scan_git_entries(tmp_path, cache=cache).found
    assert list(found) == [str(deep / ".git")] and listed == [str(deep)]  # only the changed directory
    (deep / ".git").rename(deep / "moved")
    assert git_guard.scan_git_entries(tmp_path, cache=cache).found == {}


def test_a_partial_scan_says_so(tmp_path: Path) -> None:
    from tui.agent.shell import git_guard

    for number in range(30):
        (tmp_path / f"d{number}").mkdir()
    before = git_guard.scan_git_entries(tmp_path)
    (tmp_path / "d3" / ".git").mkdir()
    after = git_guard.scan_git_entries(tmp_path, limit=10)
    assert not after.complete
    [note] = git_guard.block_new_entries(before, after, tmp_path)
    assert "not checked entirely" in note and "find . -name .git" in note


def _run_filter(program: bytes, *, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """A classic-BPF interpreter for the few opcodes the filter uses, over one seccomp_data."""
    import struct

    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    code = [struct.unpack_from("<HBBI", program, offset) for offset in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        op, true, false, k = code[pc]
        if op == 0x20:
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif op == 0x54:
            accumulator &= k
        elif op in (0x15, 0x35):
            taken = accumulator == k if op == 0x15 else accumulator >= k
            pc += true if taken else false
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")
        pc += 1


@pytest.mark.parametrize(("machine", "arch", "socket_nr", "pair_nr", "keyctl_nr"),
                         [("x86_64", 0xC000003E, 41, 53, 250), ("aarch64", 0xC00000B7, 198, 199, 219)])
def test_the_socket_filter_decides_per_architecture(machine: str, arch: int, socket_nr: int, pair_nr: int,
                                                    keyctl_nr: int) -> None:
    import errno

    from tui.agent.shell.socket_filter import filter_program

    program = filter_program(machine)
    assert program is not None
    allow, refuse, kill = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x80000000
    assert _run_filter(program, arch=arch, nr=socket_nr, args=(1, 1)) == refuse  # AF_UNIX
    assert _run_filter(program, arch=arch, nr=socket_nr, args=(2, 1)) == allow  # AF_INET
    assert _run_filter(program, arch=arch, nr=socket_nr, args=(10, 2)) == allow  # AF_INET6 datagram
    assert _run_filter(program, arch=arch, nr=pair_nr, args=(1, 1 | 0o2000000)) == allow  # stream, CLOEXEC
    assert _run_filter(program, arch=arch, nr=pair_nr, args=(1, 5)) == allow  # seqpacket
    assert _run_filter(program, arch=arch, nr=pair_nr, args=(1, 2 | 0o4000)) == refuse  # datagram, NONBLOCK
    assert _run_filter(program, arch=arch, nr=425) == 0x00050000 | errno.ENOSYS  # io_uring_setup
    assert _run_filter(program, arch=arch, nr=keyctl_nr) == refuse
    assert _run_filter(program, arch=arch, nr=0) == allow
    assert _run_filter(program, arch=0x40000003, nr=socket_nr) == kill  # another ABI (32-bit x86)
    if machine == "x86_64":
        assert _run_filter(program, arch=arch, nr=0x40000000 | socket_nr, args=(1, 1)) == kill  # x32
    assert filter_program("riscv64") is None
