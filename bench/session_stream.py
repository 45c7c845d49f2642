"""``session_stream``: a streamed light session turn through the openai SDK, vs openai-agents.

Candidate: a 'light' ``gmi()`` session, ``gmi(provider="openai", model=MODEL, api_key="k",
base_url=<loopback>/v1, max_tokens=TOKENS, fallback_providers=[], instructions=SYSTEM,
cognition="light").session(id)``, one turn ``session.stream(PROMPT)`` read through
``text_stream``, then its usage awaited. Baseline: the OpenAI Agents SDK's
``Runner.run_streamed(Agent(instructions=SYSTEM, model=OpenAIChatCompletionsModel(MODEL,
AsyncOpenAI(api_key="k", base_url=<loopback>/v1, max_retries=0)),
model_settings=ModelSettings(max_tokens=TOKENS, include_usage=True)), PROMPT,
run_config=RunConfig(tracing_disabled=True))``, every event of ``stream_events()`` read and the
text deltas kept. Both talk to the same loopback server (`bench.sse_server`, the one
``gateway_stream`` uses, in a process of its own): a role chunk, ``TOKENS`` one-token content
chunks, a finish chunk, a usage-only chunk and ``[DONE]``, no pacing; it refuses (HTTP 400) a
request that is not streamed, lacks ``include_usage`` or asks for another ``max_tokens``, so
both sides send the same request.

Metric (lower is better): ``turn``, milliseconds from the call (``session.stream()`` /
``Runner.run_streamed()``) to the end of the turn (the text read to its end and the usage
settled / the SDK's event stream exhausted). Target (issue 12): at most 0.5x openai-agents. The
notes give each side's median time to its first text.

Fairness decisions:

- **One turn of context on both sides.** The session is cleared (``await session.clear()``)
  outside the timer before every turn, as ``Runner.run_streamed`` with a string starts from
  nothing.
- **Both sides keep their SDK client.** openai-agents' model holds one ``AsyncOpenAI`` built in
  setup; agentos's adapter takes the event loop's pooled client for the same key and endpoint.
  Neither pays a client build in a run. The server closes every connection, so every turn
  opens a TCP connection on both sides.
- **One loop, settled** (`bench.loopback`): one `asyncio.Runner` serves every run; before every
  run a full garbage collection runs and the process sleeps briefly, so one run's garbage and
  the server's closing of its connection do not land in the next.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import openai

import agentos
from bench.agents_models import require_openai_agents
from bench.loopback import MODEL, LoopbackBenchmark
from bench.registry import Metric, Sample, register
from bench.sse_server import SSEServerProcess, token

if TYPE_CHECKING:
    from agents import Agent, RunConfig

__all__ = ["SessionStream"]

SYSTEM = "You are a helpful assistant."
PROMPT = "Count to two hundred, one word at a time."
TOKENS = 200
TURNS_PER_RUN = 10
WARMUP_TURNS = 10
SETTLE_SECONDS = 0.02


@dataclass(frozen=True, slots=True)
class _Turn:
    """One streamed turn as its reader saw it (seconds from the call)."""

    first_text: float
    total: float
    text: str


class SessionStream(LoopbackBenchmark):
    """A streamed light session turn vs openai-agents' run_streamed, same loopback server."""

    name: ClassVar[str] = "session_stream"
    description: ClassVar[str] = (
        "light gmi() session.stream() (provider='openai') vs openai-agents Runner.run_streamed "
        f"on OpenAIChatCompletionsModel, {TOKENS} one-token chunks from a loopback SSE server, "
        f"median of {TURNS_PER_RUN} turns per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (Metric("turn", "ms", "lower", tolerance=0.5),)

    settle_seconds: ClassVar[float] = SETTLE_SECONDS

    def __init__(self) -> None:
        super().__init__(SSEServerProcess(TOKENS))
        self._agent: agentos.GmiAgent | None = None
        self._session: agentos.AgentSession | None = None
        self._sdk_agent: Agent[Any] | None = None
        self._sdk_config: RunConfig | None = None
        self._first: dict[str, list[float]] = {"candidate": [], "baseline": []}
        self._versions: dict[str, str] = {}

    def setup(self) -> None:
        self._versions["openai_agents"] = require_openai_agents(self.name)
        self._versions["openai"] = openai.__version__
        super().setup()

    def prepare(self) -> None:
        from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig

        self._agent = self.light_agent(max_tokens=TOKENS, instructions=SYSTEM)
        self._session = self._agent.session("bench-stream")
        self._sdk_agent = Agent(
            name="bench",
            instructions=SYSTEM,
            model=OpenAIChatCompletionsModel(MODEL, openai_client=self.client),
            model_settings=ModelSettings(max_tokens=TOKENS, include_usage=True),
        )
        self._sdk_config = RunConfig(tracing_disabled=True)
        for _ in range(WARMUP_TURNS):
            self.settle()
            self._checked(self.run_async(self._candidate_turn()), "agentos")
            self.settle()
            self._checked(self.run_async(self._baseline_turn()), "openai-agents")

    def run_candidate(self) -> Sample:
        return self._measure("candidate")

    def run_baseline(self) -> Sample:
        return self._measure("baseline")

    def _measure(self, side: str) -> Sample:
        turn = self._candidate_turn if side == "candidate" else self._baseline_turn
        turns = [self._checked(self.run_async(turn()), side) for _ in range(TURNS_PER_RUN)]
        self._first[side].append(statistics.median(t.first_text for t in turns) * 1000)
        return {"turn": statistics.median(t.total for t in turns) * 1000}

    def _checked(self, turn: _Turn, side: str) -> _Turn:
        if turn.text != "".join(token(i) for i in range(TOKENS)):
            raise RuntimeError(f"{side} read a different text: {turn.text[:60]!r}...")
        return turn

    async def _candidate_turn(self) -> _Turn:
        assert self._session is not None
        session = self._session
        await session.clear()
        started = time.perf_counter()
        result = session.stream(PROMPT)
        first = 0.0
        pieces: list[str] = []
        async for text in result.text_stream:
            if not first:
                first = time.perf_counter()
            pieces.append(text)
        await result.usage
        ended = time.perf_counter()
        return _Turn(first - started, ended - started, "".join(pieces))

    async def _baseline_turn(self) -> _Turn:
        from agents import RawResponsesStreamEvent, Runner
        from openai.types.responses import ResponseTextDeltaEvent

        assert self._sdk_agent is not None
        started = time.perf_counter()
        result = Runner.run_streamed(self._sdk_agent, PROMPT, run_config=self._sdk_config)
        first = 0.0
        pieces: list[str] = []
        async for event in result.stream_events():
            if isinstance(event, RawResponsesStreamEvent) and isinstance(
                event.data, ResponseTextDeltaEvent
            ):
                if not first:
                    first = time.perf_counter()
                pieces.append(event.data.delta)
        ended = time.perf_counter()
        if result.final_output != "".join(pieces):
            raise RuntimeError("openai-agents' final output is not the text it streamed")
        return _Turn(first - started, ended - started, "".join(pieces))

    def settings(self) -> dict[str, object]:
        return {
            "system": SYSTEM,
            "prompt": PROMPT,
            "model": MODEL,
            "max_tokens": TOKENS,
            "turns_per_run": TURNS_PER_RUN,
            "warmup_turns_per_side": WARMUP_TURNS,
            "settle_seconds": SETTLE_SECONDS,
            "server": "bench/sse_server.py in a child process; role chunk, "
            f"{TOKENS} one-token content chunks, finish chunk, usage-only chunk, [DONE]; "
            "one send per event, no pacing, Connection: close",
            "candidate": "gmi(provider='openai', model, api_key, base_url, max_tokens, "
            "fallback_providers=[], instructions, cognition='light').session(id).stream(prompt)"
            ".text_stream, then await .usage; session.clear() outside the timer before every turn",
            "baseline": "Runner.run_streamed(Agent(instructions, model=OpenAIChatCompletionsModel("
            "model, AsyncOpenAI(api_key, base_url, max_retries=0)), model_settings=ModelSettings("
            "max_tokens, include_usage=True)), prompt, run_config=RunConfig(tracing_disabled="
            "True)).stream_events(), every event read",
            "event_loop": "one asyncio.Runner for both sides",
            "versions": self._versions,
        }

    def notes(self) -> list[str]:
        if not all(self._first.values()):
            return []
        candidate = statistics.median(self._first["candidate"])
        baseline = statistics.median(self._first["baseline"])
        return [
            f"time to first text: candidate {candidate:.3g} ms, baseline {baseline:.3g} ms "
            f"({candidate / baseline:.3f}x)"
        ]


register(SessionStream, name=SessionStream.name)
