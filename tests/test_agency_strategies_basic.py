"""agency(): the sequential, parallel and graph strategies, and cancellation.

Each member's own `ScriptedModel` records the requests it received: the tests assert exactly
the input each member got, the order of the calls, the result's agent calls and its usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos import GMIError, Message, ModelUsage, agency
from agentos.api.agency import AgencyMemberError, AgencyQuorumError
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.testing import ScriptedModel, ScriptStep
from fakes.agency_models import model, user_inputs

# -- sequential ------------------------------------------------------------------------------


async def test_sequential_passes_the_task_and_the_previous_output_along() -> None:
    a, b, c = model("A1", tokens=(3, 2)), model("B1", tokens=(5, 4)), model("C1", tokens=(7, 6))
    team = agency(agents={"a": {"model": a}, "b": {"model": b}, "c": {"model": c}})
    result = await team.generate("P")
    assert user_inputs(a) == ["P"]
    assert user_inputs(b) == ["Original task: P\n\nPrevious agent (a) output:\nA1"]
    assert user_inputs(c) == ["Original task: P\n\nPrevious agent (b) output:\nB1"]
    assert [(call.agent, call.input, call.output) for call in result.agent_calls] == [
        ("a", "P", "A1"),
        ("b", "Original task: P\n\nPrevious agent (a) output:\nA1", "B1"),
        ("c", "Original task: P\n\nPrevious agent (b) output:\nB1", "C1"),
    ]
    assert [call.usage.total_tokens for call in result.agent_calls] == [5, 9, 13]
    assert result.usage == ModelUsage(15, 12)
    assert (result.text, result.strategy) == ("C1", "sequential")
    assert result.metadata == {
        "guardrails_not_enforced": [],
        "emergent_agents": [],
        "budget_exhausted": None,
        "limit_reached": None,
    }


async def test_sequential_raises_a_member_failure_naming_the_member() -> None:
    a = ScriptedModel([ScriptStep.fail(400, "bad request")])
    b = model("never")
    team = agency(agents={"a": {"model": a}, "b": {"model": b}})
    with pytest.raises(AgencyMemberError) as caught:
        await team.generate("P")
    assert caught.value.details == {"agent": "a"}
    assert b.requests == []


# -- parallel --------------------------------------------------------------------------------


def meeting(me: asyncio.Event, other: asyncio.Event, text: str) -> ScriptedModel:
    """A member that answers only once the other member has started: proof they run at once."""

    async def step(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        me.set()
        await other.wait()
        return ScriptStep(text, usage=ModelUsage(10, 5))

    return ScriptedModel(step)


async def test_parallel_runs_members_at_once_then_synthesizes() -> None:
    ready_a, ready_b = asyncio.Event(), asyncio.Event()
    a, b = meeting(ready_a, ready_b, "A view"), meeting(ready_b, ready_a, "B view")
    synth = model("merged", tokens=(30, 10))
    team = agency(agents={"a": {"model": a}, "b": {"model": b}}, strategy="parallel", model=synth)
    result = await team.generate("P")
    assert user_inputs(a) == ["P"]
    assert user_inputs(b) == ["P"]
    assert user_inputs(synth) == [
        'These agents each answered the task below.\nTask: "P"\n\n'
        "--- a ---\nA view\n\n--- b ---\nB view\n\nWrite one answer that combines them."
    ]
    assert sorted(call.agent for call in result.agent_calls[:2]) == ["a", "b"]
    assert result.agent_calls[2].agent == "synthesizer"
    assert result.usage == ModelUsage(50, 20)
    assert result.text == "merged"
    assert result.metadata["failed_agents"] == []


async def test_parallel_skips_a_failed_member_and_never_passes_on_its_partial_text() -> None:
    a = model("A view")
    b = ScriptedModel([ScriptStep.fail(400, "boom", after_text="half a leaked sentence")])
    synth = model("merged")
    team = agency(agents={"a": {"model": a}, "b": {"model": b}}, strategy="parallel", model=synth)
    result = await team.generate("P")
    assert "leaked" not in user_inputs(synth)[0]
    assert "--- a ---\nA view" in user_inputs(synth)[0]
    failed = result.metadata["failed_agents"]
    assert [entry["agent"] for entry in failed] == ["b"]
    b_call = next(call for call in result.agent_calls if call.agent == "b")
    assert b_call.output == ""
    assert b_call.error is not None
    assert result.text == "merged"


async def test_parallel_quorum_shortfall_errors_or_proceeds() -> None:
    def team(on_shortfall: str) -> tuple[object, ScriptedModel]:
        synth = model("merged")
        built = agency(
            agents={
                "a": {"model": model("A")},
                "b": {"model": ScriptedModel([ScriptStep.fail(400, "x")])},
            },
            strategy="parallel",
            model=synth,
            quorum={"min_agents": 2, "on_shortfall": on_shortfall},
        )
        return built, synth

    strict, strict_synth = team("error")
    with pytest.raises(AgencyQuorumError) as caught:
        await strict.generate("P")  # type: ignore[attr-defined]
    assert caught.value.details["option"] == "quorum"
    assert strict_synth.requests == []
    lenient, _ = team("proceed")
    result = await lenient.generate("P")  # type: ignore[attr-defined]
    assert result.text == "merged"
    assert result.metadata["quorum_shortfall"] == ["1 of min_agents 2 members finished"]


async def test_parallel_counts_providers_for_min_providers() -> None:
    one = ScriptedModel([ScriptStep("A")], provider_id="p1")
    two = ScriptedModel([ScriptStep("B")], provider_id="p1")
    team = agency(
        agents={"a": {"model": one}, "b": {"model": two}},
        strategy="parallel",
        model=model("merged"),
        quorum={"min_providers": 2},
    )
    with pytest.raises(AgencyQuorumError, match="1 of min_providers 2"):
        await team.generate("P")


# -- graph -----------------------------------------------------------------------------------


async def test_graph_runs_tiers_in_order_and_a_tier_at_once() -> None:
    ready_a, ready_b = asyncio.Event(), asyncio.Event()
    a, b = meeting(ready_a, ready_b, "A out"), meeting(ready_b, ready_a, "B out")
    c = model("C out")
    team = agency(
        agents={
            "a": {"model": a},
            "b": {"model": b},
            "c": {"model": c, "depends_on": ["a", "b"]},
        },
        strategy="graph",
    )
    result = await team.generate("P")
    assert user_inputs(c) == [
        "Original task: P\n\nOutputs from dependencies:\n[a]:\nA out\n\n[b]:\nB out"
    ]
    assert [call.agent for call in result.agent_calls][-1] == "c"
    assert result.text == "C out"
    assert result.usage == ModelUsage(30, 15)


async def test_graph_dependents_see_the_hitl_skip_marker() -> None:
    a, b = model("A out"), model("B out")
    team = agency(
        agents={"a": {"model": a}, "b": {"model": b, "depends_on": ["a"]}},
        strategy="graph",
        hitl={"approvals": {"before_agent": lambda request: request.agent != "a"}},
    )
    result = await team.generate("P")
    assert a.requests == []
    assert user_inputs(b) == [
        "Original task: P\n\nOutputs from dependencies:\n[a]:\n[skipped by HITL]"
    ]
    assert result.agent_calls[0].skipped


async def test_graph_last_tier_of_several_members_is_joined() -> None:
    team = agency(agents={"a": {"model": model("A")}, "b": {"model": model("B")}}, strategy="graph")
    result = await team.generate("P")
    assert result.text == "[a]:\nA\n\n[b]:\nB"


# -- cancellation ----------------------------------------------------------------------------


def blocked(started: asyncio.Event, never: asyncio.Event) -> ScriptedModel:
    """A member whose model call says it started, then waits for an event nobody sets."""

    async def step(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        started.set()
        await never.wait()
        return ScriptStep("never")

    return ScriptedModel(step)


@pytest.mark.parametrize("strategy", ["parallel", "graph", "sequential"])
async def test_cancelling_an_agency_call_leaves_no_task_running(strategy: str) -> None:
    never, started_a, started_b = asyncio.Event(), asyncio.Event(), asyncio.Event()
    team = agency(
        agents={
            "a": {"model": blocked(started_a, never)},
            "b": {"model": blocked(started_b, never)},
        },
        strategy=strategy,
        model=model("merged"),
    )
    call = asyncio.create_task(team.generate("P"))
    await started_a.wait()
    if strategy != "sequential":
        await started_b.wait()  # both members' model calls are running at once
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert asyncio.all_tasks() == {asyncio.current_task()}
    assert not started_b.is_set() if strategy == "sequential" else started_b.is_set()


async def test_cancelling_a_stream_reader_cancels_the_agency_call() -> None:
    never, started_a, started_b = asyncio.Event(), asyncio.Event(), asyncio.Event()
    team = agency(
        agents={
            "a": {"model": blocked(started_a, never)},
            "b": {"model": blocked(started_b, never)},
        },
        strategy="parallel",
        model=model("m"),
    )
    stream = team.stream("P")

    async def read() -> None:
        async for _ in stream.events:
            pass

    reader = asyncio.create_task(read())
    await started_a.wait()
    await started_b.wait()
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_failing_member_of_a_tier_cancels_nothing_else_and_raises() -> None:
    a = ScriptedModel([ScriptStep.fail(400, "bad")])
    b = model("B")
    c = model("C")
    team = agency(
        agents={"a": {"model": a}, "b": {"model": b}, "c": {"model": c, "depends_on": ["a"]}},
        strategy="graph",
    )
    with pytest.raises(GMIError) as caught:
        await team.generate("P")
    assert caught.value.details == {"agent": "a"}
    assert user_inputs(b) == ["P"]
    assert c.requests == []


@st.composite
def dags(draw: st.DrawFn) -> list[list[int]]:
    """Random DAGs over 1..6 members: each member depends on some earlier ones."""
    size = draw(st.integers(min_value=1, max_value=6))
    return [
        sorted(draw(st.sets(st.integers(min_value=0, max_value=i - 1), max_size=i)) if i else [])
        for i in range(size)
    ]


@settings(max_examples=30, deadline=None)
@given(dags())
def test_graph_members_run_after_their_dependencies_and_see_their_outputs(
    graph: list[list[int]],
) -> None:
    names = [f"n{i}" for i in range(len(graph))]
    models = {name: model(f"out of {name}") for name in names}
    team = agency(
        agents={
            name: {"model": models[name], "depends_on": [names[d] for d in graph[i]]}
            for i, name in enumerate(names)
        },
        strategy="graph",
    )
    result = asyncio.run(team.generate("T"))
    order = [call.agent for call in result.agent_calls]
    assert sorted(order) == names
    for i, name in enumerate(names):
        deps = [names[d] for d in graph[i]]
        assert all(order.index(dep) < order.index(name) for dep in deps)
        expected = (
            "T"
            if not deps
            else "Original task: T\n\nOutputs from dependencies:\n"
            + "\n\n".join(f"[{dep}]:\nout of {dep}" for dep in deps)
        )
        assert user_inputs(models[name]) == [expected]
    assert result.usage == ModelUsage(10 * len(names), 5 * len(names))
