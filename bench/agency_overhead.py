"""``agency_overhead``: an agency's own cost per member call, against openai-agents and pydantic-ai.

Issue 14's bench line: "the agency's own overhead per member call (scripted members), beside the
same work done with openai-agents handoffs and pydantic-ai agent delegation, as medians: target
<= 0.5x the faster of the two".

Two shapes of work, each member making one zero-latency model step that answers fixed text:

- ``hierarchical``: a manager delegates ``TASK`` to two members and answers. The manager's first
  step calls both members at once (two tool calls), each member answers, the manager's second
  step answers ``MANAGER_REPLY``: four model calls, two member calls. agentos: ``agency(agents=
  {researcher, writer}, strategy="hierarchical", model=ScriptedModel(manager))`` and its
  ``delegate_to_<role>({task})`` tools. pydantic-ai: its "agent delegation", a manager `Agent`
  whose ``delegate_to_<role>(ctx, task)`` tools ``await member.run(task, usage=ctx.usage)``.
  openai-agents: a manager whose tools are ``member.as_tool("delegate_to_<role>", ...)`` (the
  SDK's delegation; its handoffs hand the conversation over for good, so a manager cannot get
  two answers back through them; their argument is named ``input``, not ``task``).
- ``sequential``: a pipeline of three members, each given the task and the output before it;
  the last member's text is the result: three model calls, three member calls. agentos:
  ``agency(agents={drafter, editor, checker}, strategy="sequential")``. pydantic-ai: its
  "programmatic hand-off", three ``await member.run(prompt, usage=usage)`` in order, each prompt
  the task and the previous output. openai-agents: handoffs, ``drafter -> editor -> checker``:
  each member's one step answers its text and hands off (``transfer_to_<next>``) in the same
  response, the last answers only; each member sees the conversation so far, as handoffs do.

Metrics, microseconds per member call: the median wall time of one whole agency call (from the
call to its result, ``generate()`` / ``run()`` / ``Runner.run()``) divided by its member calls
(2 and 3). The divisor is the same on every side and nothing is subtracted: every model answers
at once from a function of its own, so the wall time is the framework's own work (plus the
scripted model's, a few microseconds a step on each side). On the hierarchical shape the
manager's two steps are part of that work, on every side. Target: candidate / baseline <= 0.5,
where the baseline sample of a run is the faster of the two peers' medians in that run (the
min of two noisy figures is biased low, so this is the stricter reading); the notes give each
side's median over the runs.

Fairness decisions:

- **The same work on every side.** The same task, instructions, member replies, manager tool
  calls and final reply, and the same usage per model call (one text part per reply, so no side
  splits text or estimates tokens). Setup checks, on every side, the result text of each shape
  and the model calls made: the manager's two, and one for each member.
- **Zero-latency models that decide from the request.** agentos: `ScriptedModel(<function>)`;
  pydantic-ai: `FunctionModel(<function>)`; openai-agents: a minimal `Model` of ours
  (`bench.agency_peers`; ``agents.testing.ScriptedModel`` deep-copies every request it serves,
  a cost of the test double rather than of the SDK, so it is not used here). Each decides as
  the others do: the manager answers once a tool result is in its request, else calls both
  members.
- **Each side's own wording.** agentos's strategies word their own prompts (the roster in the
  manager's, the task and previous output in a pipeline member's); the peers get the task and
  previous output as ``"<task>\n\nPrevious output:\n<output>"``. No agency option beyond the
  roster, the strategy, the model and the instructions is set (no approvals, budget, controls
  or session), so what agentos adds per member call is its plain path.
- **Built once, warm.** One `asyncio.Runner` serves every side; the agency, agents and models
  are built in setup, outside any timer, and ``WARMUP_CALLS`` calls of each shape run first on
  every side. No side keeps history between calls (``generate()``, ``run()`` without
  ``message_history``, ``Runner.run`` with a string).
- **Many calls per run.** Each run times ``CALLS_PER_RUN`` calls of each shape one by one and
  reports the median; before every run the agentos models' request logs are emptied and a full
  garbage collection runs. openai-agents' tracing is off (``RunConfig(tracing_disabled=True)``),
  as agentos records no trace here.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import ClassVar

from agentos.core.messages import Message, Role, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.testing import ScriptedModel, ScriptStep
from bench.agency_peers import (
    DELEGATES,
    MANAGER,
    MANAGER_REPLY,
    PIPELINE,
    PIPELINE_REPLY,
    SERVED,
    SHAPES,
    TASK,
    Call,
    agents_calls,
    pydantic_calls,
)
from bench.agents_models import require_openai_agents
from bench.registry import Benchmark, Metric, Sample, register
from bench.turn_models import COMPLETION_TOKENS, PROMPT_TOKENS, require_pydantic_ai

__all__ = ["AgencyOverhead"]

CALLS_PER_RUN = 25
WARMUP_CALLS = 30
PEERS = ("openai_agents", "pydantic_ai")


# -- agentos: the candidate --------------------------------------------------------------------


def _usage() -> ModelUsage:
    return ModelUsage(prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)


def _replying(text: str) -> Callable[..., ScriptStep]:
    def step(
        _messages: Sequence[Message], _tools: Sequence[ToolDefinition], _o: CompletionOptions
    ) -> ScriptStep:
        return ScriptStep(text=[text], usage=_usage())

    return step


def _manager_step(
    messages: Sequence[Message], _tools: Sequence[ToolDefinition], _o: CompletionOptions
) -> ScriptStep:
    """agentos's manager: both members called at once, then the reply once their results came."""
    if messages[-1].role is Role.TOOL:
        return ScriptStep(text=[MANAGER_REPLY], usage=_usage())
    calls = [
        ToolCall(f"c{index}", f"delegate_to_{role}", {"task": task})
        for index, (role, (_i, task, _r)) in enumerate(DELEGATES.items())
    ]
    return ScriptStep(tool_calls=calls, usage=_usage())


class _Candidate:
    """The two agencies, on `ScriptedModel`s; `models` are emptied of their request logs."""

    def __init__(self) -> None:
        from agentos import agent
        from agentos.api.agency import agency

        self.models: dict[str, ScriptedModel] = {"manager": ScriptedModel(_manager_step)}
        self.models.update(
            {role: ScriptedModel(_replying(reply)) for role, (_i, _t, reply) in DELEGATES.items()}
        )
        self.models.update(
            {name: ScriptedModel(_replying(reply)) for name, (_i, reply) in PIPELINE.items()}
        )
        members = {
            role: agent(model=self.models[role], instructions=instructions)
            for role, (instructions, _t, _r) in DELEGATES.items()
        }
        self.hierarchical = agency(
            agents=members,
            strategy="hierarchical",
            model=self.models["manager"],
            instructions=MANAGER,
        )
        stages = {
            name: agent(model=self.models[name], instructions=instructions)
            for name, (instructions, _r) in PIPELINE.items()
        }
        self.sequential = agency(agents=stages, strategy="sequential")

    def calls(self) -> dict[str, Call]:
        async def hierarchical() -> str:
            return (await self.hierarchical.generate(TASK)).text

        async def sequential() -> str:
            return (await self.sequential.generate(TASK)).text

        return {"hierarchical": hierarchical, "sequential": sequential}

    def served(self) -> Counter[str]:
        """The model calls each agentos model served, by its reply (or "manager")."""
        replies = {"manager": "manager"}
        replies.update({role: reply for role, (_i, _t, reply) in DELEGATES.items()})
        replies.update({name: reply for name, (_i, reply) in PIPELINE.items()})
        return Counter({replies[name]: len(m.requests) for name, m in self.models.items()})

    async def close(self) -> None:
        await self.hierarchical.close()
        await self.sequential.close()


# -- the benchmark -----------------------------------------------------------------------------


class AgencyOverhead(Benchmark):
    """Microseconds per member call: agency() vs the faster of openai-agents and pydantic-ai."""

    name: ClassVar[str] = "agency_overhead"
    description: ClassVar[str] = (
        "agency() hierarchical (manager + 2 members) and sequential (3 members) on ScriptedModel "
        "vs the same work in openai-agents (as_tool, handoffs) and pydantic-ai (delegation, "
        f"hand-off), zero latency, per member call, median of {CALLS_PER_RUN} calls per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("hierarchical", "us/member call", "lower", tolerance=0.5),
        Metric("sequential", "us/member call", "lower", tolerance=0.5),
    )

    def __init__(self) -> None:
        self._loop: asyncio.Runner | None = None
        self._candidate: _Candidate | None = None
        self._sides: dict[str, dict[str, Call]] = {}
        self._versions: dict[str, str] = {}
        self._medians: dict[str, list[float]] = {}

    def setup(self) -> None:
        self._versions["openai_agents"] = require_openai_agents(self.name)
        self._versions["pydantic_ai"] = require_pydantic_ai(self.name)
        self._loop = asyncio.Runner()
        self._candidate = _Candidate()
        self._sides = {
            "agentos": self._candidate.calls(),
            "openai_agents": agents_calls(),
            "pydantic_ai": pydantic_calls(),
        }
        self._loop.run(self._check())
        for calls in self._sides.values():
            for call in calls.values():
                for _ in range(WARMUP_CALLS):
                    self._loop.run(call())

    def teardown(self) -> None:
        if self._loop is None:
            return
        if self._candidate is not None:
            self._loop.run(self._candidate.close())
        self._loop.close()
        self._loop = None

    def settle(self) -> None:
        if self._candidate is not None:
            for model in self._candidate.models.values():
                model.requests.clear()
        gc.collect()

    def run_candidate(self) -> Sample:
        return self._measure("agentos")

    def run_baseline(self) -> Sample:
        peers = [self._measure(peer) for peer in PEERS]
        return {shape: min(sample[shape] for sample in peers) for shape in SHAPES}

    def settings(self) -> dict[str, object]:
        return {
            "task": TASK,
            "hierarchical": {
                "members": {role: reply for role, (_i, _t, reply) in DELEGATES.items()},
                "manager_steps": "both delegate tools in one step, then MANAGER_REPLY",
                "member_calls": SHAPES["hierarchical"],
                "model_calls": SHAPES["hierarchical"] + 2,
            },
            "sequential": {
                "members": {name: reply for name, (_i, reply) in PIPELINE.items()},
                "member_calls": SHAPES["sequential"],
                "model_calls": SHAPES["sequential"],
            },
            "metric": "median wall time of one agency call / its member calls (nothing subtracted)",
            "baseline": "per run, the faster of the two peers' medians",
            "candidate": "agency(strategy=...).generate(TASK), members agent(model=ScriptedModel)",
            "openai_agents": "Runner.run(manager with member.as_tool(...)) and "
            "Runner.run(drafter) with handoffs drafter -> editor -> checker; a zero-latency Model "
            "of ours; RunConfig(tracing_disabled=True)",
            "pydantic_ai": "manager Agent whose tools await member.run(task, usage=ctx.usage); "
            "three member.run(prompt, usage=usage) in order; FunctionModel",
            "calls_per_run": CALLS_PER_RUN,
            "warmup_calls_per_shape": WARMUP_CALLS,
            "event_loop": "one asyncio.Runner for every side",
            "versions": self._versions,
        }

    def notes(self) -> list[str]:
        notes = []
        for shape, members in SHAPES.items():
            figures = {
                side: statistics.median(values)
                for side in ("agentos", *PEERS)
                if (values := self._medians.get(f"{side} {shape}"))
            }
            if len(figures) < 3:
                continue
            listed = ", ".join(f"{side} {value:.4g} us" for side, value in figures.items())
            notes.append(
                f"{shape} per member call ({members} per call): {listed}; whole call agentos "
                f"{figures['agentos'] * members:.4g} us"
            )
        return notes

    def _measure(self, side: str) -> Sample:
        assert self._loop is not None
        loop = self._loop
        sample: Sample = {}
        for shape, call in self._sides[side].items():
            times = [loop.run(_timed(call)) for _ in range(CALLS_PER_RUN)]
            sample[shape] = statistics.median(times) * 1e6 / SHAPES[shape]
            self._medians.setdefault(f"{side} {shape}", []).append(sample[shape])
        return sample

    async def _check(self) -> None:
        """Each side answers each shape's text, its models called as the shape says, once."""
        assert self._candidate is not None
        expected = {"hierarchical": MANAGER_REPLY, "sequential": PIPELINE_REPLY}
        calls = Counter({"manager": 2})
        calls.update(reply for _i, _t, reply in DELEGATES.values())
        calls.update(reply for _i, reply in PIPELINE.values())
        SERVED.clear()
        for side, shapes in self._sides.items():
            for shape, call in shapes.items():
                text = await call()
                if text != expected[shape]:
                    raise RuntimeError(f"{side}'s {shape} call answered {text!r}")
            served = (
                self._candidate.served()
                if side == "agentos"
                else Counter({reply: n for (peer, reply), n in SERVED.items() if peer == side})
            )
            if served != calls:
                raise RuntimeError(f"{side}'s models served {dict(served)!r}, not {dict(calls)!r}")


async def _timed(call: Call) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


register(AgencyOverhead, name=AgencyOverhead.name)
