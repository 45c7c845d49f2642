"""What a benchmark is, and the registry ``python -m bench`` picks them from by name.

A benchmark measures a *candidate* (our code) against a *baseline* (the thing underneath it, used
directly) on the same machine in the same process. Each run returns one value per `Metric`; the
runner interleaves candidate and baseline runs, takes medians and compares them as a ratio.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal

__all__ = ["BENCHMARKS", "Benchmark", "Metric", "Sample", "get", "register"]

Sample = dict[str, float]
"""One run's measurements: metric name to value."""


@dataclass(frozen=True, slots=True)
class Metric:
    """A measured quantity and how a candidate's value compares with the baseline's.

    The comparison is always the ratio candidate / baseline. ``tolerance`` is how much worse the
    candidate may be: for a lower-is-better metric the ratio must be <= ``tolerance``, for a
    higher-is-better one it must be >= ``1 / tolerance``.
    """

    name: str
    unit: str
    better: Literal["lower", "higher"]
    tolerance: float = 1.05

    def target(self) -> str:
        """The pass condition on candidate / baseline, as printed."""
        if self.better == "lower":
            return f"<= {self.tolerance:.3g}"
        return f">= {1 / self.tolerance:.3g}"

    def passes(self, ratio: float) -> bool:
        """Whether a candidate / baseline ratio meets the target."""
        if self.better == "lower":
            return ratio <= self.tolerance
        return ratio >= 1 / self.tolerance

    def slowdown(self, ratio: float) -> float:
        """The ratio turned so that above 1 always means the candidate is worse."""
        return ratio if self.better == "lower" else 1 / ratio


class Benchmark(ABC):
    """One named comparison of a candidate against a baseline.

    The runner calls `setup` once (load and warm both sides), then `run_candidate` and
    `run_baseline` alternately, `settle` before every run, and `teardown` at the end.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    metrics: ClassVar[tuple[Metric, ...]]

    def setup(self) -> None:  # noqa: B027 - a hook: most benchmarks need it, some do not
        """Load what both sides need and warm them up; runs before any measured run."""

    @abstractmethod
    def run_candidate(self) -> Sample:
        """Measure our code once."""

    @abstractmethod
    def run_baseline(self) -> Sample:
        """Measure the baseline once."""

    def settle(self) -> None:  # noqa: B027 - a hook, empty by default
        """Let the previous run's after-effects die down before the next run starts."""

    def teardown(self) -> None:  # noqa: B027 - a hook, empty by default
        """Release what `setup` took."""

    def settings(self) -> dict[str, object]:
        """The settings both sides ran with, recorded in the results file."""
        return {}

    def notes(self) -> list[str]:
        """Observations worth reading next to the figures (early ends, mismatches, ...)."""
        return []


BENCHMARKS: dict[str, Callable[[], Benchmark]] = {}
"""Every registered benchmark's factory, by name, in registration order."""


def register(factory: Callable[[], Benchmark], *, name: str) -> None:
    """Add a benchmark under ``name``; a second registration of a name is a mistake."""
    if name in BENCHMARKS:
        raise ValueError(f"benchmark {name!r} is registered twice")
    BENCHMARKS[name] = factory


def get(name: str) -> Benchmark:
    """A fresh instance of the benchmark called ``name``; raises `KeyError` naming the known."""
    try:
        factory = BENCHMARKS[name]
    except KeyError:
        raise KeyError(f"no benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None
    return factory()
