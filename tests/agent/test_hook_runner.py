"""The hook runner without a working sandbox: a sandboxed hook is not run then (one notice naming why); under
``--no-sandbox`` it runs in the workdir; a closing session stops a cancelled turn's stop hooks after its patience."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tests.agent.subagent_support import GUARD
from tui.agent.hooks.hook_events import HookNotice
from tui.agent.hooks.hook_runner import HookRunner
from tui.agent.shell.sandbox import Sandbox, SandboxPolicy
from tui.base.hooks_config import HookSettings, HookSpec


def _runner(tmp_path: Path, *, enabled: bool, bwrap: Path | None, hooks: HookSettings) -> tuple[HookRunner, list[HookNotice]]:
    notices: list[HookNotice] = []
    sandbox = Sandbox(SandboxPolicy(workdir=tmp_path, hidden=()), enabled=enabled, bwrap=bwrap)
    return HookRunner(hooks, sandbox, tmp_path, notices.append, "s1"), notices


async def test_a_sandboxed_hook_without_a_sandbox_is_not_run_and_says_why(tmp_path: Path) -> None:
    spec = HookSpec("touch ran")
    runner, notices = _runner(tmp_path, enabled=True, bwrap=None, hooks=HookSettings(stop=(spec,)))
    [result] = await runner.run("stop", [spec], {"reason": "finished"})
    assert result.status is None and not (tmp_path / "ran").exists()
    await runner.run("stop", [spec], {"reason": "finished"})  # said once, not at every turn
    [notice] = notices
    assert notice.hook_event == "stop" and "not run: hooks run sandboxed, and no sandbox is available" in notice.message


async def test_under_no_sandbox_a_hook_runs_in_the_workdir(tmp_path: Path) -> None:
    spec = HookSpec("cat > event.json")
    runner, notices = _runner(tmp_path, enabled=False, bwrap=None, hooks=HookSettings(stop=(spec,)))
    [result] = await runner.run("stop", runner.matching("stop", "failed"), {"reason": "failed"})
    assert result.status == 0 and notices == []
    assert '"session_id": "s1"' in (tmp_path / "event.json").read_text()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_closing_stops_a_background_hook_after_its_patience(tmp_path: Path) -> None:
    spec = HookSpec("echo $$ > pid; exec sleep 600", timeout=600)
    runner, _ = _runner(tmp_path, enabled=False, bwrap=None, hooks=HookSettings(stop=(spec,)))
    runner.run_soon("stop", [spec], {"reason": "cancelled"})
    await asyncio.wait_for(_until(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip()),
                           GUARD)  # the hook has started
    pid = int((tmp_path / "pid").read_text())
    await runner.settle(patience=0.1)
    await asyncio.wait_for(_until(lambda: not _alive(pid)), GUARD)  # killed: gone (or a zombie until reaped)
    assert not runner._background


async def _until(condition: Callable[[], object]) -> None:
    while not condition():
        await asyncio.sleep(0.01)
