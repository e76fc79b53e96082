"""Search benchmarks over ~100 MB of realistic history (1,000 sessions, generated at bench time):
building the index, querying it (next to the linear scan it replaces), indexing an appended turn,
and the picker's content search per keystroke. First, the tokenizer comparison that chose trigram."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pydantic_ai
from common import BenchResult, info, median_ms, result
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from search_corpus import build_corpus, corpus_queries

from tui.agent.models import choose_model
from tui.agent.runtime import RuntimeFactory, SessionRequest
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.shell import DeepTuiApp
from tui.config import Settings
from tui.paths import DataDir
from tui.store.messages_file import MessagesFile
from tui.store.search import HistorySearch
from tui.store.search_db import read_rows
from tui.store.search_index import SearchIndex
from tui.store.search_query import build_match, ranked_hits
from tui.store.search_scan import all_targets, scan
from tui.store.search_text import fold, message_docs, query_terms
from tui.store.session_store import SessionStore

pydantic_ai.BANNER_ENABLED = False
SESSIONS = int(os.environ.get("DEEP_TUI_BENCH_SESSIONS", "1000"))
COMPARISON_SESSIONS = SESSIONS // 5


def _index_size(path: Path) -> int:
    return sum(os.path.getsize(f"{path}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{path}{suffix}"))


# -- tokenizer comparison -------------------------------------------------------------------------


def _compare_tokenizers(root: Path) -> list[BenchResult]:
    """trigram vs unicode61 on the same history: build time, size, query time, and recall against
    what a user expects (every message containing the text, as grep would find it)."""
    data = DataDir(root)
    targets = all_targets(data)
    truth = {query: {(hit.session, hit.message) for hit in scan(data, targets, query_terms(query), limit=10**9)}
             for query in corpus_queries()}
    figures: list[BenchResult] = []
    history_mb = sum((data.session_dir(t.session) / "messages.json").stat().st_size for t in targets) / 1e6
    for tokenizer in ("trigram", "unicode61"):
        path = root / f"compare-{tokenizer}.sqlite"
        index = SearchIndex(data, tokenizer=tokenizer, path=path)
        start = time.perf_counter()
        index.sync()
        build = time.perf_counter() - start
        connection = index.connection()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = read_rows(connection)
        times, recalls = [], []
        for query in corpus_queries():
            match = build_match(query_terms(query), tokenizer)
            times.append(median_ms(lambda: ranked_hits(connection, match, rows, session_id=None, limit=10), runs=5))
            found = {(hit.session, hit.message)
                     for hit in ranked_hits(connection, match, rows, session_id=None, limit=10**6, budget_ms=10**6)}
            recalls.append(len(found & truth[query]) / len(truth[query]) if truth[query] else 1.0)
        label = f"  {tokenizer} on {history_mb:.0f} MB"
        figures += [info(f"{label}: build", build, "s"), info(f"{label}: size on disk", _index_size(path) / 1e6, "MB"),
                    info(f"{label}: query (ranked, top 10)", statistics.median(times), "ms"),
                    info(f"{label}: recall vs substring matches, mean", statistics.mean(recalls), "frac"),
                    info(f"{label}: recall, worst query", min(recalls), "frac")]
        index.close()
    return figures


# -- the 100 MB corpus ----------------------------------------------------------------------------


def _todays_scan(data: DataDir, query: str) -> int:
    """What search cost before the index: parse every messages.json and look through every message."""
    needle = fold(query)
    found = 0
    for target in all_targets(data):
        messages = MessagesFile(data.session_dir(target.session) / "messages.json").load().messages
        for message in messages:
            if any(needle in fold(doc.text) for doc in message_docs(message, data.large_results_dir)):
                found += 1
    return found


def _turn(number: int) -> list[ModelMessage]:
    """The turn bench_store appends: a prompt, a tool call, a 40-line tool result."""
    call_id = f"bench-{number}"
    return [
        ModelRequest(parts=[UserPromptPart(f"question {number} about the parser " * 20)]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/module_{number}.py"}, call_id)]),
        ModelRequest(parts=[ToolReturnPart("read_file", f"line {number} of the module\n" * 40, call_id)]),
    ]


def _append_cost(data: DataDir, search: HistorySearch, session_id: str) -> tuple[float, float]:
    """Median ms to append a turn without and with indexing it (alternating, same session)."""
    handle = SessionStore(data).open(session_id)
    handle.messages.count()
    plain, indexed = [], []
    for number in range(60):
        turn = _turn(number)
        start = time.perf_counter()
        first = handle.append_messages(turn)
        middle = time.perf_counter()
        assert search.record(session_id, first, turn, title=handle.meta.title, parent=handle.meta.parent)
        end = time.perf_counter()
        plain.append((middle - start) * 1000)
        indexed.append((end - start) * 1000)
    handle.close()
    return statistics.median(plain), statistics.median(indexed)


async def _picker_keystroke_ms(data: DataDir, queries: list[str]) -> list[float]:
    """In the running app with the picker open: from the key that completes a query to the list showing
    the sessions whose contents match (the index answers off the UI thread)."""
    work = data.root.parent / "work"
    work.mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=Settings(), data_dir=data, workdir=work, choice=choose_model("offline", None))
    runtime = factory.open_request_sync(SessionRequest())
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    samples: list[float] = []
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        await pilot.pause()
        app.action_sessions()
        while not isinstance(app.screen, SessionPickerScreen) or not app.screen._loaded:
            await asyncio.sleep(0.01)
        picker = app.screen
        for query in queries:
            picker.filter_input.value = query[:-1]
            picker.filter_input.cursor_position = len(query) - 1
            await asyncio.sleep(0.3)  # the previous keystrokes' searches finish
            start = time.perf_counter()
            pressing = asyncio.create_task(pilot.press(query[-1]))  # timed from the key, not from the pilot's wait
            while time.perf_counter() - start < 10 and not (
                    picker.filter_input.value == query and _content_shown(picker)):
                await asyncio.sleep(0.001)
            if picker.filter_input.value != query or not picker.content_hits:
                raise RuntimeError(f"the picker found nothing for {query!r} within 10 s")
            samples.append((time.perf_counter() - start) * 1000)
            await pressing
    await app.runtime.aclose()
    return samples


def _content_shown(picker: SessionPickerScreen) -> bool:
    """The list holds the content hits (snippet rows) for the current filter text."""
    hits = picker.content_hits
    return bool(hits) and any(option.id in hits and "\n" in str(option.prompt)
                              for option in picker.session_list.options)


def main() -> list[BenchResult]:
    figures: list[BenchResult] = []
    print(f"generating {COMPARISON_SESSIONS:,} sessions to compare the FTS5 tokenizers…", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as directory:
        build_corpus(Path(directory), sessions=COMPARISON_SESSIONS)
        figures += _compare_tokenizers(Path(directory))
    print(f"generating {SESSIONS:,} sessions (~100 MB)…", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "data"
        corpus = build_corpus(root, sessions=SESSIONS)
        data = DataDir(root)
        figures.append(info(f"history: {len(corpus.session_ids):,} sessions", corpus.history_bytes / 1e6, "MB"))
        search = HistorySearch(data)
        start = time.perf_counter()
        search.refresh()
        figures.append(info("index build (trigram, from messages.json)", time.perf_counter() - start, "s"))
        search.index.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        figures.append(info("index size on disk", _index_size(root / "index.sqlite") / 1e6, "MB"))
        queries = corpus_queries()
        per_query = [median_ms(lambda: search.search(query, limit=10), runs=5) for query in queries]
        figures.append(result(f"query {corpus.history_bytes / 1e6:.0f} MB, all sessions (median of "
                              f"{len(queries)} queries)", statistics.median(per_query), "ms", 50.0))
        figures.append(info("  slowest query", max(per_query), "ms"))
        one_session = corpus.session_ids[0]
        figures.append(info("  query one session's history", statistics.median(
            [median_ms(lambda: search.search(query, session_id=one_session), runs=5) for query in queries]), "ms"))
        sample = queries[:3]
        figures.append(info("  today's linear scan (parse every messages.json)", statistics.median(
            [median_ms(lambda: _todays_scan(data, query), runs=1) for query in sample]), "ms"))
        targets = all_targets(data)
        figures.append(info("  the fallback scan (raw pre-check, then parse)", statistics.median(
            [median_ms(lambda: scan(data, targets, query_terms(query), limit=10**9), runs=1) for query in sample]),
            "ms"))
        plain, indexed = _append_cost(data, search, corpus.session_ids[1])
        figures.append(info("append one turn, without indexing", plain, "ms"))
        figures.append(result("append one turn: added by indexing it", indexed - plain, "ms", 1.0))
        picker_queries = ["migration", "ConnectionRefused", "alembic", "parse_config", "Traceback", "timeout retry"]
        samples = asyncio.run(_picker_keystroke_ms(data, picker_queries))
        figures.append(result(f"picker content search: keystroke → results, {SESSIONS:,} sessions",
                              statistics.median(samples), "ms", 150.0))
        search.index.close()
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
