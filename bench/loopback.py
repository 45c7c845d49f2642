"""What the benchmarks against a loopback Chat Completions server share: server, loop, client.

`LoopbackBenchmark` is the base of ``gateway_stream``, ``session_stream`` and ``concurrency``:
both sides of each talk to one server in a child process (`bench.sse_server` or
`bench.delayed_sse_server`), run on one event loop, and the baseline keeps one SDK client.

- **Setup** starts the server, opens one `asyncio.Runner` that serves every run (its creation
  is not timed: an application has one loop), builds `client`, the SDK's
  ``AsyncOpenAI(api_key=API_KEY, base_url=<server>/v1, max_retries=0)`` kept across runs (built
  outside every timed run), then calls `prepare`, where a benchmark builds its sides and warms
  them up. A setup that fails tears down what it took (the runner tears down only after a
  setup that succeeded).
- **Teardown** closes the agents `light_agent` built, the client and the loop, and stops the
  server.
- **Settling**: before every run, a full garbage collection (outside the loop, so a client
  collected then schedules no close on it) and a sleep of ``settle_seconds``, so one run's
  garbage and the server's closing of its connections do not land in the next run.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Coroutine
from typing import Any, ClassVar, TypeVar

import openai

import agentos
from bench.registry import Benchmark
from bench.sse_server import SSEServerProcess

__all__ = ["API_KEY", "MODEL", "LoopbackBenchmark"]

MODEL = "gpt-4o-mini"  # agentos's default OpenAI model, named explicitly on both sides
API_KEY = "k"

_T = TypeVar("_T")


class LoopbackBenchmark(Benchmark):
    """A benchmark whose two sides stream from one loopback server, on one event loop."""

    settle_seconds: ClassVar[float]
    """How long `settle` sleeps after its garbage collection."""

    def __init__(self, server: SSEServerProcess) -> None:
        self._server = server
        self._runner: asyncio.Runner | None = None
        self._client: openai.AsyncOpenAI | None = None
        self._agents: list[agentos.GmiAgent] = []

    @property
    def base_url(self) -> str:
        """The server's OpenAI base URL (``<url>/v1``); set once the server has started."""
        return f"{self._server.url}/v1"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The baseline's SDK client, kept across runs; exists between setup and teardown."""
        assert self._client is not None, "the client exists between setup and teardown"
        return self._client

    def run_async(self, call: Coroutine[Any, Any, _T]) -> _T:
        """Run ``call`` to its end on the benchmark's one event loop."""
        assert self._runner is not None, "the loop exists between setup and teardown"
        return self._runner.run(call)

    def light_agent(self, *, max_tokens: int, instructions: str) -> agentos.GmiAgent:
        """A 'light' ``gmi()`` agent on the server (openai, no fallback); closed at teardown."""
        agent = agentos.gmi(
            provider="openai",
            model=MODEL,
            api_key=API_KEY,
            base_url=self.base_url,
            max_tokens=max_tokens,
            fallback_providers=[],
            instructions=instructions,
            cognition="light",
        )
        self._agents.append(agent)
        return agent

    def setup(self) -> None:
        self._server.__enter__()
        self._runner = asyncio.Runner()
        try:
            self._client = openai.AsyncOpenAI(
                api_key=API_KEY, base_url=self.base_url, max_retries=0
            )
            self.prepare()
        except BaseException:
            self.teardown()  # the runner tears down only after a setup that succeeded
            raise

    def prepare(self) -> None:
        """Build the sides and warm them up (the server, loop and client exist)."""

    def teardown(self) -> None:
        if self._runner is not None:
            for agent in self._agents:
                self._runner.run(agent.close())
            self._agents.clear()
            if self._client is not None:
                self._runner.run(self._client.close())
                self._client = None
            self._runner.close()
            self._runner = None
        self._server.__exit__()

    def settle(self) -> None:
        gc.collect()
        time.sleep(self.settle_seconds)
