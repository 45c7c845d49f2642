"""agentos benchmarks: our code against what it wraps, measured side by side in one process.

Run from the repository root::

    python -m bench --list
    python -m bench [NAME ...] [--repeat N]

Each benchmark runs its candidate (agentos) and its baseline (the library underneath, called
directly) alternately ``N`` times, prints each metric's medians, the ratio candidate / baseline,
the target and PASS or FAIL, and writes the figures to ``bench/results/<name>.json``.
A new benchmark is a module that subclasses `Benchmark` (or `bench.loopback.LoopbackBenchmark`,
for one whose sides stream from a loopback server) and calls `register`; import it below.
"""

from bench import agency_overhead as agency_overhead  # imported for its registrations
from bench import concurrency as concurrency
from bench import gateway_stream as gateway_stream
from bench import gmi_session as gmi_session
from bench import gmi_turn as gmi_turn
from bench import hybrid_retrieval as hybrid_retrieval
from bench import local_metaprompts as local_metaprompts
from bench import local_stream as local_stream
from bench import memory_retrieve as memory_retrieve
from bench import memory_store as memory_store
from bench import runtime_turn as runtime_turn
from bench import sentiment_score as sentiment_score
from bench import session_cycles as session_cycles
from bench import session_stream as session_stream
from bench.registry import BENCHMARKS, Benchmark, Metric, Sample, get, register

__all__ = ["BENCHMARKS", "Benchmark", "Metric", "Sample", "get", "register"]
