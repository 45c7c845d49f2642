"""``gmi_turn``: one turn's overhead, agentos against pydantic-ai and openai-agents, no latency.

Candidate: an `agentos.substrate.GMI` initialized with ``GMIConfig(model=ScriptedModel(<function>),
tool_orchestrator=ToolOrchestrator([lookup], check_capabilities=False))`` and a plain
`PersonaDefinition` (no sentiment tracking, no memory, no RAG), driven through
``process_turn_stream`` with every chunk read and ``await stream.output()``. Baseline:
pydantic-ai's ``Agent(FunctionModel(fn), system_prompt=..., tools=[lookup])`` driven with
``await agent.run(prompt)``. Both models, the tool and the agent come from `bench.turn_models`
(shared with ``gmi_session``). pydantic-ai is installed for benchmarks only
(``pip install -e '.[bench]'``) and imported lazily, so the rest of ``bench`` works without it.

A second pair (issue 12): a 'light' ``gmi()`` session turn, ``await session.send(prompt)`` on a
``gmi(model=ScriptedModel(<function>), instructions=SYSTEM, tools=[lookup], cognition="light")``
session, against the OpenAI Agents SDK's ``await Runner.run(agent, prompt)`` on its own
``agents.testing.ScriptedModel`` with tracing off (`bench.agents_models`; openai-agents is the
faster peer here). openai-agents is imported lazily too.

Metrics, each the median microseconds of one turn:

- ``text_turn``: one model call that answers with text (GMI vs pydantic-ai; target <= 0.5).
- ``tool_turn``: one tool round: the first model call asks for ``lookup(q="a")``, the tool runs,
  the second call answers with text (GMI vs pydantic-ai; target <= 0.5).
- ``light_text_turn`` and ``light_tool_turn``: the same two turns, the light session vs
  openai-agents (targets <= 0.25 and <= 0.35).

Fairness decisions:

- **The same work on both sides.** The same system prompt, user prompt, tool (a typed function
  with the same docstring), tool call, reply text and usage. Each model function answers from
  the request (the tool turn's second call is told apart by the tool result at the end of the
  prompt). The reply is one text delta and the usage is given, so neither side's scripted model
  splits text or estimates tokens. The first turns of setup check that both sides give the
  expected reply and tool result.
- **One loop, one agent per side.** An `asyncio.Runner` is made once; one GMI and one `Agent`
  serve every run, so what is measured is the turn, not construction or loop start.
- **The SDK's scripted model is fed outside the timer.** Its `ScriptedModel` plays queued steps,
  so each turn's steps (one text reply, or the call then the reply) are queued before the timer
  starts; each run starts on a fresh one, since it keeps a copy of every call it served.
- **The GMI's and the session's history are cleared outside the timer before every turn.** A
  GMI keeps its conversation; without clearing, each turn's prompt would carry every earlier
  turn, while ``agent.run`` without ``message_history`` (and ``Runner.run`` with a string)
  starts from nothing each time; the session is cleared with ``await session.clear()``.
  Clearing (``history.clear_history()``, which also drops those turns' reasoning-trace entries)
  keeps both sides at one turn of context; the GMI is not rebuilt, so its initialization is not
  part of any run.
- **Many turns per run.** A turn takes microseconds, so each run times ``TURNS_PER_RUN`` turns
  of each kind one by one and reports their median; the runner then takes the median of runs.
- **Warm-up and settling.** Setup plays ``WARMUP_TURNS`` turns of each kind on both sides;
  before every run a full garbage collection runs, so one side's garbage is not collected in
  the other's timer.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, ClassVar

import agentos
from agentos.persona import PersonaDefinition
from agentos.substrate import GMI, GMIConfig, GMIOutputChunkType, GMITurnInput, ToolResultPayload
from agentos.testing import ScriptedModel
from agentos.tools import ToolOrchestrator
from bench.agents_models import AgentsTurns, require_openai_agents, tool_outputs
from bench.registry import Benchmark, Metric, Sample, register
from bench.turn_models import (
    COMPLETION_TOKENS,
    LOOKUP_TOOL,
    PROMPT_TOKENS,
    REPLY,
    SYSTEM,
    TEXT_PROMPT,
    TOOL_ARGS,
    TOOL_PROMPT,
    TOOL_REPLY,
    TOOL_RESULT,
    make_agent,
    require_pydantic_ai,
    script,
    tool_returns,
)

if TYPE_CHECKING:
    from pydantic_ai import Agent

__all__ = ["GMITurn"]

TURNS_PER_RUN = 25
WARMUP_TURNS = 50


class GMITurn(Benchmark):
    """Microseconds per turn (text, one tool round): GMI vs pydantic-ai, light session vs SDK."""

    name: ClassVar[str] = "gmi_turn"
    description: ClassVar[str] = (
        "GMI.process_turn_stream on ScriptedModel vs pydantic-ai Agent.run on FunctionModel, "
        "and a light gmi() session.send() vs openai-agents Runner.run on its ScriptedModel, "
        f"zero latency, median of {TURNS_PER_RUN} turns per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("text_turn", "us", "lower", tolerance=0.5),
        Metric("tool_turn", "us", "lower", tolerance=0.5),
        Metric("light_text_turn", "us", "lower", tolerance=0.25),
        Metric("light_tool_turn", "us", "lower", tolerance=0.35),
    )

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._gmi: GMI | None = None
        self._agent: Agent[None, str] | None = None
        self._light: agentos.GmiAgent | None = None
        self._session: agentos.AgentSession | None = None
        self._sdk: AgentsTurns | None = None
        self._turns = 0
        self._versions: dict[str, str] = {}
        self._pydantic_light: list[float] = []

    def setup(self) -> None:
        self._versions["pydantic_ai"] = require_pydantic_ai(self.name)
        self._versions["openai_agents"] = require_openai_agents(self.name)
        self._runner = asyncio.Runner()
        self._gmi = self._runner.run(self._make_gmi())
        self._agent = make_agent()
        self._light = agentos.gmi(
            model=ScriptedModel(script), instructions=SYSTEM, tools=[LOOKUP_TOOL], cognition="light"
        )
        self._session = self._light.session("bench-light")
        self._sdk = AgentsTurns()
        self._runner.run(self._check())
        turns = (self._candidate_turn, self._baseline_turn, self._light_turn, self._sdk_turn)
        for _ in range(WARMUP_TURNS):
            for turn in turns:
                self._runner.run(turn(TEXT_PROMPT))
                self._runner.run(turn(TOOL_PROMPT))

    def teardown(self) -> None:
        if self._runner is not None:
            if self._gmi is not None:
                self._runner.run(self._gmi.shutdown())
            if self._light is not None:
                self._runner.run(self._light.close())
            self._runner.close()
            self._runner = None

    def settle(self) -> None:
        gc.collect()

    def run_candidate(self) -> Sample:
        gmi = self._measure(self._candidate_turn)
        light = self._measure(self._light_turn)
        return {**gmi, **{f"light_{name}": value for name, value in light.items()}}

    def run_baseline(self) -> Sample:
        assert self._sdk is not None
        self._sdk.fresh_model()  # outside the timer: the old one keeps a copy of every call
        pydantic = self._measure(self._baseline_turn)
        sdk = self._measure(self._sdk_turn)
        # Beside the metrics: the light session against pydantic-ai too, in the notes.
        self._pydantic_light.append(pydantic["text_turn"])
        return {**pydantic, **{f"light_{name}": value for name, value in sdk.items()}}

    def settings(self) -> dict[str, object]:
        return {
            "system": SYSTEM,
            "text_prompt": TEXT_PROMPT,
            "tool_prompt": TOOL_PROMPT,
            "reply": REPLY,
            "tool_reply": TOOL_REPLY,
            "tool_call": {"name": "lookup", "args": TOOL_ARGS},
            "usage_per_call": {"prompt": PROMPT_TOKENS, "completion": COMPLETION_TOKENS},
            "turns_per_run": TURNS_PER_RUN,
            "warmup_turns_per_kind": WARMUP_TURNS,
            "candidate": "GMI.process_turn_stream, every chunk read, await stream.output()",
            "candidate_history": "cleared outside the timer before every turn (one GMI)",
            "baseline": "Agent(FunctionModel(fn), system_prompt, tools=[lookup]).run(prompt)",
            "light_candidate": "gmi(model=ScriptedModel(script), instructions, tools=[lookup], "
            "cognition='light').session(id).send(prompt); session.clear() before every turn",
            "light_baseline": "openai-agents Runner.run(Agent(instructions, tools=[lookup], "
            "model=agents.testing.ScriptedModel()), prompt, run_config=RunConfig("
            "tracing_disabled=True)); the turn's steps queued outside the timer",
            "event_loop": "one asyncio.Runner for both sides",
            "versions": self._versions,
        }

    def _measure(self, turn: Callable[[str], Coroutine[Any, Any, float]]) -> Sample:
        assert self._runner is not None
        runner = self._runner
        text = [runner.run(turn(TEXT_PROMPT)) for _ in range(TURNS_PER_RUN)]
        tools = [runner.run(turn(TOOL_PROMPT)) for _ in range(TURNS_PER_RUN)]
        return {
            "text_turn": statistics.median(text) * 1e6,
            "tool_turn": statistics.median(tools) * 1e6,
        }

    async def _make_gmi(self) -> GMI:
        persona = PersonaDefinition(id="bench", name="Bench", base_system_prompt=SYSTEM)
        gmi = GMI("bench")
        config = GMIConfig(
            model=ScriptedModel(script),
            tool_orchestrator=ToolOrchestrator([LOOKUP_TOOL], check_capabilities=False),
        )
        await gmi.initialize(persona, config)
        return gmi

    def _turn_input(self, prompt: str) -> GMITurnInput:
        self._turns += 1
        return GMITurnInput(interaction_id=f"turn-{self._turns}", user_id="u1", content=prompt)

    async def _candidate_turn(self, prompt: str) -> float:
        """One GMI turn's seconds; its history is cleared first, outside the timer."""
        assert self._gmi is not None
        gmi = self._gmi
        gmi.history.clear_history()
        turn_input = self._turn_input(prompt)
        started = time.perf_counter()
        stream = gmi.process_turn_stream(turn_input)
        async for _chunk in stream:
            pass
        await stream.output()
        return time.perf_counter() - started

    async def _baseline_turn(self, prompt: str) -> float:
        assert self._agent is not None
        agent = self._agent
        started = time.perf_counter()
        await agent.run(prompt)
        return time.perf_counter() - started

    async def _light_turn(self, prompt: str) -> float:
        """One light session turn's seconds; the session is cleared first, outside the timer."""
        assert self._session is not None
        session = self._session
        await session.clear()
        started = time.perf_counter()
        await session.send(prompt)
        return time.perf_counter() - started

    async def _sdk_turn(self, prompt: str) -> float:
        """One openai-agents turn's seconds; its model's steps are queued first, untimed."""
        from agents import Runner

        assert self._sdk is not None
        sdk = self._sdk
        sdk.queue(prompt)
        started = time.perf_counter()
        await Runner.run(sdk.agent, prompt, run_config=sdk.config)
        return time.perf_counter() - started

    def notes(self) -> list[str]:
        if not self._pydantic_light:
            return []
        return [
            f"pydantic-ai's text turn (the light session's other peer): "
            f"{statistics.median(self._pydantic_light):.4g} us"
        ]

    async def _check(self) -> None:
        """Every side gives the expected replies and tool result (and so does the same work)."""
        assert self._gmi is not None
        assert self._agent is not None
        for prompt, reply in ((TEXT_PROMPT, REPLY), (TOOL_PROMPT, TOOL_REPLY)):
            self._gmi.history.clear_history()
            stream = self._gmi.process_turn_stream(self._turn_input(prompt))
            results = [
                chunk.content
                async for chunk in stream
                if chunk.type is GMIOutputChunkType.TOOL_RESULT
            ]
            output = await stream.output()
            if output.error is not None or output.response_text != reply:
                raise RuntimeError(f"agentos answered {output.response_text!r}: {output.error}")
            if prompt == TOOL_PROMPT and not (
                len(results) == 1
                and isinstance(results[0], ToolResultPayload)
                and results[0].result == TOOL_RESULT
            ):
                raise RuntimeError(f"agentos's tool turn gave the tool results {results!r}")
            result = await self._agent.run(prompt)
            if result.output != reply:
                raise RuntimeError(f"pydantic-ai answered {result.output!r}")
            if prompt == TOOL_PROMPT and tool_returns(result.all_messages()) != [TOOL_RESULT]:
                raise RuntimeError("pydantic-ai's tool turn did not run the tool once")
            await self._check_light(prompt, reply)

    async def _check_light(self, prompt: str, reply: str) -> None:
        """The light session and openai-agents give ``reply`` and run the tool on its prompt."""
        from agents import Runner

        assert self._session is not None
        assert self._sdk is not None
        await self._session.clear()
        answer = await self._session.send(prompt)
        tools = [result.output for result in answer.tool_results]
        if answer.text != reply or tools != ([TOOL_RESULT] if prompt == TOOL_PROMPT else []):
            raise RuntimeError(f"the light session answered {answer.text!r}, tools {tools!r}")
        self._sdk.queue(prompt)
        run = await Runner.run(self._sdk.agent, prompt, run_config=self._sdk.config)
        tools = tool_outputs(run)
        if run.final_output != reply or tools != ([TOOL_RESULT] if prompt == TOOL_PROMPT else []):
            raise RuntimeError(f"openai-agents answered {run.final_output!r}, tools {tools!r}")


register(GMITurn, name=GMITurn.name)
