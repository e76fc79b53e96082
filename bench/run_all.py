"""Run every benchmark and print each figure next to its target (``make bench``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import BenchResult, report

# The long-standing figures first, in this order; every other bench_*.py in this folder follows by name,
# so a new benchmark needs only its file (each module's main() returns its BenchResults).
FIRST = ("bench_store", "bench_startup", "bench_first_frame", "bench_resume", "bench_chain", "bench_app",
         "bench_search", "bench_ux", "bench_stream", "bench_terminal_stream", "bench_chat_scale", "bench_tools",
         "bench_shell")
_OTHERS = sorted(path.stem for path in Path(__file__).resolve().parent.glob("bench_*.py") if path.stem not in FIRST)
MODULES = (*FIRST, *_OTHERS)


def main() -> int:
    results: list[BenchResult] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            print(f"skipping {name}: {error}", file=sys.stderr)
            continue
        print(f"== {name}", flush=True)
        module_results = module.main()
        report(module_results)
        results.extend(module_results)
    judged = [r for r in results if r.target is not None]
    missed = [r.name for r in judged if not r.ok]
    print(f"\n{len(judged) - len(missed)} of {len(judged)} figures within target"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
