"""Runs many sessions (over processes), each in its own temporary directory, and checks each."""

from __future__ import annotations

import gc
import multiprocessing
import os
import tempfile
import time
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path

from fuzzfarm.checks import SessionResult, check
from fuzzfarm.driver import drive
from fuzzfarm.generator import generate
from fuzzfarm.spec import SessionSpec
from fuzzfarm.workspace import build_template

SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None
"""Sessions run in memory where the system offers it: the farm measures the chain, not the disk's fsync."""
_template: Path | None = None
_template_dir: tempfile.TemporaryDirectory[str] | None = None


def _shared_template() -> Path:
    global _template, _template_dir
    if _template is None:
        _template_dir = tempfile.TemporaryDirectory(prefix="fuzzfarm-template-", dir=SCRATCH)
        _template = build_template(Path(_template_dir.name))
    return _template


def run_spec(spec: SessionSpec) -> SessionResult:
    """Drive and check one session in a fresh temporary directory; a crash is a violation too."""
    started, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="fuzzfarm-", dir=SCRATCH) as tmp:
        try:
            result = check(drive(spec, Path(tmp), _shared_template()))
        except Exception as error:  # the farm reports a crash of the chain as a violation, with where
            result = SessionResult(spec.seed, spec.window, spec.fault, spec.tool_heavy)
            where = traceback.extract_tb(error.__traceback__)[-1]
            result.violations.append(f"crashed: {type(error).__name__}: {str(error)[:200]} "
                                     f"({Path(where.filename).name}:{where.lineno})")
    result.seconds = time.perf_counter() - started
    result.cpu_seconds = time.process_time() - cpu
    return result


def run_seed(seed: int) -> SessionResult:
    return run_spec(generate(seed))


def _worker_started() -> None:
    """What a worker inherits (every module, the template) lives as long as it does: the cyclic garbage
    collector stops walking it again at each collection (a few percent of a session's CPU)."""
    gc.freeze()


def run_seeds(seeds: Iterable[int], workers: int) -> Iterator[SessionResult]:
    """Results for ``seeds`` (in completion order), over ``workers`` processes (1: in this process)."""
    seeds = list(seeds)
    if workers <= 1:
        yield from map(run_seed, seeds)
        return
    _shared_template()  # built once here: forked workers inherit it, and this process removes it at exit
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_worker_started, maxtasksperchild=500) as pool:
        yield from pool.imap_unordered(run_seed, seeds, chunksize=4)
