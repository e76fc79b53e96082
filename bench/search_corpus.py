"""A deterministic corpus of realistic session histories for the search benchmarks.

Each session is a real ``<data>/sessions/<id>/`` directory (messages.json in deep-tui's
layout, session.json) holding what long coding sessions hold: prose prompts and answers,
tool calls with paths and commands, tool results with code, grep output, logs with
tracebacks, numbers and hashes, the odd summary, and forks that copy a parent's prefix.
With ``planted=True`` it also holds what issue 23 measured with: saved (evicted) outputs in
``large_tool_results/``, sessions adopted from pydantic-deep (only an indent=2 messages.json),
and needles (:data:`NEEDLES`: a Windows path, a pasted line of code, a two-character CJK word,
exact identifiers among longer ones that contain them, text only a saved output holds).
Generated at bench time (``random.Random(seed)``), never committed.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.chain.summary_message import make_summary_message
from tui.store.messages_file import encode_message
from tui.store.meta import ParentRef, SessionMeta

PROSE = ["the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "on", "with", "as", "this", "be", "are", "we", "can", "not", "should", "when", "from", "by", "or", "if", "but", "so", "then", "make", "use", "need", "want", "change", "fix", "add", "remove", "update", "keep", "check", "run", "test", "build", "move", "rename", "split", "handle", "return", "read", "write", "parse", "load", "save", "open", "close", "start", "stop", "file", "function", "class", "module", "method", "value", "error", "case", "line", "path", "name", "data", "config", "option", "setting", "output", "input", "result", "request", "response", "session", "message", "history", "context", "window", "token", "model", "user", "agent", "tool", "call", "summary", "memory", "index", "search", "query", "table", "column", "row", "page", "list", "item", "key", "map", "set", "string", "number", "count", "size", "limit", "offset", "default", "first", "last", "next", "previous", "before", "after", "again", "still", "only", "also", "just", "now", "here", "there", "why", "how", "what", "which", "where", "because", "failing", "passing", "broken", "slow", "fast", "large", "small", "empty", "missing", "wrong", "right", "same", "different", "new", "old", "plan", "step", "idea", "problem", "reason", "issue", "bug", "feature", "release", "version", "branch", "commit", "merge", "review", "migration", "schema", "database", "cache", "server", "client", "network", "timeout", "retry", "backoff", "header", "payload"]

TECH = ["tokenizer", "lexer", "parser", "compiler", "scheduler", "dispatcher", "renderer", "serializer", "validator", "resolver", "allocator", "registry", "manager", "handler", "factory", "adapter", "wrapper", "provider", "consumer", "producer", "pipeline", "worker", "executor", "buffer", "stream", "channel", "socket", "cursor", "snapshot", "journal", "ledger", "checkpoint", "watermark", "partition", "shard", "replica", "quorum", "lease", "mutex", "semaphore", "barrier"]

ERRORS = ["ValueError", "KeyError", "TypeError", "TimeoutError", "ConnectionRefusedError",
          "FileNotFoundError", "PermissionError", "UnicodeDecodeError", "AssertionError",
          "IntegrityError", "OperationalError", "RecursionError", "IndexError"]

COMMANDS = ["pytest -x -q tests/{a}", "git log --oneline -n {n}", "git diff HEAD~{n} -- {p}",
            "python -m {m} --verbose", "make {w}", "ruff check {p}", "mypy --strict {p}",
            "docker compose up -d {w}", "curl -s http://localhost:{port}/{w}", "alembic upgrade {h}"]


def _identifier(rng: random.Random) -> str:
    words = [rng.choice(TECH if rng.random() < 0.4 else PROSE[40:]) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.25:
        return words[0] + "".join(word.capitalize() for word in words[1:])
    return "_".join(words)


class _Vocabulary:
    """Identifiers, paths and modules shared by all sessions (a project's names recur)."""

    def __init__(self, rng: random.Random) -> None:
        self.identifiers = [_identifier(rng) for _ in range(3_000)]
        packages = [rng.choice(TECH) for _ in range(30)]
        self.paths = [f"src/{rng.choice(packages)}/{rng.choice(self.identifiers)}.py" for _ in range(800)]
        self.modules = [path[4:-3].replace("/", ".") for path in self.paths[:200]]


def _zipf(rng: random.Random, items: list[str]) -> str:
    """Some names far more often than others, as in real sessions."""
    return items[int(len(items) * rng.random() ** 4)]


def _sentence(rng: random.Random, vocab: _Vocabulary, words: int) -> str:
    out: list[str] = []
    for _ in range(words):
        roll = rng.random()
        if roll < 0.08:
            out.append(f"`{_zipf(rng, vocab.identifiers)}`")
        elif roll < 0.11:
            out.append(_zipf(rng, vocab.paths))
        elif roll < 0.13:
            out.append(str(rng.randint(2, 65_535)))
        else:
            out.append(_zipf(rng, PROSE))
    text = " ".join(out)
    return text[0].upper() + text[1:] + "."


def _prose(rng: random.Random, vocab: _Vocabulary, sentences: int) -> str:
    return " ".join(_sentence(rng, vocab, rng.randint(6, 22)) for _ in range(sentences))


def _code(rng: random.Random, vocab: _Vocabulary, lines: int) -> str:
    out: list[str] = []
    for number in range(1, lines + 1):
        name = _zipf(rng, vocab.identifiers)
        other = _zipf(rng, vocab.identifiers)
        shape = rng.random()
        if shape < 0.15:
            code = f"def {name}(self, {other}: int = {rng.randint(0, 99)}) -> str:"
        elif shape < 0.25:
            code = f"class {name.title().replace('_', '')}({other.title().replace('_', '')}):"
        elif shape < 0.35:
            code = f"    raise {rng.choice(ERRORS)}(f\"cannot {rng.choice(PROSE)} {{{other}!r}}\")"
        elif shape < 0.45:
            code = f"from {rng.choice(vocab.modules)} import {name}, {other}"
        else:
            code = f"    {name} = {other}.{_zipf(rng, vocab.identifiers)}({rng.randint(0, 4096)})"
        out.append(f"{number:>6}\t{code}")
    return "\n".join(out)


def _grep(rng: random.Random, vocab: _Vocabulary, pattern: str, lines: int) -> str:
    return "\n".join(f"{_zipf(rng, vocab.paths)}:{rng.randint(1, 900)}:     {pattern} = "
                     f"{_zipf(rng, vocab.identifiers)}({rng.randint(0, 99)})" for _ in range(lines))


def _log(rng: random.Random, vocab: _Vocabulary, lines: int) -> str:
    out: list[str] = []
    for _ in range(lines):
        stamp = (f"2025-0{rng.randint(1, 9)}-{rng.randint(10, 28)} "
                 f"{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}")
        if rng.random() < 0.1:
            path = _zipf(rng, vocab.paths)
            out.append(f"Traceback (most recent call last):\n  File \"{path}\", line {rng.randint(1, 800)}, in "
                       f"{_zipf(rng, vocab.identifiers)}\n{rng.choice(ERRORS)}: {_sentence(rng, vocab, 8)}")
        else:
            out.append(f"{stamp} {rng.choice(['INFO', 'DEBUG', 'WARN'])} {rng.choice(vocab.modules)} "
                       f"{_sentence(rng, vocab, rng.randint(4, 12))} id={rng.getrandbits(64):016x}")
    return "\n".join(out)


def _command(rng: random.Random, vocab: _Vocabulary) -> str:
    return rng.choice(COMMANDS).format(a=_zipf(rng, vocab.paths), n=rng.randint(1, 30), p=_zipf(rng, vocab.paths),
                                       m=rng.choice(vocab.modules), w=_zipf(rng, PROSE),
                                       port=rng.randint(3000, 9000), h=f"{rng.getrandbits(48):012x}")


def _turn(rng: random.Random, vocab: _Vocabulary, number: int) -> list[ModelMessage]:
    """A prompt, one to three tool calls with their results, and an answer."""
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(_prose(rng, vocab, rng.randint(1, 4)))])]
    for call in range(rng.randint(1, 3)):
        call_id = f"call-{number}-{call}"
        kind = rng.random()
        if kind < 0.4:
            path = _zipf(rng, vocab.paths)
            tool, args, output = "read_file", {"path": path}, _code(rng, vocab, rng.randint(20, 90))
        elif kind < 0.6:
            pattern = _zipf(rng, vocab.identifiers)
            tool, args, output = "grep", {"pattern": pattern}, _grep(rng, vocab, pattern, rng.randint(3, 30))
        elif kind < 0.8:
            command = _command(rng, vocab)
            tool, args, output = "run_command", {"command": command}, _log(rng, vocab, rng.randint(5, 40))
        else:
            path = _zipf(rng, vocab.paths)
            tool, args, output = ("write_file", {"path": path, "content": _code(rng, vocab, rng.randint(10, 40))},
                                  f"wrote {rng.randint(200, 9000)} bytes to {path}")
        messages.append(ModelResponse(parts=[ToolCallPart(tool, args, call_id)]))
        messages.append(ModelRequest(parts=[ToolReturnPart(tool, output, call_id)]))
    answer = _prose(rng, vocab, rng.randint(2, 6))
    if rng.random() < 0.3:
        answer += f"\n\n```python\n{_code(rng, vocab, rng.randint(3, 12))}\n```"
    messages.append(ModelResponse(parts=[TextPart(answer)]))
    return messages


@dataclass(frozen=True)
class Corpus:
    """What was generated: the data directory, its session ids, and its size on disk."""

    root: Path
    session_ids: list[str]
    history_bytes: int
    saved_bytes: int = 0
    """Saved (evicted) outputs in ``large_tool_results/``."""
    adopted: tuple[str, ...] = ()
    """Sessions written as pydantic-deep writes them (an indent=2 JSON array, no session.json)."""


NEEDLES: dict[str, tuple[str, int]] = {
    # query: (text planted, how many messages get it)
    "C:\\Users\\build\\agent.log": ("copied C:\\Users\\build\\agent.log to the share", 4),
    'logger.debug("%s fixed", handler)': ('    logger.debug("%s fixed", handler)', 17),
    "東京": ("東京の支店で会議があります", 6),
    "parse_config": ("cfg = parse_config(path)", 5),
    "TokenRefreshScheduler": ("scheduler = TokenRefreshScheduler(clock)", 4),
    "adopted_only_walrus": ("the adopted_only_walrus note", 1),
}
DECOYS = ["京都に行きます", "reparse_config_cache.clear()", "reparse_config_cache(path, reparse_config_cache)",
          "TokenRefreshSchedulerFactory()", "TokenRefreshSchedulerFactory.build(TokenRefreshSchedulerFactory)"]
"""Texts that hold a needle inside a longer word (or a neighbouring CJK word): matches, but not exact ones."""
SAVED_ONLY = "e7f3a9c0d15b2864"
"""A hex id that only a saved output holds."""
COMMON_QUERIES = ["def", "return", "timeout", "raise ValueError"]


def _plant(messages: list[ModelMessage], text: str, rng: random.Random) -> None:
    """Add ``text`` as a line of a random tool result or answer."""
    for _ in range(50):
        message = messages[rng.randrange(len(messages))]
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and isinstance(part.content, str):
                part.content += "\n" + text + "\n"
                return
            if isinstance(part, TextPart):
                part.content += "\n\n" + text
                return


def _evict(messages: list[ModelMessage], saved_dir: Path, rng: random.Random, vocab: _Vocabulary,
           extra: str | None) -> int:
    """Make one tool result a saved output, as the chain's eviction does: the file, and a pointer."""
    for message in rng.sample(messages, len(messages)):
        for index, part in enumerate(message.parts):
            if isinstance(part, ToolReturnPart) and isinstance(part.content, str):
                text = part.content + "\n" + _log(rng, vocab, rng.randint(60, 160))
                if extra:
                    text += f"\nrequest {extra} finished\n"
                path = saved_dir / f"{part.tool_call_id}-{rng.getrandbits(32):08x}.txt"
                path.write_text(text, encoding="utf-8")
                message.parts[index] = ToolReturnPart(  # type: ignore[index]
                    part.tool_name, f"[output saved at {path}]\npreview:\n{text[:300]}", part.tool_call_id,
                    metadata={"deep_tui_evicted_path": str(path)})
                return len(text.encode())
    return 0


def _write_session(sessions: Path, session_id: str, messages: list[ModelMessage], *, title: str,
                   parent: ParentRef | None, updated: float) -> int:
    directory = sessions / session_id
    directory.mkdir(parents=True)
    data = b"[\n" + b",\n".join(encode_message(message) for message in messages) + b"\n]\n"
    (directory / "messages.json").write_bytes(data)
    SessionMeta(id=session_id, title=title, created=updated - 3600, updated=updated, message_count=len(messages),
                model="anthropic:claude-sonnet-4-5", parent=parent).write(directory / "session.json")
    return len(data)


def build_corpus(root: Path, *, sessions: int = 1_000, bytes_per_session: int = 100_000, seed: int = 10,
                 fork_share: float = 0.05, planted: bool = False) -> Corpus:
    """Write ``sessions`` sessions of about ``bytes_per_session`` each under ``root/sessions`` (with
    ``planted``: saved outputs, adopted sessions and the needles too)."""
    rng = random.Random(seed)
    vocab = _Vocabulary(rng)
    sessions_dir = root / "sessions"
    saved_dir = root / "large_tool_results"
    histories: dict[str, list[ModelMessage]] = {}
    ids: list[str] = []
    adopted: list[str] = []
    total = saved = 0
    now = time.time()
    plants = [(text, count) for text, count in NEEDLES.values() if "adopted_only" not in text]
    planting = random.Random(seed + 2)
    targets = {text: set(planting.sample(range(sessions), min(count, sessions))) for text, count in plants} \
        if planted else {}
    decoy_sessions = set(planting.sample(range(sessions), min(40, sessions))) if planted else set()
    adopted_numbers = set(planting.sample(range(sessions), min(12, sessions))) if planted else set()
    if planted:
        saved_dir.mkdir(parents=True, exist_ok=True)
    for number in range(sessions):
        session_id = f"{rng.getrandbits(48):012x}"
        updated = now - number * 600
        if histories and rng.random() < fork_share:
            parent_id = rng.choice(list(histories))
            upto = rng.randint(1, len(histories[parent_id]))
            messages = list(histories[parent_id][:upto])
            parent: ParentRef | None = ParentRef(parent_id, upto)
        else:
            messages, parent, upto = [], None, 0
        size = sum(len(encode_message(message)) for message in messages)
        turn = 0
        while size < bytes_per_session:
            new = _turn(rng, vocab, turn)
            if turn and turn % 12 == 0:
                new.insert(0, make_summary_message(_prose(rng, vocab, 8), strategy="summary",
                                                   kept_from=len(messages), replaced=len(messages)))
            size += sum(len(encode_message(message)) for message in new)
            messages.extend(new)
            turn += 1
        title = " ".join(_zipf(rng, PROSE) for _ in range(rng.randint(3, 7)))
        own = messages[upto:]  # never the prefix a fork shares (by reference) with its parent
        if planted and own:
            for text, chosen in targets.items():
                if number in chosen:
                    _plant(own, text, planting)
            if number in decoy_sessions:
                for decoy in planting.sample(DECOYS, 2):
                    _plant(own, decoy, planting)
            saved += _evict(own, saved_dir, planting, vocab, SAVED_ONLY if number == sessions // 2 else None)
        if number in adopted_numbers and parent is None:
            if len(adopted) == 0:
                _plant(messages, NEEDLES["adopted_only_walrus"][0], planting)
            total += _write_adopted(sessions_dir, session_id, messages, updated=updated - 2 * 86400)
            adopted.append(session_id)
        else:
            total += _write_session(sessions_dir, session_id, messages, title=title, parent=parent, updated=updated)
        histories[session_id] = messages
        ids.append(session_id)
    return Corpus(root, ids, total, saved, tuple(adopted))


def _write_adopted(sessions: Path, session_id: str, messages: list[ModelMessage], *, updated: float) -> int:
    """A session as pydantic-deep leaves it: only messages.json, one indented JSON array."""
    directory = sessions / session_id
    directory.mkdir(parents=True)
    path = directory / "messages.json"
    data = json.dumps(ModelMessagesTypeAdapter.dump_python(messages, mode="json"), indent=2).encode()
    path.write_bytes(data)
    os.utime(path, (updated, updated))
    return len(data)


def corpus_queries(seed: int = 10) -> list[str]:
    """Queries a user would type: identifiers, fragments, paths, errors, numbers, commands, prose."""
    rng = random.Random(seed)
    vocab = _Vocabulary(rng)
    picks = random.Random(seed + 1)
    identifiers = [picks.choice(vocab.identifiers) for _ in range(6)]
    return [
        *identifiers,
        *(name[1:-1] for name in identifiers[:3] if len(name) > 5),  # mid-word fragments
        picks.choice(vocab.paths),
        picks.choice(vocab.paths).rsplit("/", 1)[-1],
        "ConnectionRefusedError",
        "migration plan",
        "timeout retry backoff",
        "alembic upgrade",
        str(picks.randint(1000, 9999)),
        "Traceback",
        "pytest -x",
    ]


if __name__ == "__main__":  # quick look: python bench/search_corpus.py DIR
    import sys

    target = Path(sys.argv[1])
    started = time.perf_counter()
    corpus = build_corpus(target, sessions=int(sys.argv[2]) if len(sys.argv) > 2 else 50)
    print(json.dumps({"sessions": len(corpus.session_ids), "bytes": corpus.history_bytes,
                      "seconds": round(time.perf_counter() - started, 1)}))


def cached_corpus(root: Path, *, sessions: int, planted: bool = False) -> Corpus:
    """:func:`build_corpus` into ``root``, or a copy of the same corpus kept in ``$DEEP_TUI_BENCH_CORPUS``
    (generated there on first use: generating 100 MB takes a minute or two, copying it a second or two).
    The copy is what the benchmark changes (appends, the index), so the kept one stays pristine."""
    import shutil

    keep = os.environ.get("DEEP_TUI_BENCH_CORPUS")
    if not keep:
        return build_corpus(root, sessions=sessions, planted=planted)
    kept = Path(keep) / f"{sessions}{'-planted' if planted else ''}"
    record = kept / "corpus.json"
    if not record.exists():
        shutil.rmtree(kept, ignore_errors=True)
        corpus = build_corpus(kept / "data", sessions=sessions, planted=planted)
        record.write_text(json.dumps({"session_ids": corpus.session_ids, "history_bytes": corpus.history_bytes,
                                      "saved_bytes": corpus.saved_bytes, "adopted": list(corpus.adopted)}))
    shutil.copytree(kept / "data", root, dirs_exist_ok=True)
    saved = json.loads(record.read_text())
    return Corpus(root, saved["session_ids"], saved["history_bytes"], saved["saved_bytes"], tuple(saved["adopted"]))
