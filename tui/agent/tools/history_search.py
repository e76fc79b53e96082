"""The agent's way back to anything said before: search the recorded history, read a message exactly.

``search_conversation_history(query, scope)`` goes through the search index over every
session's full messages.json (summarized turns, tool results and saved outputs included);
``read_conversation_message(message, session)`` returns one recorded message verbatim —
the recovery path after a summary replaced it in the context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic_ai import FunctionToolset

from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.failures import refuse
from tui.base.paths import DataDir
from tui.store.search.history_reader import load_history_from
from tui.store.search.search_outcome import SearchOutcome
from tui.store.search.searchable_text import message_text
from tui.store.search.searcher import HistorySearch, QueryTooShort, SearchHit
from tui.store.session_store import SessionStore
from tui.store.store_errors import CorruptSessionError, StoreError
from tui.store.subagent_histories import subagent_history_file
from tui.text.wording import message_index, message_number

MAX_HITS = 25
READ_LIMIT = 20_000
TURN_ALLOWANCE = 8
"""Extra hits asked for, since those in the running turn are dropped."""


def _short(session_id: str) -> str:
    return session_id[:8]


def _subagent_of(hit: SearchHit, current: str) -> int | None:
    """The number of the current session's subagent whose history holds ``hit``, else ``None``."""
    return hit.subagent if hit.owner == current else None


def _hit_block(number: int, hit: SearchHit, current: str) -> str:
    role = hit.role if hit.tool is None else f"{hit.role} ({hit.tool})"
    where = "this session" if hit.session == current else f'session {_short(hit.session)} "{hit.title}"'
    subagent = _subagent_of(hit, current)
    if subagent is not None:
        where = f'subagent {subagent} of this session "{hit.title[:80]}"'
    elif hit.subagent is not None:  # another session's subagent (every session is searched)
        where = f'subagent {hit.subagent} of session {_short(hit.owner)} "{hit.title}"'
    lines = [f"[{number}] message {message_number(hit.message)} · {role} · {where}"]
    if hit.session != current and current in hit.forks:
        lines[0] = (f"[{number}] message {message_number(hit.message)} · {role} · this session "
                    f"(copied from its parent {_short(hit.session)})")
    elif hit.forks:
        shown = ", ".join(_short(fork) for fork in hit.forks[:5]) + (" …" if len(hit.forks) > 5 else "")
        lines.append(f"    (also in fork{'s' if len(hit.forks) > 1 else ''} {shown}, copied with the parent's history)")
    if hit.path:
        lines.append(f"    saved output: {hit.path} (read it with read_file)")
    lines.append(hit.excerpt or hit.snippet)
    return "\n".join(lines)


def format_outcome(outcome: SearchOutcome, query: str, *, scope: str, current: str) -> str:
    """The tool's answer: ranked hits with session, message number, role and the lines around the match."""
    where = "this session's whole history" if scope == "session" else "every session"
    notice = f"(note: {outcome.notice})\n" if outcome.notice else ""
    if not outcome.hits:
        return f"{notice}no matches for {query!r} in {where}"
    blocks = [_hit_block(number, hit, current) for number, hit in enumerate(outcome.hits, start=1)]
    first = outcome.hits[0]
    session_arg = "" if first.session == current else f', session="{_short(first.session)}"'
    if (subagent := _subagent_of(first, current)) is not None:
        session_arg = f", subagent={subagent}"
    elif first.subagent is not None:
        session_arg = f', session="{_short(first.owner)}", subagent={first.subagent}'
    return (f"{notice}{len(outcome.hits)} hit{'s' if len(outcome.hits) != 1 else ''} for {query!r} in {where}, "
            "best first:\n\n" + "\n\n".join(blocks)
            + f"\n\nExact text of a message: read_conversation_message(message={message_number(first.message)}"
            f"{session_arg}).")


def history_toolset(search: HistorySearch, session_id: str,
                    turn_start: Callable[[], int] | None = None) -> FunctionToolset[None]:
    """The search and read-back tools for the session ``session_id``; messages from ``turn_start()`` on
    (the running turn: the prompt that asked for the search, say) are left out of the hits."""
    toolset: FunctionToolset[None] = FunctionToolset()
    data_dir: DataDir = search.data_dir

    @tool_schemas.tool_plain(toolset)
    def search_conversation_history(query: str, scope: Literal["session", "all"] = "session", limit: int = 10) -> str:
        """Search the recorded conversation for ``query`` (all words must occur; "quote" a phrase; any
        substring of 3+ characters matches, case-insensitively). ``scope="session"``: this session's whole
        history, including turns a summary replaced, tool results and saved outputs; ``scope="all"``: every
        session. Returns ranked hits with session, message number, role and the lines around the match."""
        if not query.strip():
            raise refuse("the query is empty")
        wanted = max(1, min(limit, MAX_HITS))
        try:
            outcome = search.search(query, session_id=session_id if scope == "session" else None,
                                    limit=wanted + TURN_ALLOWANCE, excerpts=True)
        except QueryTooShort as error:
            raise refuse(str(error)) from None
        except ValueError as error:
            raise refuse(str(error)) from None
        if turn_start is not None:
            first = turn_start()
            outcome.hits = [hit for hit in outcome.hits if hit.session != session_id or hit.message < first]
        if scope == "session" and len(outcome.hits) < wanted:  # what its subagents read and said, too
            outcome.hits += search.subagent_hits(query, session_id, limit=wanted - len(outcome.hits),
                                                 excerpts=True)
        outcome.hits = outcome.hits[:wanted]
        return format_outcome(outcome, query, scope=scope, current=session_id)

    @tool_schemas.tool_plain(toolset)
    def read_conversation_message(message: int, session: str | None = None, offset: int = 0,
                                  limit: int = READ_LIMIT, subagent: int | None = None) -> str:
        """The exact recorded text of message number ``message`` (1 is the session's first; the numbers
        search_conversation_history gives) of this session, or of ``session`` (an id or unique prefix), or of
        that session's ``subagent`` (its number). Long messages: page with offset/limit (characters)."""
        index = message_index(message)
        try:
            target = SessionStore(data_dir).resolve(session) if session else session_id
            history = data_dir.session_dir(target) / "messages.json"
            shown = _short(target)
            if subagent is not None:
                history = subagent_history_file(data_dir.session_dir(target), max(0, subagent))
                if not history.exists():
                    raise refuse(f"session {shown} has no subagent {subagent}")
                shown = f"{shown}, subagent {subagent}"
            recorded, count = load_history_from(history, max(0, index), max(0, index) + 1)
        except CorruptSessionError as error:
            raise refuse(str(error)) from None
        except StoreError as error:
            raise refuse(str(error)) from None
        if not 0 <= index < count or not recorded:
            numbers = f"{count} messages (1 to {count})" if count > 1 else ("1 message (1)" if count else "no messages")
            raise refuse(f"session {shown} has {numbers}; there is no message {message}")
        text = message_text(recorded[0])
        offset, limit = max(0, offset), max(1, limit)
        page = text[offset:offset + limit]
        header = f"message {message} of session {shown} ({len(text):,} characters"
        if offset or offset + limit < len(text):
            header += f"; showing {offset:,}-{offset + len(page):,}"
            if offset + limit < len(text):
                header += f"; continue with offset={offset + limit}"
        return f"{header}):\n{page}"

    return toolset
