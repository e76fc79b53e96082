"""Search benchmarks over ~100 MB of realistic history (1,000 sessions, generated at bench time, with
saved outputs, adopted pydantic-deep sessions and planted needles): the cold build, the catch-up after
one append, the index's size ÷ the history, the worst in-process query (needles and common words),
``deep-tui search``'s wall time, recall and precision against a plain substring scan, indexing an
appended turn, and the picker's content search per keystroke. First, the tokenizer comparison that
chose trigram."""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pydantic_ai
from common import BenchResult, info, median_ms, result
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from search_corpus import COMMON_QUERIES, NEEDLES, SAVED_ONLY, cached_corpus, corpus_queries

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.screens.session_search import MAX_CONTENT_ROWS
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.store.messages_file import MessagesFile
from tui.store.meta import read_meta
from tui.store.search.database import read_rows
from tui.store.search.history_reader import load_history_from
from tui.store.search.index import SearchIndex
from tui.store.search.queries import build_match, ranked_hits
from tui.store.search.scan import all_targets, scan
from tui.store.search.searchable_text import message_docs
from tui.store.search.searcher import HistorySearch
from tui.store.search.terms import exactness, fold, parse_query, plain_snippet, query_terms
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
            match = build_match(parse_query(query), tokenizer)
            times.append(median_ms(lambda: ranked_hits(connection, match, rows, session_id=None, limit=10), runs=5))
            found = {(hit.session, hit.message)
                     for hit in ranked_hits(connection, match, rows, session_id=None, limit=10**6)}
            recalls.append(len(found & truth[query]) / len(truth[query]) if truth[query] else 1.0)
        label = f"  {tokenizer} on {history_mb:.0f} MB"
        figures += [info(f"{label}: build", build, "s"), info(f"{label}: size on disk", _index_size(path) / 1e6, "MB"),
                    info(f"{label}: query (ranked, top 10)", statistics.median(times), "ms"),
                    info(f"{label}: recall vs substring matches, mean", statistics.mean(recalls), "frac"),
                    info(f"{label}: recall, worst query", min(recalls), "frac")]
        index.close()
    return figures


# -- the 100 MB corpus ----------------------------------------------------------------------------


def _substring_truth(data: DataDir, queries: list[str]) -> dict[str, set[tuple[str, int]]]:
    """Ground truth, as a plain scan finds it: every message with a piece (prompt, answer, tool call or
    result, summary, saved output) holding every word of the query as a substring, ignoring case; a fork's
    copied prefix counted once, under the session that recorded it (as the index lists it)."""
    terms = {query: [fold(term) for term in query_terms(query)] for query in queries}
    truth: dict[str, set[tuple[str, int]]] = {query: set() for query in queries}
    sessions = sorted(path.name for path in data.sessions_dir.iterdir())
    for session in sessions:
        directory = data.session_dir(session)
        own_from = 0
        try:
            parent = read_meta(directory / "session.json", session).parent
        except OSError:
            parent = None
        if parent is not None and (data.session_dir(parent.session) / "messages.json").exists():
            own_from = parent.index or 0
        messages, _ = load_history_from(directory / "messages.json", 0)
        for number in range(own_from, len(messages)):
            texts = [fold(doc.text) for doc in message_docs(messages[number], data.large_results_dir)]
            for query, words in terms.items():
                if any(all(word in text for word in words) for text in texts):
                    truth[query].add((session, number))
    return truth


def _cli_query(root: Path, query: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``deep-tui search QUERY`` as a user runs it (a new process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tui.cli", "search", "--data-dir", str(root), query],
                          capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"deep-tui search {query!r} failed: {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli_env(cache: Path) -> dict[str, str]:
    """As an installed deep-tui runs: its modules compiled once (an installed wheel ships them compiled;
    a checkout run with PYTHONDONTWRITEBYTECODE would compile every module on every run)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(Path(__file__).parent.parent), "PYTHONPYCACHEPREFIX": str(cache)}


def _catch_up_ms(data: DataDir, session_id: str) -> float:
    """Another program appends a turn to a session; a new deep-tui process brings the index up to date."""
    samples = []
    for number in range(3):
        MessagesFile(data.session_dir(session_id) / "messages.json").append(_turn(10_000 + number))
        search = HistorySearch(data)
        start = time.perf_counter()
        report = search.refresh()
        samples.append((time.perf_counter() - start) * 1000)
        assert report.indexed == [session_id], report
        search.index.close()
    return statistics.median(samples)


def _query_ms(search: HistorySearch, query: str, session_id: str | None = None) -> tuple[float, float]:
    """Median wall and CPU milliseconds of one in-process query (5 runs)."""
    walls, cpus = [], []
    for _ in range(5):
        start, cpu = time.perf_counter(), time.process_time()
        search.search(query, session_id=session_id, limit=10)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def _quality(search: HistorySearch, truth: dict[str, set[tuple[str, int]]]) -> tuple[int, int]:
    """(queries missing a true match, false hits in all) against the substring scan."""
    missing = false_hits = 0
    for query, expected in truth.items():
        found = {(hit.session, hit.message) for hit in search.search(query, limit=10**6).hits}
        missing += bool(expected - found)
        false_hits += len(found - expected)
        if expected - found or found - expected:
            print(f"  {query!r}: {len(expected - found)} missed, {len(found - expected)} false", file=sys.stderr)
    return missing, false_hits


def _first_exact_rank(search: HistorySearch, query: str) -> int:
    """Where the first hit holding ``query`` as a whole identifier is listed (99: not in the first 50)."""
    parsed = parse_query(query)
    for rank, hit in enumerate(search.search(query, limit=50).hits, start=1):
        if exactness(fold(plain_snippet(hit.snippet, "", "")), parsed) < 2:
            return rank
    return 99


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


def _picker_quality(search: HistorySearch, truth: dict[str, set[tuple[str, int]]], order: list[str]) -> tuple[int, int]:
    """(sessions missed, hits not matching) of the picker's content query, every matching session asked for,
    against the substring scan: each session holding the text listed, each listed hit a true match."""
    missed = false_hits = 0
    for query, expected in truth.items():
        hits = search.session_hits(query, order=order).by_session
        missed += len({session for session, _ in expected} - set(hits))
        false_hits += sum((hit.session, hit.message) not in expected for hit in hits.values())
    return missed, false_hits


def _picker_query_ms(search: HistorySearch, query: str, order: list[str]) -> float:
    """Median CPU milliseconds of the picker's content query (what runs off the UI thread per keystroke)."""
    samples = []
    for _ in range(3):
        cpu = time.process_time()
        search.session_hits(query, order=order, limit=MAX_CONTENT_ROWS)
        samples.append((time.process_time() - cpu) * 1000)
    return statistics.median(samples)


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
        cached_corpus(Path(directory), sessions=COMPARISON_SESSIONS)
        figures += _compare_tokenizers(Path(directory))
    print(f"generating {SESSIONS:,} sessions (~100 MB)…", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "data"
        corpus = cached_corpus(root, sessions=SESSIONS, planted=True)
        data = DataDir(root)
        own = [session for session in corpus.session_ids if session not in corpus.adopted]
        history_mb = corpus.history_bytes / 1e6
        figures.append(info(f"history: {len(corpus.session_ids):,} sessions ({len(corpus.adopted)} adopted from "
                            "pydantic-deep), messages.json", history_mb, "MB"))
        figures.append(info("  saved outputs", corpus.saved_bytes / 1e6, "MB"))
        adopted_before = {session: (data.session_dir(session) / "messages.json").stat().st_mtime_ns
                          for session in corpus.adopted}
        search = HistorySearch(data)
        start, cpu = time.perf_counter(), time.process_time()
        search.refresh()
        figures.append(result("index cold build, CPU (issue 23 measured 18–21 s, 26.7 s before this layout)",
                              time.process_time() - cpu, "s", 18.0))
        figures.append(info("  wall", time.perf_counter() - start, "s"))
        search.index.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = _index_size(root / "index.sqlite")
        figures.append(info("index size on disk", size / 1e6, "MB"))
        figures.append(result("index size ÷ history (messages.json)", size / corpus.history_bytes, "x", 1.0))
        figures.append(info("  ÷ history and saved outputs", size / (corpus.history_bytes + corpus.saved_bytes),
                            "x"))
        quick_check = median_ms(lambda: search.index.check(), runs=1)
        figures.append(info("  quick_check of the whole index (daily, off the query path)", quick_check, "ms"))

        needles = [*NEEDLES, SAVED_ONLY, *corpus_queries()]
        common = COMMON_QUERIES
        search.search(needles[0])  # the first query of a process looks at the session folders once
        per_needle = [_query_ms(search, query) for query in needles]
        per_common = [_query_ms(search, query) for query in common]
        figures.append(result(f"query, all sessions, worst of {len(needles)} needle queries", max(
            wall for wall, _ in per_needle), "ms", 50.0))
        figures.append(info("  CPU of the worst", max(cpu for _, cpu in per_needle), "ms"))
        figures.append(info("  median needle query", statistics.median(wall for wall, _ in per_needle), "ms"))
        figures.append(result(f"query, all sessions, worst of {len(common)} common-word queries "
                              f"({', '.join(common)})", max(wall for wall, _ in per_common), "ms", 50.0))
        figures.append(info("  CPU of the worst", max(cpu for _, cpu in per_common), "ms"))
        one_session = max(own, key=lambda session: (data.session_dir(session) / "messages.json").stat().st_size)
        per_one = [_query_ms(search, query, one_session) for query in [*common, *needles[:6]]]
        figures.append(result("query one session's history, worst (common words and needles)",
                              max(wall for wall, _ in per_one), "ms", 50.0))
        figures.append(info("  CPU of the worst", max(cpu for _, cpu in per_one), "ms"))
        repeat = {query: [[(hit.session, hit.message) for hit in search.search(query, limit=10).hits]
                          for _ in range(3)] for query in common}
        figures.append(result("common-word queries whose answer changed between runs",
                              sum(len({tuple(run) for run in runs}) > 1 for runs in repeat.values()), "n", 0))

        print("ground truth: a substring scan of every message…", file=sys.stderr, flush=True)
        picker_queries = ["migration", "ConnectionRefused", "alembic", "parse_config", "Traceback", "timeout retry",
                          "the_return", "parse_con", "raise ValueError"]
        truth = _substring_truth(data, [*needles, *common, *picker_queries])
        missing, false_hits = _quality(search, {query: truth[query] for query in [*needles, *common]})
        figures.append(info(f"  true matches of the {len(NEEDLES) + 1} planted needles",
                            sum(len(truth[query]) for query in [*NEEDLES, SAVED_ONLY]), "n"))
        figures.append(result(f"recall: queries (of {len(truth)}) missing a substring match", missing, "n", 0))
        figures.append(result("precision: hits that are not substring matches", false_hits, "n", 0))
        ranks = [_first_exact_rank(search, "parse_config"), _first_exact_rank(search, "TokenRefreshScheduler")]
        figures.append(result("rank of the first exact match (parse_config, TokenRefreshScheduler), worst",
                              max(ranks), "rank", 1))

        search.index.close()
        env = _cli_env(Path(directory) / "pycache")
        _cli_query(root, "parse_config", env)  # compiles deep-tui's modules once, as installing it does
        cli = [_cli_query(root, query, env) for query in ("parse_config", "timeout", "東京", "parse_config", "timeout")]
        figures.append(result("deep-tui search QUERY, wall (up-to-date index)", statistics.median(w for w, _ in cli),
                              "s", 0.3))
        figures.append(info("  CPU", statistics.median(c for _, c in cli), "s"))
        figures.append(result("catch-up after one append by another program (new process: look + index)",
                              _catch_up_ms(data, own[1]), "ms", 150.0))
        adopted_after = {session: (data.session_dir(session) / "messages.json").stat().st_mtime_ns
                         for session in corpus.adopted}
        figures.append(result("adopted pydantic-deep histories rewritten by indexing and search",
                              sum(adopted_before[s] != adopted_after[s] for s in corpus.adopted), "n", 0))

        search = HistorySearch(data)
        sample = ["parse_config", "Traceback"]
        targets = all_targets(data)
        figures.append(info("  the fallback scan (raw pre-check, then parse)", statistics.median(
            [median_ms(lambda: scan(data, targets, query_terms(query), limit=10**9), runs=1) for query in sample]),
            "ms"))
        plain, indexed = _append_cost(data, search, own[0])
        figures.append(info("append one turn, without indexing", plain, "ms"))
        figures.append(result("append one turn: added by indexing it", indexed - plain, "ms", 1.0))
        order = [target.session for target in targets]
        start, cpu = time.perf_counter(), time.process_time()
        assert search.read_word_list()  # what the picker starts reading in the background when it opens
        figures.append(info("picker: reading the word list (on opening, in the background), CPU",
                            (time.process_time() - cpu) * 1000, "ms"))
        figures.append(info("  wall", (time.perf_counter() - start) * 1000, "ms"))
        picker_cpu = [_picker_query_ms(search, query, order) for query in picker_queries]
        figures.append(result(f"picker content query (in-process, first 50 sessions in list order), worst CPU of "
                              f"{len(picker_queries)}", max(picker_cpu), "ms", 50.0))
        worst = picker_queries[picker_cpu.index(max(picker_cpu))]
        figures.append(info(f"  the worst: {worst!r}", max(picker_cpu), "ms"))
        missed, false_picks = _picker_quality(search, {query: truth[query] for query in picker_queries}, order)
        figures.append(result("picker: matching sessions missed (every one asked for) against a substring scan",
                              missed, "n", 0))
        figures.append(result("picker: hits that are not substring matches", false_picks, "n", 0))
        # in the app, timed until matching rows show: the queries that match something (`the_return` matches
        # nothing; its cost is in the in-process figure above)
        samples = asyncio.run(_picker_keystroke_ms(data, [query for query in picker_queries if truth[query]]))
        figures.append(result(f"picker content search: keystroke → results, {SESSIONS:,} sessions",
                              statistics.median(samples), "ms", 150.0))
        search.index.close()
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
