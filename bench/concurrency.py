"""``concurrency``: a thousand light sessions streaming at once, and the memory of idle ones.

Metrics (issue 12), lower is better:

- ``wall_1000`` (s): ``SESSIONS`` light ``gmi()`` sessions, one streamed turn each, all at once
  in this process (``asyncio.gather``): each opened with ``agent.session(id)`` on one
  ``gmi(provider="openai", model=MODEL, api_key="k", base_url=<loopback>/v1,
  max_tokens=TOKENS, fallback_providers=[], instructions=SYSTEM, cognition="light")`` agent and
  read through ``session.stream(PROMPT).text_stream`` and its usage. Baseline: the raw
  ``AsyncOpenAI(api_key="k", base_url=<loopback>/v1, max_retries=0)`` client making the same
  ``SESSIONS`` streamed calls at once (``chat.completions.create(stream=True,
  stream_options={"include_usage": True})``, the same system and user messages, every chunk
  read). The server (`bench.delayed_sse_server`, a process of its own) waits ``DELAY`` seconds
  before the first of ``TOKENS`` one-token chunks, as a model does. Wall time from the first
  session opened (the first call made) to the last stream read. Target: at most 1.1x.
- ``idle_session`` (KiB): the memory ``IDLE_SESSIONS`` idle light sessions hold, per session,
  measured with ``tracemalloc`` on a fresh ``gmi(model=ScriptedModel(<function>),
  instructions=SYSTEM, tools=[lookup], cognition="light")`` agent: the traced memory after the
  sessions are opened and have each played one turn (``send("hi")``: a session builds its GMI
  on its first turn, so a session never used holds almost nothing; "idle" is a session
  between turns), less the traced memory before, divided by ``IDLE_SESSIONS``. Its baseline
  is the issue's fixed budget, ``BUDGET_KIB`` (target: ratio <= 1). The notes also give the
  figure of sessions only opened.

Fairness decisions:

- **Both sides keep their SDK client.** The baseline's client is built in setup; agentos's
  adapter takes the event loop's pooled client, kept alive by a warm-up session that stays open
  for the whole benchmark. Both clients have the SDK's default pool (1,000 connections), and the
  server closes every connection, so both sides open ``SESSIONS`` TCP connections per run.
- **Opening the sessions is timed** (it is part of serving a thousand conversations); closing
  them is not. Each run opens sessions of new ids.
- **The scripted model's record of requests is emptied** before the memory is read: it keeps
  every request it served, which no real model does.
- **One loop, settled** (`bench.loopback`): one `asyncio.Runner` serves every run; before every
  run a full garbage collection runs and the process sleeps briefly, so the previous run's
  connections close.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from typing import ClassVar

import openai

import agentos
from agentos.testing import ScriptedModel
from bench.delayed_sse_server import DelayedSSEServerProcess
from bench.loopback import MODEL, LoopbackBenchmark
from bench.registry import Metric, Sample, register
from bench.sse_server import token
from bench.turn_models import LOOKUP_TOOL, REPLY, SYSTEM, script

__all__ = ["Concurrency"]

PROMPT = "Count to twenty, one word at a time."
SESSIONS = 1_000
TOKENS = 20
DELAY = 0.05
IDLE_SESSIONS = 10_000
BUDGET_KIB = 16.0
SETTLE_SECONDS = 0.5
EXPECTED = "".join(token(i) for i in range(TOKENS))


class Concurrency(LoopbackBenchmark):
    """Wall time of 1,000 concurrent streamed light turns vs the raw client; idle memory."""

    name: ClassVar[str] = "concurrency"
    description: ClassVar[str] = (
        f"{SESSIONS:,} light gmi() sessions streaming one turn at once vs AsyncOpenAI making "
        f"{SESSIONS:,} streamed calls at once ({DELAY * 1000:g} ms to the first of {TOKENS} "
        f"tokens); tracemalloc of {IDLE_SESSIONS:,} idle light sessions vs {BUDGET_KIB:g} KiB"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("wall_1000", "s", "lower", tolerance=1.1),
        Metric("idle_session", "KiB", "lower", tolerance=1.0),
    )

    settle_seconds: ClassVar[float] = SETTLE_SECONDS

    def __init__(self) -> None:
        super().__init__(DelayedSSEServerProcess(TOKENS, DELAY))
        self._agent: agentos.GmiAgent | None = None
        self._keep: agentos.AgentSession | None = None
        self._runs = 0
        self._opened_kib: list[float] = []

    def prepare(self) -> None:
        self._agent = self.light_agent(max_tokens=TOKENS, instructions=SYSTEM)
        self._keep = self._agent.session("bench-keep")  # holds the pooled client open
        for _ in range(3):
            if self.run_async(self._candidate_turn(self._keep)) != EXPECTED:
                raise RuntimeError("agentos streamed a different text")
            if self.run_async(self._baseline_call()) != EXPECTED:
                raise RuntimeError("the openai client streamed a different text")
        # One small burst per side warms the connection paths before the first timed run.
        self.run_async(self._candidate_burst(SESSIONS // 10))
        self.run_async(self._baseline_burst(SESSIONS // 10))

    def run_candidate(self) -> Sample:
        wall = self.run_async(self._candidate_burst(SESSIONS))
        self.settle()
        opened, idle = self.run_async(self._idle_memory())
        self._opened_kib.append(opened)
        return {"wall_1000": wall, "idle_session": idle}

    def run_baseline(self) -> Sample:
        wall = self.run_async(self._baseline_burst(SESSIONS))
        return {"wall_1000": wall, "idle_session": BUDGET_KIB}

    async def _candidate_turn(self, session: agentos.AgentSession) -> str:
        result = session.stream(PROMPT)
        pieces = [text async for text in result.text_stream]
        await result.usage
        return "".join(pieces)

    async def _candidate_burst(self, count: int) -> float:
        """``count`` new sessions streaming one turn each, at once: the seconds until all end."""
        assert self._agent is not None
        agent = self._agent
        self._runs += 1
        started = time.perf_counter()
        sessions = [agent.session(f"run{self._runs}-{i}") for i in range(count)]
        texts = await asyncio.gather(*(self._candidate_turn(session) for session in sessions))
        seconds = time.perf_counter() - started
        await asyncio.gather(*(session.close() for session in sessions))
        if any(text != EXPECTED for text in texts):
            raise RuntimeError("an agentos session streamed a different text")
        return seconds

    async def _baseline_call(self) -> str:
        stream = await self.client.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": PROMPT},
            ],
            max_tokens=TOKENS,
            stream=True,
            stream_options={"include_usage": True},
        )
        pieces: list[str] = []
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
        return "".join(pieces)

    async def _baseline_burst(self, count: int) -> float:
        """``count`` streamed calls of the raw client at once: the seconds until all end."""
        started = time.perf_counter()
        texts = await asyncio.gather(*(self._baseline_call() for _ in range(count)))
        seconds = time.perf_counter() - started
        if any(text != EXPECTED for text in texts):
            raise RuntimeError("the openai client streamed a different text")
        return seconds

    async def _idle_memory(self) -> tuple[float, float]:
        """KiB per session of ``IDLE_SESSIONS`` light sessions: only opened, and after a turn."""
        model = ScriptedModel(script)
        agent = agentos.gmi(
            model=model, instructions=SYSTEM, tools=[LOOKUP_TOOL], cognition="light"
        )
        warm = agent.session("warm")  # the agent's shared parts are built before the count
        if (await warm.send("hi")).text != REPLY:
            raise RuntimeError("the light session answered something else")
        model.requests.clear()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            sessions = [agent.session(f"idle-{i}") for i in range(IDLE_SESSIONS)]
            gc.collect()
            opened = tracemalloc.get_traced_memory()[0]
            for session in sessions:
                await session.send("hi")
            model.requests.clear()  # a function script: the list only records requests
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        await agent.close()
        per = IDLE_SESSIONS * 1024
        return (opened - before) / per, (after - before) / per

    def settings(self) -> dict[str, object]:
        return {
            "sessions": SESSIONS,
            "tokens": TOKENS,
            "delay_before_first_token_s": DELAY,
            "idle_sessions": IDLE_SESSIONS,
            "budget_kib": BUDGET_KIB,
            "settle_seconds": SETTLE_SECONDS,
            "server": "bench/delayed_sse_server.py in a child process (one asyncio loop, "
            f"backlog 4096): waits {DELAY} s, then a role chunk, {TOKENS} one-token chunks, "
            "finish, usage, [DONE]; Connection: close",
            "candidate": "gmi(provider='openai', model, api_key, base_url, max_tokens, "
            "fallback_providers=[], instructions, cognition='light'); per run SESSIONS new "
            "sessions, each session.stream(prompt).text_stream read and usage awaited, gathered",
            "baseline": "AsyncOpenAI(api_key, base_url, max_retries=0).chat.completions.create("
            "stream=True, stream_options={'include_usage': True}) x SESSIONS, gathered",
            "idle_candidate": "tracemalloc: (after opening IDLE_SESSIONS sessions of a fresh "
            "gmi(model=ScriptedModel(script), instructions, tools=[lookup], cognition='light') "
            "and one send('hi') each) - before, per session",
            "openai": openai.__version__,
        }

    def notes(self) -> list[str]:
        if not self._opened_kib:
            return []
        opened = sorted(self._opened_kib)[len(self._opened_kib) // 2]
        return [f"sessions only opened (no turn yet): {opened:.3g} KiB each"]


register(Concurrency, name=Concurrency.name)
