"""Random sessions from a seed: windows 4k–200k, a summarizer fault, a token-count disagreement, and a
mix of tool traffic, subagents (``task`` calls, each subagent with its own reads), chat, resumes, forks and manual
compactions."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from fuzzfarm.spec import FAULT_KINDS, Action, SessionSpec, ToolCallSpec
from fuzzfarm.workspace import BINARY_FILE, BINARYISH_FILE, LARGE_FILES, SMALL_FILES
from tui.base.config import MODE_NAMES

WINDOWS = (4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 200_000)
WINDOW_WEIGHTS = (3, 3, 3, 2, 2, 1, 1)
COMMAND_SHARE = 0.07
"""Of the tool calls, the share that runs a shell command."""
GREP_PATTERNS = ("value=VAL-0", "KeyError", "path=src/pkg_1", "took 1\\d ms", "note mid", "EACCES|ValueError")
FOCUSES = ("the KeyError in src/pkg_3/mod_3.py", "what the user asked to keep", "VAL-00042 and the timings", "")
CONSTRAINTS = ("never touch huge.log", "keep VAL-00007 as the baseline", "answer in English",
               "use 4 spaces, not tabs", "the deadline is 12:00 UTC")


@dataclass
class _State:
    """What the generator knows about the workdir: written files and the marker each holds."""

    written: dict[str, str] = field(default_factory=dict)
    writes: int = 0


def _big_text(rng: random.Random, chars: int, marker: str) -> str:
    words = []
    total = 0
    while total < chars:
        word = rng.choice(("alpha", "beta", "gamma", "`config.max_retries`", "src/app/main.py", "42 ms", "ValueError",
                           "ünïcödé", "tab\there", "quote\"d", "line\n"))
        words.append(word)
        total += len(word) + 1
    return f"{marker}\n" + " ".join(words) + "\n"


COMMANDS = (
    "cat huge.log",
    "grep -n KeyError big.log huge.log",
    "grep -c NOT-THERE small.txt",  # exit status 1, one line
    "ls -la",
    "wc -l *.txt *.log",
    "cat blob.txt",  # escapes, bidi overrides, CR: hostile bytes through the chain
    "seq 1 {n}",
    "awk 'BEGIN {{ for (i = 1; i <= {n}; i++) printf \"test_{n}.py::case_%d PASSED [%d%%]\\n\", i, i % 100 }}'",
    "echo to stderr >&2; sort -r mid.txt | head -n {k}",
)
"""Shell commands for ``execute`` (in the sandbox, in the session's workdir): outputs from a line to a few MB."""


def _command(rng: random.Random) -> ToolCallSpec:
    template = rng.choice(COMMANDS)
    n = rng.choice((50, 2_000, 40_000, 120_000))  # up to ~4 MB from awk, ~0.8 MB from seq
    return ToolCallSpec("execute", {"command": template.format(n=n, k=rng.choice((5, 50, 400)))})


def _call(rng: random.Random, state: _State, tool_heavy: bool, busy: set[str]) -> ToolCallSpec | None:
    if rng.random() < COMMAND_SHARE:
        return _command(rng)
    roll = rng.random()
    if roll < 0.30:
        return ToolCallSpec("read_file", {"path": rng.choice(SMALL_FILES)})
    if roll < (0.50 if tool_heavy else 0.38):
        args: dict[str, object] = {"path": rng.choice(LARGE_FILES), "limit": rng.choice((400, 1200, 3000))}
        if rng.random() < 0.5:
            args["offset"] = rng.randrange(0, 600)
        return ToolCallSpec("read_file", args)
    if roll < 0.62:
        args = {"pattern": rng.choice(GREP_PATTERNS)}
        if rng.random() < 0.5:
            args["path"] = rng.choice((*SMALL_FILES, *LARGE_FILES))
        return ToolCallSpec("grep", args)
    if roll < 0.72:
        state.writes += 1
        path = f"out/gen_{state.writes}.txt"
        if path in busy:
            return None
        marker = f"MARKER-{state.writes}-0"
        state.written[path] = marker
        busy.add(path)
        return ToolCallSpec("write_file", {"path": path, "content": _big_text(rng, rng.choice((500, 4_000, 20_000)),
                                                                              marker)})
    if roll < 0.80:
        candidates = sorted(p for p in state.written if p not in busy)
        if not candidates:
            return None
        path = rng.choice(candidates)
        old = state.written[path]
        new = f"{old}-e"
        state.written[path] = new
        busy.add(path)
        return ToolCallSpec("edit_file", {"path": path, "old_text": old,
                                          "new_text": _big_text(rng, rng.choice((300, 3_000, 12_000)), new)})
    if roll < 0.88:
        return ToolCallSpec("read_file", {"path": BINARYISH_FILE})
    if roll < 0.91:
        return ToolCallSpec("read_file", {"path": BINARY_FILE})
    if roll < 0.96:
        return ToolCallSpec("ls", {"path": "."})
    return ToolCallSpec("glob", {"pattern": "**/*.txt"})


SUBAGENT_SHARE = 0.3
"""Of the tool-heavy turns, the share that hands work to subagents (one to three ``task`` calls at once)."""
SUBTASK_PREFIX = "fuzz-subtask"


def _read_only_call(rng: random.Random) -> ToolCallSpec:
    """A subagent's call: reads and searches (its writes would race the parent's on the same files)."""
    roll = rng.random()
    if roll < 0.5:
        args: dict[str, object] = {"path": rng.choice(LARGE_FILES), "limit": rng.choice((400, 1200, 3000))}
        if rng.random() < 0.5:
            args["offset"] = rng.randrange(0, 600)
        return ToolCallSpec("read_file", args)
    if roll < 0.8:
        return ToolCallSpec("grep", {"pattern": rng.choice(GREP_PATTERNS)})
    return ToolCallSpec("read_file", {"path": rng.choice(SMALL_FILES)})


def _subagent_batch(rng: random.Random, number: int) -> tuple[tuple[ToolCallSpec, ...], tuple[Action, ...]]:
    """One response's ``task`` calls and what each subagent then does."""
    calls: list[ToolCallSpec] = []
    subtasks: list[Action] = []
    for index in range(rng.choice((1, 1, 2, 3))):
        prompt = f"{SUBTASK_PREFIX} {number}.{index}: read the logs and report every VAL- value with its line"
        calls.append(ToolCallSpec("task", {"description": f"subtask {number}.{index}", "prompt": prompt}))
        batches = tuple(tuple(_read_only_call(rng) for _ in range(rng.choice((1, 1, 2))))
                        for _ in range(rng.randint(1, 4)))
        subtasks.append(Action("turn", prompt=prompt, batches=batches,
                               answer=f"Subtask {number}.{index}: VAL-{rng.randrange(99999):05d} at line "
                                      f"{rng.randrange(9000)}."))
    return tuple(calls), tuple(subtasks)


def _turn(rng: random.Random, number: int, state: _State, tool_heavy: bool,
          sub_rng: random.Random | None = None, window: int = 0) -> Action:
    constraint = rng.choice(CONSTRAINTS)
    module = f"src/pkg_{rng.randrange(37)}/mod_{rng.randrange(97)}.py"
    prompt = f"turn {number}: look into {module} and the logs; remember \"{constraint}\""
    batches: list[tuple[ToolCallSpec, ...]] = []
    if rng.random() < (0.85 if tool_heavy else 0.35):
        for _ in range(rng.randint(1, 4 if tool_heavy else 2)):
            busy: set[str] = set()
            calls = [c for c in (_call(rng, state, tool_heavy, busy) for _ in range(rng.choice((1, 1, 2, 3, 4))))
                     if c is not None]
            if calls:
                batches.append(tuple(calls))
    length = rng.choice((80, 400, 2_000, 6_000)) if not batches else rng.choice((80, 300))
    answer = (f"Turn {number}: checked `{module}`; VAL-{rng.randrange(99999):05d} took {rng.randrange(900)} ms. "
              + "Details follow. " * (length // 16))
    subtasks: tuple[Action, ...] = ()
    if sub_rng is not None and tool_heavy and window >= 16_000 and sub_rng.random() < SUBAGENT_SHARE:
        calls, subtasks = _subagent_batch(sub_rng, number)  # a stream of its own: the rest stays as it was
        batches.insert(sub_rng.randint(0, len(batches)), calls)
    return Action("turn", prompt=prompt, batches=tuple(batches), answer=answer, subtasks=subtasks)


TODO_STEPS = ("read the logs", "find the KeyError in src/pkg_3/mod_3.py", "fix VAL-00042's parser",
              "run the tests", "update the notes", "report to the user", "clean up out/")


def _todos(rng: random.Random) -> ToolCallSpec:
    """A write_todos call: a list of 1–7 items, some done, at most one in progress."""
    count = rng.randint(1, len(TODO_STEPS))
    done = rng.randint(0, count)
    todos = [{"content": step, "status": "completed" if n < done else ("in_progress" if n == done else "pending"),
              **({"active_form": f"working on: {step}"} if rng.random() < 0.7 else {})}
             for n, step in enumerate(TODO_STEPS[:count])]
    return ToolCallSpec("write_todos", {"todos": todos})


TODO_MIN_WINDOW = 8_000
"""No write_todos traffic below this window: a 4k window's busiest turns already fill it with the tools alone."""


def _task_traffic(seed: int, window: int, actions: list[Action]) -> list[Action]:
    """Todo and plan-mode traffic drawn from a random stream of its own (the rest of a seed's session stays as it
    was): write_todos calls at the start of some turns, /keep lines and mode switches between actions."""
    rng = random.Random(seed * 7_919 + 30)
    mixed: list[Action] = []
    for action in actions:
        if action.kind == "turn" and rng.random() < 0.3 and window >= TODO_MIN_WINDOW:
            action = Action("turn", prompt=action.prompt, batches=((_todos(rng),), *action.batches),
                            answer=action.answer)
        mixed.append(action)
        roll = rng.random()
        if roll < 0.10:
            mixed.append(Action("keep", text=rng.choice(CONSTRAINTS)))
        elif roll < 0.18:
            mixed.append(Action("mode", text=rng.choice(MODE_NAMES)))
    return mixed


def generate(seed: int) -> SessionSpec:
    """The session for ``seed`` (the same seed always gives the same session)."""
    rng = random.Random(seed)
    sub_rng = random.Random(seed * 7_919 + 13)
    window = rng.choices(WINDOWS, WINDOW_WEIGHTS)[0]
    tool_heavy = rng.random() < 0.7
    state = _State()
    actions: list[Action] = []
    turns = rng.randint(4, 9) + (6 if window >= 128_000 else 0)
    number = 0
    while number < turns:
        roll = rng.random()
        if actions and roll < 0.08:
            actions.append(Action("resume"))
        elif actions and roll < 0.12:
            actions.append(Action("fork"))
        elif actions and roll < 0.19:
            actions.append(Action("compact", focus=rng.choice(FOCUSES)))
        else:
            actions.append(_turn(rng, number, state, tool_heavy, sub_rng, window))
            number += 1
    return SessionSpec(seed=seed, window=window, fault=rng.choice(FAULT_KINDS),
                       disagreement=round(rng.uniform(0.75, 1.25), 3), model_counts=rng.random() < 0.5,
                       tool_heavy=tool_heavy, actions=tuple(_task_traffic(seed, window, actions)))
