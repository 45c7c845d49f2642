"""``python -m bench [NAME ...] [--repeat N] [--list]``: run benchmarks and report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bench import BENCHMARKS, get
from bench.runner import format_report, print_progress, run, write_json


def main(argv: Sequence[str] | None = None) -> int:
    """Run the named benchmarks (all of them if none is named); 1 if any metric fails."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Run agentos benchmarks: candidate vs baseline, interleaved, medians.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (all)")
    parser.add_argument(
        "--repeat", type=int, default=5, metavar="N", help="measured runs per side (5)"
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, factory in BENCHMARKS.items():
            print(f"{name}: {factory().description}")
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    failed = False
    for name in args.names or list(BENCHMARKS):
        report = run(get(name), args.repeat, progress=print_progress)
        print(format_report(report))
        print(f"   results: {write_json(report)}", flush=True)
        failed = failed or not report.passed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
