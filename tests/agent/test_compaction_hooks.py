"""``[[hooks.pre_compact]]`` / ``[[hooks.post_compact]]`` around a real summary through the loopback OpenAI-chat
server: each hook reads its event as JSON, and what a post_compact hook prints reaches the next request —
capped against the window, counted, recorded with the summary — while a flooding one is a notice."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.agent.shell_support import requires_bwrap
from tests.agent.subagent_support import (
    GUARD,
    Script,
    is_subagent,
    loopback_session,
    run_turn,
    small_window,
    task_call,
    tool_results,
)
from tests.agent.test_subagent_context import write_log
from tests.support.openai_server import ChatServerState, Reply, openai_chat_server
from tui.agent.hooks.hook_events import HookNotice
from tui.base.config import ContextSettings, ProviderSettings, Settings, ToolSettings
from tui.base.hooks_config import HookSettings, HookSpec
from tui.chain.events import ChainEvent, CompactionFinished
from tui.chain.summary_hooks import addition_cap_chars

pytestmark = requires_bwrap

WINDOW = 16_000
RULE = "RULE: never edit prod.cfg"
SUMMARY = "The user asked to read spec.txt; it lists ID-0042 and the parser's forms."


def _settings(base_url: str, hooks: HookSettings) -> Settings:
    return Settings(base_url=base_url, provider=ProviderSettings(read_timeout=GUARD, retries=0),
                    context=ContextSettings(window=WINDOW), tools=ToolSettings(writes="always"), hooks=hooks)


def _reads(count: int) -> list[tuple[str, str, str]]:
    return [(f"r{n}", "read_file", json.dumps({"path": "spec.txt"})) for n in range(count)]


def _system_texts(payload: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in payload["messages"] if m.get("role") == "system"]


async def _summarized(tmp_path: Path, hooks: HookSettings) -> tuple[ChatServerState, list[ChainEvent], Path, Any]:
    """A turn that reads spec.txt three times, /compact, then a second turn; the server's requests, the events the
    subscribers saw, the workdir, and (the compaction's event, the recorded history, the hooks' cap in characters
    as the summary was written)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "spec.txt").write_text("".join(f"requirement {n}: the parser accepts form {n}, ID-{n:04d}\n"
                                           for n in range(120)))
    seen: list[ChainEvent] = []
    state = ChatServerState(reply=SUMMARY, tool_calls=_reads(3))
    with openai_chat_server(state) as (base_url, _):
        async with loopback_session(tmp_path, base_url, settings=_settings(base_url, hooks)) as runtime:
            runtime.subscribe(seen.append)
            await run_turn(runtime, "read spec.txt three times")
            compacted = await runtime.compact()
            cap = addition_cap_chars(runtime.manager.limit, runtime.manager.accountant.ratio)
            await run_turn(runtime, "go on")
            recorded = runtime.load_history(0, runtime.history_count())
    return state, seen, work, (compacted, recorded, cap)


async def test_pre_and_post_compact_hooks_around_a_real_summary(tmp_path: Path) -> None:
    hooks = HookSettings(pre_compact=(HookSpec("cat > pre.json"), HookSpec("touch auto-only", matcher="auto")),
                         post_compact=(HookSpec(f"cat > post.json; echo '{RULE}'", matcher="manual"),))
    state, seen, work, (compacted, recorded, _) = await _summarized(tmp_path, hooks)
    assert isinstance(compacted, CompactionFinished) and compacted.strategy == "summary"
    pre = json.loads((work / "pre.json").read_text())
    assert pre["event"] == "pre_compact" and pre["trigger"] == "manual"
    assert pre["messages_to_summarize"] > 0 and pre["limit"] < pre["window"] == WINDOW
    assert not (work / "auto-only").exists()  # its matcher takes automatic summaries only
    post = json.loads((work / "post.json").read_text())
    assert post["event"] == "post_compact" and SUMMARY in post["summary"]  # the summary the server wrote
    assert post["tokens_after"] < post["tokens"]
    # the next request carries the hook's text after the summary; the one before the summary did not
    assert any(RULE in text for text in _system_texts(state.requests[-1]))
    assert not any(RULE in json.dumps(payload) for payload in state.requests[:-1])
    # recorded with the summary: a resumed session keeps it
    assert any(RULE in json.dumps([getattr(p, "content", "") for p in m.parts]) for m in recorded)
    notices = [e for e in seen if isinstance(e, HookNotice)]
    assert [(n.hook_event, n.level) for n in notices] == [("post_compact", "information")]


async def test_a_flooding_post_compact_hook_is_cut_to_its_share_of_the_window(tmp_path: Path) -> None:
    hooks = HookSettings(post_compact=(HookSpec("head -c 3000000 /dev/zero | tr '\\0' R"),))
    state, seen, _, (compacted, _, cap) = await _summarized(tmp_path, hooks)
    assert isinstance(compacted, CompactionFinished) and compacted.tokens_after < compacted.tokens_before
    [added] = [text for text in _system_texts(state.requests[-1]) if "post_compact hooks" in text]
    assert cap < 16_000 and "more characters left out" in added  # the hook's 16,000, cut to the share
    assert len(added) <= cap
    for payload in state.requests:  # no request ever over the window's worth of characters
        assert len(json.dumps(payload)) < 4 * WINDOW
    warnings = [e.message for e in seen if isinstance(e, HookNotice) and e.level == "warning"]
    assert any("more than 16,000 characters to stdout" in line for line in warnings)
    [said] = [e.message for e in seen if isinstance(e, HookNotice) and e.level == "information"]
    assert said.startswith(f"{len(added):,} characters added to the context after the summary (cut from ")


async def test_a_subagents_summaries_meet_the_same_compaction_hooks(tmp_path: Path) -> None:
    """A subagent on a small window summarizes on its own: its pre_compact hooks are told whose context it is, and
    what its post_compact hooks print reaches the subagent's next request, never the parent's."""
    hooks = HookSettings(pre_compact=(HookSpec("cat >> pre.jsonl; echo >> pre.jsonl"),),
                         post_compact=(HookSpec(f"echo '{RULE}'"),))

    def subagent(payload: dict[str, Any]) -> Reply:  # pages small enough to stay in the context (no eviction)
        done = len(tool_results(payload))
        if done < 8:
            args = json.dumps({"path": "big.log", "offset": done * 150, "limit": 150})
            return Reply(tool_calls=((f"call_read_{done}", "read_file", args),))
        return Reply(text="3 ERROR lines")

    call = task_call("call_small", "read the log", "Read big.log in pages and report every ERROR line.")
    script = Script(parent=[Reply(tool_calls=(call,)), Reply(text="done")], subagent=subagent)
    work = tmp_path / "work"
    work.mkdir()
    write_log(work / "big.log", megabytes=1)
    settings = replace(small_window("", WINDOW), hooks=hooks)
    settings = replace(settings, context=replace(settings.context, min_savings_tokens=10**9))  # no tier 2
    # no usage reported (the loopback's fixed figure would hide the growth): the chain counts by its estimates
    with openai_chat_server(ChatServerState(responder=script, reply=SUMMARY, prompt_tokens=0)) as (base_url, state):
        async with loopback_session(tmp_path, base_url, settings=replace(settings, base_url=base_url)) as runtime:
            await run_turn(runtime, "what went wrong?")
    told = [json.loads(line) for line in (work / "pre.jsonl").read_text().splitlines() if line.strip()]
    assert told and all(event["subagent"] == "subagent 1 (general-purpose): read the log" for event in told)
    subagent_requests = [payload for payload in state.requests if is_subagent(payload)]
    assert any(RULE in json.dumps(payload) for payload in subagent_requests)
    assert not any(RULE in json.dumps(payload) for payload in state.requests if not is_subagent(payload))


async def test_a_hanging_pre_compact_hook_is_stopped_and_the_summary_still_comes(tmp_path: Path) -> None:
    hooks = HookSettings(pre_compact=(HookSpec("sleep 600", timeout=0.5),),
                         post_compact=(HookSpec(f"echo '{RULE}'; exit 3"),))  # failed: its output is not used
    state, seen, _, (compacted, _, _) = await _summarized(tmp_path, hooks)
    assert isinstance(compacted, CompactionFinished) and compacted.strategy == "summary"
    said = [e.message for e in seen if isinstance(e, HookNotice)]
    assert said[0] == "hook 'sleep 600' did not finish in 0.5 s: stopped"
    assert "failed (exit status 3)" in said[1] and len(said) == 2
    assert not any(RULE in json.dumps(payload) for payload in state.requests)
