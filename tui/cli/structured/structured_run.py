"""Run turns headless and print them as JSON: one ``result`` object per turn (``json``), or one line per event
as it happens and a ``result`` line per turn (``stream-json``). Prompts come from the command line, or with
``--input-format stream-json`` one JSON object per stdin line (a multi-turn session).

Exit status: the worst turn's — ``interrupted`` (130, or 128 + N for signal N) over ``error`` (1) over
``refused`` (3) over ``success`` (0); a bad input line is said on stderr and skipped, and makes it 2 if
nothing worse happened.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import threading
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TextIO

from tui.agent.hooks.hook_events import HookNotice
from tui.base.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, STOP_SIGNALS, stopped_by
from tui.base.redaction import redact
from tui.cli.structured.schema import EXIT_REASONS, SCHEMA_VERSION, TurnRecord, chain_event, dumps, turn_event
from tui.store.prompt_history import PromptHistory, history_path
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Iterable

    from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
    from tui.chain.events import ChainEvent

logger = logging.getLogger(__name__)

_SEVERITY = {0: 0, 3: 1, EXIT_USAGE: 2, 1: 3}
"""How bad an exit status is, to keep the worst of several turns (interrupted: above them all)."""


class JsonOut:
    """stdout, one JSON object per line; a reader gone away (``| head -1``) stops the printing, not the turn."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def line(self, obj: dict[str, Any]) -> None:
        if self.closed_by_reader:
            return
        try:
            self._stream.write(dumps(obj) + "\n")
            self._stream.flush()
        except BrokenPipeError:
            self.closed_by_reader = True
            from tui.base.console import silence_stdout

            silence_stdout()


def run_structured(factory: RuntimeFactory, request: SessionRequest, prompts: Iterable[str] | None,
                   *, stream: bool) -> int:
    """Run the turns (``prompts``; ``None``: read them from stdin as stream-json) and return the exit status."""
    out, err = JsonOut(sys.stdout), sys.stderr
    source = _from_list(prompts) if prompts is not None else _stdin_prompts(err)
    return asyncio.run(_run(factory, request, source, out, err, stream=stream))


async def _from_list(prompts: Iterable[str]) -> AsyncGenerator[str | None]:
    for prompt in prompts:
        yield prompt


async def _stdin_prompts(err: TextIO) -> AsyncGenerator[str | None]:
    """One prompt per stdin line: ``{"type": "user", "prompt": "…"}`` (``type`` optional). ``None`` stands for
    a bad line (said on stderr). A daemon thread reads stdin, so neither a signal between turns nor the exit
    ever waits for a writer that keeps the pipe open."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def hand_over(raw: str | None) -> bool:
        try:
            loop.call_soon_threadsafe(lines.put_nowait, raw)
        except RuntimeError:  # the loop is closed: nobody reads any more
            return False
        return True

    def read() -> None:
        try:
            for raw in sys.stdin:
                if not hand_over(raw):
                    return
        except (OSError, ValueError) as error:  # stdin closed or undecodable
            logger.warning("stdin: %s", error)
        hand_over(None)

    threading.Thread(target=read, name="stdin-prompts", daemon=True).start()
    number = 0
    while (raw := await lines.get()) is not None:
        number += 1
        if not raw.strip():
            continue
        prompt = parse_input_line(raw)
        if isinstance(prompt, ValueError):
            print(f"deep-tui: stdin line {number}: {visible(str(prompt))}; skipped", file=err, flush=True)
            yield None
        else:
            yield prompt


def parse_input_line(raw: str) -> str | ValueError:
    """The prompt of one ``--input-format stream-json`` line, or why the line is not one."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return ValueError('not JSON (expected {"type": "user", "prompt": "..."})')
    if not isinstance(obj, dict):
        return ValueError('not a JSON object (expected {"type": "user", "prompt": "..."})')
    if obj.get("type", "user") != "user":
        return ValueError(f"unknown type {str(obj.get('type'))[:40]!r} (only \"user\")")
    prompt = obj.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return ValueError('no "prompt" string')
    return prompt


async def _run(factory: RuntimeFactory, request: SessionRequest, prompts: AsyncGenerator[str | None],
               out: JsonOut, err: TextIO, *, stream: bool) -> int:
    mcp = factory.mcp
    stop_notices = None
    if mcp is not None:
        stop_notices = mcp.listen(lambda notice: print(f"deep-tui: {visible(notice.message)}", file=err, flush=True))
        mcp.start()
    try:
        runtime = await factory.open_request(request)
        try:
            return await _turns(runtime, prompts, out, err, stream=stream)
        finally:
            await runtime.aclose()
    finally:
        if mcp is not None:
            await mcp.aclose()
        if stop_notices is not None:
            stop_notices()


async def _turns(runtime: SessionRuntime, prompts: AsyncGenerator[str | None], out: JsonOut, err: TextIO,
                 *, stream: bool) -> int:
    info = runtime.info
    if info.offline:
        print("deep-tui: the offline model (no LLM): it runs the tools and repeats what it read", file=err)
    for warning in info.warnings:
        print(f"deep-tui: warning: {visible(warning)}", file=err)
    if stream:
        out.line({"type": "session", "version": SCHEMA_VERSION, "session_id": info.session_id,
                  "model": info.model_name, "window": runtime.context_window})
    status = EXIT_OK
    async with aclosing(prompts) as source:
        async for prompt in source:
            if prompt is None:
                status = _worse(status, EXIT_USAGE)
                continue
            code = await _one_turn(runtime, prompt, out, stream=stream)
            status = _worse(status, code)
            if code >= 128:  # interrupted: no further prompt
                break
    print(f"deep-tui: session {info.session_id} (continue with: deep-tui --resume {info.session_id})", file=err)
    return status


def _worse(a: int, b: int) -> int:
    if a >= 128 or b >= 128:
        return max(a, b)
    return a if _SEVERITY.get(a, 3) >= _SEVERITY.get(b, 3) else b


async def _one_turn(runtime: SessionRuntime, prompt: str, out: JsonOut, *, stream: bool) -> int:
    record = TurnRecord(prompt=redact(prompt))
    _remember_prompt(runtime, prompt)
    cost_before = _cost(runtime)

    def on_chain(event: ChainEvent) -> None:
        if isinstance(event, HookNotice):  # a notice: on stderr (and a "hook" line in stream-json)
            print(f"deep-tui: {visible(event.describe())}", file=sys.stderr, flush=True)
        line = chain_event(event)
        if line is None:
            return
        record.on_chain_event(line)
        if stream:
            out.line(line)

    unsubscribe = runtime.subscribe(on_chain)
    task = asyncio.current_task()
    assert task is not None
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not received:  # a second signal must not interrupt the saving the first one started
            received.append(signum)
            task.cancel()

    loop = asyncio.get_running_loop()
    installed = []
    for signum in (signal.SIGINT, *STOP_SIGNALS):
        try:
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
        except (ValueError, RuntimeError, NotImplementedError) as error:  # not the main thread
            logger.debug("cannot handle %s: %s", signum.name, error)
    try:
        async with aclosing(runtime.run_turn(prompt)) as events:
            async for event in events:
                record.on_turn_event(event)
                if stream:
                    line = turn_event(event)
                    if line is not None:
                        out.line(line)
    except asyncio.CancelledError:
        if not received:
            raise
        task.uncancel()
        record.interrupted_by = received[0].name
    finally:
        unsubscribe()
        for signum in installed:
            loop.remove_signal_handler(signum)
    if received:
        code = EXIT_INTERRUPTED if received[0] == signal.SIGINT else stopped_by(received[0])
    else:
        code = EXIT_REASONS[record.exit_reason]
    cost_after = _cost(runtime)
    cost = None if cost_before is None or cost_after is None else round(cost_after - cost_before, 6)
    usage = runtime.last_usage
    out.line(record.result(session_id=runtime.info.session_id, model=runtime.info.model_name, cost_usd=cost,
                           context_tokens=usage.tokens if usage else None,
                           window=usage.window if usage else runtime.context_window, exit_code=code))
    return code


def _cost(runtime: SessionRuntime) -> float | None:
    totals = runtime.session_cost
    return None if totals is None else totals.total_usd


def _remember_prompt(runtime: SessionRuntime, prompt: str) -> None:
    """The prompt joins the session's prompt history (Up recalls it in the app), as with text output."""
    info = runtime.info
    parent = history_path(runtime.data_root, info.parent) if info.parent else None
    PromptHistory.load(history_path(runtime.data_root, info.session_id), inherit_from=parent).add(prompt)
