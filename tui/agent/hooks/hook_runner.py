"""One session's hooks: which ones match an event, each run in turn — in the commands' sandbox (the filter and the
``.git`` guard included) unless the user's own config says ``sandbox = false`` — and every notice told to the
session's subscribers at once (a toast in the app, a line on stderr in ``deep-tui run``), while the turn runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui.agent.hooks.hook_events import HookNotice
from tui.agent.hooks.hook_process import HookResult, run_hook
from tui.agent.shell.sandbox import SHELL, Sandbox
from tui.base.hooks_config import HookSettings, HookSpec
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

SETTLE_PATIENCE = 15.0
"""Seconds a closing session waits for a cancelled turn's stop hooks before it stops them."""

HookEventName = Literal["pre_tool", "post_tool", "pre_compact", "post_compact", "stop"]


@dataclass
class HookRunner:
    """Runs the configured hooks of one session. ``notify``: where a :class:`HookNotice` goes (the session's
    subscribers); ``workdir``: where a hook runs (the sandbox's workdir)."""

    hooks: HookSettings
    sandbox: Sandbox
    workdir: Path
    notify: Callable[[HookNotice], None]
    session_id: str = ""
    _background: set[asyncio.Task[Any]] = field(default_factory=set)
    _said: set[str] = field(default_factory=set)

    def matching(self, event: HookEventName, subject: str) -> list[HookSpec]:
        """The hooks of ``event`` whose matcher takes ``subject`` (a tool's name, a trigger, a turn's ending)."""
        specs: tuple[HookSpec, ...] = getattr(self.hooks, event)
        return [spec for spec in specs if spec.matches(subject)]

    async def run(self, event: HookEventName, specs: Sequence[HookSpec], fields: dict[str, Any]) -> list[HookResult]:
        """Run ``specs`` one after another, each given ``{"event", "session_id", **fields}`` as JSON on stdin."""
        payload = {"event": event, "session_id": self.session_id, **fields}
        results = []
        for spec in specs:
            result = await self._run_one(spec, payload)
            if result.notice:
                self.tell(event, result.notice)
            results.append(result)
        return results

    def run_soon(self, event: HookEventName, specs: Sequence[HookSpec], fields: dict[str, Any]) -> None:
        """Run them in a task of their own (a cancelled turn's ``stop`` hooks); :meth:`settle` waits for it."""
        if specs:
            self._keep(self.run(event, specs, fields))

    def _keep(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settle(self, patience: float = SETTLE_PATIENCE) -> None:
        """Wait for the hooks still running in the background, at most ``patience`` seconds; then they are
        stopped (their process groups killed) — closing a session is never held up for a hook's whole timeout."""
        if not self._background:
            return
        pending = list(self._background)
        _, late = await asyncio.wait(pending, timeout=patience)
        for task in late:
            task.cancel()
        if late:
            await asyncio.gather(*late, return_exceptions=True)
            logger.warning("%d background hook(s) still running when the session closed: stopped", len(late))

    def tell(self, event: HookEventName, message: str, level: Literal["warning", "information"] = "warning") -> None:
        """A notice about a hook of ``event``, to the log and to the subscribers."""
        logger.log(logging.WARNING if level == "warning" else logging.INFO, "hook (%s): %s", event, message)
        self.notify(HookNotice(hook_event=event, message=visible(message), level=level))

    async def _run_one(self, spec: HookSpec, payload: dict[str, Any]) -> HookResult:
        may_deny = payload["event"] == "pre_tool"
        if not spec.sandbox:  # the user's own config said so
            return await run_hook(spec, payload, [SHELL, "-c", spec.command], None, cwd=self.workdir,
                                  may_deny=may_deny)
        if (why := self.sandbox.unavailable()) is not None:  # said once per hook, not at every tool call
            notice = f"hook {spec.command!r} not run: hooks run sandboxed, and {why}"
            first = notice not in self._said
            self._said.add(notice)
            if not first:
                logger.info("%s", notice)
            return HookResult(spec, None, "", "", notice if first else None)
        preparing = asyncio.ensure_future(asyncio.to_thread(self.sandbox.launch, spec.command))
        try:
            launch = await asyncio.shield(preparing)  # shielded: a placeholder it makes must be removed again
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                (await preparing).finish()
            raise
        except OSError as error:
            return HookResult(spec, None, "", "", f"hook {spec.command!r} could not start: {error}")
        notes: list[str] = []
        try:
            result = await run_hook(spec, payload, launch.argv, self.sandbox.environment(), cwd=self.workdir,
                                    pass_fds=launch.pass_fds, on_started=launch.started, may_deny=may_deny)
        finally:
            finishing = asyncio.ensure_future(asyncio.to_thread(launch.finish))
            notes = await asyncio.shield(finishing)
        for note in notes:  # a .git it made, moved aside: as with a command
            self.tell(payload["event"], f"hook {spec.command!r}: {note}")
        return result
