"""``memory_retrieve``: `CognitiveMemoryManager.retrieve()` against a bare numpy cosine top-k.

Candidate: ``await manager.retrieve(query, options=RetrievalOptions(scopes=[SCOPE], top_k=20))``
on a manager over an `InMemoryMemoryStore` and over a `SQLiteMemoryStore` (built, closed and
reopened), each holding 1k, 10k and 100k traces with 384-dimensional seeded random unit vectors.
The manager runs as a library user gets it: the graph on, no mechanisms, no HyDE, no reranker. A
retrieve is the whole pipeline: the query's vector (a stub embedder hands over the seeded query
vector, so no model time is measured), the store's 40 nearest traces within the scope, the
composite score, spreading activation over the graph the earlier queries' co-activations built,
the top-5 recall (spaced-repetition update written back to the store) and the Hebbian links
stored. Baseline: the bare numpy top-20 of the same unit matrix (`bench.memory_store.bare_top_k`).

Targets (issue 6, and issue 11's "no metric passes by a 1,000x allowance"):

- ``retrieve_<size>_<store>``, the ratio to the bare top-k. Every one has a bound it can fail.
  A retrieve is the vector search plus a fixed cost (scoring 40 candidates, spreading
  activation, the recall written back: about 1.4 ms in memory on 2 idle cores), so the allowed
  ratio shrinks as the search grows: in memory at most 60x at 1k (a 45 us search), 6x at 10k
  (a 0.36 ms search) and 2x at 100k (issue 6); in SQLite, which also commits the recall's
  updates, at most 150x, 12x and 2.5x.
- ``retrieve_<size>_<store>_budget``, the time itself against a fixed budget (the baseline is the
  budget): in memory 2 ms at 1k, 2 ms at 10k and 20 ms at 100k (the last two issue 6's); in
  SQLite 6 ms at 1k, 8 ms at 10k and 30 ms at 100k.

  Measured on 2 idle cores (2026-12-03, ``python -m bench memory_retrieve``): in memory 1.54,
  1.72 and 7.71 ms (4.8x the bare top-k at 10k, 1.27x at 100k); in SQLite 2.80, 3.06 and
  9.36 ms (8.5x at 10k). The bounds not set by issue 6 sit about a quarter above those figures,
  so a regression of the fixed cost fails them.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import numpy as np

from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions
from agentos.memory.in_memory_store import InMemoryMemoryStore
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.sqlite_store import SQLiteMemoryStore
from agentos.memory.store import MemoryStore
from agentos.memory.trace import DAY
from agentos.testing import FakeClock
from bench.memory_store import (
    DIM,
    SCOPE,
    SEED,
    T0,
    _Matrix,
    bare_top_k,
    build_store,
    index_rows,
    unit_vectors,
)
from bench.registry import Benchmark, Metric, Sample, register

__all__ = ["MemoryRetrieve"]

SIZES = (1_000, 10_000, 100_000)
QUERIES = 15
WARMUP = 10
TOP_K = 20
KINDS = ("memory", "sqlite")
BUDGET_MS = {
    (1_000, "memory"): 2.0,
    (10_000, "memory"): 2.0,
    (100_000, "memory"): 20.0,
    (1_000, "sqlite"): 6.0,
    (10_000, "sqlite"): 8.0,
    (100_000, "sqlite"): 30.0,
}
"""Milliseconds per retrieve (module docstring)."""
RATIO = {
    (1_000, "memory"): 60.0,
    (10_000, "memory"): 6.0,
    (100_000, "memory"): 2.0,
    (1_000, "sqlite"): 150.0,
    (10_000, "sqlite"): 12.0,
    (100_000, "sqlite"): 2.5,
}
"""The most a retrieve may take, as a multiple of the bare top-k (module docstring)."""
_OPTIONS = RetrievalOptions(scopes=[SCOPE], top_k=TOP_K)


class _VectorEmbedder:
    """Hands the benchmark's query vectors over by text (``"q<seed>:<i>"``), no model involved."""

    model_id = "bench-vectors"
    dimension = DIM

    def __init__(self) -> None:
        self.vectors: dict[str, list[float]] = {}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]


class MemoryRetrieve(Benchmark):
    """Milliseconds per ``retrieve()`` (in memory and SQLite) against the bare numpy top-k."""

    name: ClassVar[str] = "memory_retrieve"
    description: ClassVar[str] = (
        f"CognitiveMemoryManager.retrieve(top_k={TOP_K}, one scope) in memory and in SQLite vs "
        f"bare numpy cosine top-k, {DIM}-dim, 1k/10k/100k traces, median of {QUERIES} queries"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        *(
            Metric(f"retrieve_{size // 1000}k_{kind}", "ms", "lower", tolerance=RATIO[size, kind])
            for size in SIZES
            for kind in KINDS
        ),
        *(
            Metric(f"retrieve_{size // 1000}k_{kind}_budget", "ms", "lower", tolerance=1.0)
            for size, kind in BUDGET_MS
        ),
    )

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._managers: dict[tuple[int, str], CognitiveMemoryManager] = {}
        self._matrices: dict[int, _Matrix] = {}
        self._embedder = _VectorEmbedder()
        self._runs = {"candidate": 0, "baseline": 0}
        self._notes: list[str] = []

    def _manager(self, store: MemoryStore, clock: FakeClock) -> CognitiveMemoryManager:
        return CognitiveMemoryManager(
            CognitiveMemoryConfig(embedder=self._embedder, store=store, clock=clock)
        )

    def setup(self) -> None:
        self._runner = asyncio.Runner()
        self._directory = tempfile.TemporaryDirectory(prefix="agentos-bench-retrieve-")
        # Traces are a minute apart (bench.memory_store.make_trace); "now" is a day after the last.
        clock = FakeClock(datetime.fromtimestamp(T0 + 60.0 * max(SIZES) + DAY, UTC))
        for size in SIZES:
            vectors = unit_vectors(size)
            path = Path(self._directory.name) / f"retrieve_{size}.db"
            memory = InMemoryMemoryStore()
            sqlite = SQLiteMemoryStore(path=path)
            self._runner.run(build_store(memory, vectors))
            self._runner.run(build_store(sqlite, vectors))
            self._runner.run(sqlite.close())
            self._managers[size, "memory"] = self._manager(memory, clock)
            self._managers[size, "sqlite"] = self._manager(SQLiteMemoryStore(path=path), clock)
            self._matrices[size] = index_rows(vectors)
        self._runner.run(self._encoding_rate())
        warm = self._queries_for(seed=0, count=WARMUP)
        for size in SIZES:
            bare_top_k(self._matrices[size], unit_vectors(1, seed=0)[0])
            for kind in ("memory", "sqlite"):
                for text in warm:
                    self._runner.run(self._managers[size, kind].retrieve(text, options=_OPTIONS))

    async def _encoding_rate(self) -> None:
        """`encode()` throughput: features, encoding model, sentiment, entities, embedding, add."""
        embedder = _VectorEmbedder()
        texts = [f"Benchmark memory {n}: Ada told me about the trip to Lyon." for n in range(500)]
        for text, vector in zip(texts, unit_vectors(len(texts), seed=7), strict=True):
            embedder.vectors[text] = [float(x) for x in vector]
        manager = CognitiveMemoryManager(CognitiveMemoryConfig(embedder=embedder))
        started = time.perf_counter()
        for text in texts:
            await manager.encode(text, scope_id="bench")
        rate = len(texts) / (time.perf_counter() - started)
        await manager.shutdown()
        self._notes.append(
            f"encode() throughput, in memory, embedding excluded: {rate:,.0f} traces/s"
        )

    def teardown(self) -> None:
        if self._runner is not None:
            for manager in self._managers.values():
                self._runner.run(manager.shutdown())
            self._runner.close()
            self._runner = None
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None

    def settle(self) -> None:
        gc.collect()

    def _queries_for(self, seed: int, count: int = QUERIES) -> list[str]:
        texts = []
        for i, vector in enumerate(unit_vectors(count, seed=seed)):
            text = f"q{seed}:{i}"
            self._embedder.vectors[text] = [float(x) for x in vector]
            texts.append(text)
        return texts

    def _next_seed(self, side: str) -> int:
        run = self._runs[side]
        self._runs[side] += 1
        return SEED + 1000 + run

    def run_candidate(self) -> Sample:
        assert self._runner is not None
        texts = self._queries_for(self._next_seed("candidate"))
        sample: Sample = {}
        for size in SIZES:
            for kind in KINDS:
                manager = self._managers[size, kind]
                times = []
                for text in texts:
                    started = time.perf_counter()
                    self._runner.run(manager.retrieve(text, options=_OPTIONS))
                    times.append(time.perf_counter() - started)
                sample[f"retrieve_{size // 1000}k_{kind}"] = statistics.median(times) * 1e3
        for size, kind in BUDGET_MS:
            name = f"retrieve_{size // 1000}k_{kind}"
            sample[f"{name}_budget"] = sample[name]
        return sample

    def run_baseline(self) -> Sample:
        seed = self._next_seed("baseline")
        queries = unit_vectors(QUERIES, seed=seed)
        sample: Sample = {}
        for size in SIZES:
            times = []
            for query in queries:
                started = time.perf_counter()
                bare_top_k(self._matrices[size], np.asarray(query, dtype=np.float32))
                times.append(time.perf_counter() - started)
            median = statistics.median(times) * 1e3
            sample[f"retrieve_{size // 1000}k_memory"] = median
            sample[f"retrieve_{size // 1000}k_sqlite"] = median
        for (size, kind), budget in BUDGET_MS.items():
            sample[f"retrieve_{size // 1000}k_{kind}_budget"] = budget
        return sample

    def settings(self) -> dict[str, object]:
        return {
            "dimension": DIM,
            "top_k": TOP_K,
            "sizes": list(SIZES),
            "queries_per_run": QUERIES,
            "warmup_queries": WARMUP,
            "candidate": "await CognitiveMemoryManager.retrieve(q, options=RetrievalOptions("
            "scopes=[scope], top_k=20)); graph on, no mechanisms; InMemoryMemoryStore and a "
            "reopened SQLiteMemoryStore",
            "baseline": "bare numpy top-20 (M @ q, argpartition, argsort) on the same unit matrix;"
            " for *_budget metrics, the budget in ms",
            "ratio_targets": {f"{size}_{kind}": ratio for (size, kind), ratio in RATIO.items()},
            "budgets_ms": {f"{size}_{kind}": ms for (size, kind), ms in BUDGET_MS.items()},
        }

    def notes(self) -> list[str]:
        return self._notes


register(MemoryRetrieve, name=MemoryRetrieve.name)
