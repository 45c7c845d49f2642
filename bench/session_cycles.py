"""``session_cycles``: what 10,000 closed sessions leave behind on one ``gmi()`` agent (issue 11).

The candidate: one `gmi()` agent with memory off on the zero-latency `ScriptedModel`, and
``CYCLES`` cycles of ``session = agent.session(new_id)``, ``await session.send(PROMPT)``,
``await session.close()``, every id distinct. ``bytes_per_cycle`` is the memory the cycles after
the first ``WARMUP`` leave behind: tracemalloc's traced bytes after cycle ``CYCLES`` less those
after cycle ``WARMUP``, each read after a full garbage collection, over ``CYCLES - WARMUP``.
Its baseline is the issue's fixed budget, ``BUDGET_BYTES`` (the spec's one entry per opened id:
`GmiAgent` keeps the id and the session's usage figures, nothing else; target ratio <= 1).

Beside the metric, the notes give the `GMI` and `AgentSession` objects still alive after the last
cycle (found with ``gc.get_objects()``, so nothing is held to count them; expected 0), the
``PLACES`` source lines whose memory grew most over the measured cycles (so the agent's own
entries show apart from a one-off resize of a table the interpreter shares, such as its
interned strings) and the time per cycle (with tracemalloc on, which slows allocation several
times).

Fairness decisions:

- **Tracing from the first cycle.** tracemalloc starts before cycle 0, so a container that grows
  across the window (the agent's set of opened ids, its usage figures) is counted at its real
  size; starting it later would count a table resized in the window whole and its old table not
  at all.
- **The test double keeps nothing.** `ScriptedModel` records every request it receives; that
  list is cleared each cycle so the figure is the agent's, not the double's.
- **One event loop per run**, a new agent per run, and a full collection before every run.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from typing import ClassVar

from agentos.api.gmi_agent import GmiAgent, gmi
from agentos.api.session import AgentSession
from agentos.substrate import GMI
from agentos.testing import ScriptedModel
from bench.registry import Benchmark, Metric, Sample, register

__all__ = ["SessionCycles"]

CYCLES = 10_000
WARMUP = 1_000
BUDGET_BYTES = 512.0
PLACES = 5
PROMPT = "Hello, how are you?"
REPLY = "Fine, thanks."


class SessionCycles(Benchmark):
    """Open/send/close cycles of new session ids: bytes left per cycle vs the 512-byte budget."""

    name: ClassVar[str] = "session_cycles"
    description: ClassVar[str] = (
        f"gmi() agent, memory off, {CYCLES:,} open/send/close cycles of distinct session ids on "
        f"ScriptedModel: tracemalloc bytes left per cycle over cycles {WARMUP:,}-{CYCLES:,} vs a "
        f"{BUDGET_BYTES:g}-byte budget"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("bytes_per_cycle", "B", "lower", tolerance=1.0),
    )

    def __init__(self) -> None:
        self._alive: list[tuple[int, int]] = []
        self._places: list[str] = []
        self._cycle_us: list[float] = []

    def settle(self) -> None:
        gc.collect()

    def run_candidate(self) -> Sample:
        with asyncio.Runner() as runner:
            return {"bytes_per_cycle": runner.run(self._cycles())}

    def run_baseline(self) -> Sample:
        return {"bytes_per_cycle": BUDGET_BYTES}

    async def _cycles(self) -> float:
        model = ScriptedModel(lambda _messages, _tools, _options: REPLY)
        agent = gmi(model=model)
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        try:
            await self._check(agent, model)
            started = time.perf_counter()
            await self._run(agent, model, 0, WARMUP)
            gc.collect()
            first = tracemalloc.take_snapshot()
            warm = tracemalloc.get_traced_memory()[0]  # the snapshot held counts on both sides
            await self._run(agent, model, WARMUP, CYCLES)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - warm
            self._cycle_us.append((time.perf_counter() - started) / CYCLES * 1e6)
            growth = tracemalloc.take_snapshot().compare_to(first, "lineno")[:PLACES]
            self._places = [
                f"{stat.size_diff / (CYCLES - WARMUP):+.0f} B/cycle in {stat.count_diff:+,} "
                f"blocks at {stat.traceback[0].filename.rsplit('/', 3)[-1]}:"
                f"{stat.traceback[0].lineno}"
                for stat in growth
            ]
            del first, growth
        finally:
            if not tracing:
                tracemalloc.stop()
        objects = gc.get_objects()
        self._alive.append(
            (
                sum(isinstance(o, AgentSession) for o in objects),
                sum(isinstance(o, GMI) for o in objects),
            )
        )
        del objects
        await agent.close()
        return grown / (CYCLES - WARMUP)

    @staticmethod
    async def _check(agent: GmiAgent, model: ScriptedModel) -> None:
        """A warm-up session answers ``REPLY`` and leaves nothing open (not a counted cycle)."""
        session = agent.session("bench-check")
        result = await session.send(PROMPT)
        if result.text != REPLY:
            raise RuntimeError(f"the session answered {result.text!r}")
        await session.close()
        model.requests.clear()

    @staticmethod
    async def _run(agent: GmiAgent, model: ScriptedModel, start: int, stop: int) -> None:
        for n in range(start, stop):
            session = agent.session(f"session-{n:06d}")
            await session.send(PROMPT)
            await session.close()
            model.requests.clear()  # the double's record of requests, not the agent's

    def settings(self) -> dict[str, object]:
        return {
            "cycles": CYCLES,
            "warmup_cycles": WARMUP,
            "candidate": "gmi(model=ScriptedModel(fn)); per cycle: agent.session(new id), "
            f"send({PROMPT!r}), close()",
            "measure": "tracemalloc traced bytes after gc.collect(), cycle "
            f"{CYCLES:,} less cycle {WARMUP:,}, / {CYCLES - WARMUP:,}",
            "baseline": f"the fixed {BUDGET_BYTES:g}-byte budget per opened id",
        }

    def notes(self) -> list[str]:
        notes = [
            f"run {n + 1}: {sessions} AgentSession and {gmis} GMI objects alive after the last "
            "cycle (expected 0 and 0)"
            for n, (sessions, gmis) in enumerate(self._alive)
        ]
        if self._places:
            notes.append("where the last run grew most: " + "; ".join(self._places))
        if self._cycle_us:
            best = min(self._cycle_us)
            notes.append(f"fastest run: {best:.0f} us per cycle with tracemalloc on")
        return notes


register(SessionCycles, name=SessionCycles.name)
