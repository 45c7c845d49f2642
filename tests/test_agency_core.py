"""agency(): construction refusals, the one warning, approvals, the two budgets and controls.

Every test goes through the public API (`agentos.agency`) with `ScriptedModel` members; each
member's own model records the requests it received.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

import agentos
from agentos import (
    AgencyConfigError,
    AgencyResult,
    AgentCall,
    GMIError,
    GMIErrorCode,
    Message,
    ModelUsage,
    PlainAgent,
    SpendBudget,
    ToolCall,
    agency,
    agent,
    tool,
)
from agentos.api.agency import AgencyLimitError, AgencyLimitWarning
from agentos.api.approvals import ApprovalDecision, ApprovalRequest
from agentos.api.warnings import UnappliedOptionsWarning
from agentos.testing import ScriptedModel, ScriptStep
from fakes.agency_models import model, user_inputs


def refusal(**options: Any) -> AgencyConfigError:
    with pytest.raises(AgencyConfigError) as caught:
        agency(**options)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    return caught.value


# -- exports ---------------------------------------------------------------------------------


def test_agency_names_are_exported_from_agentos_and_agentos_api() -> None:
    import agentos.api as api

    for name in (
        "agency",
        "Agency",
        "AgencySession",
        "AgencyResult",
        "AgentCall",
        "AgencyConfigError",
        "AgencyStreamResult",
        "AgentStarted",
        "AgentTextDelta",
        "AgentFinished",
        "AgencyFinished",
    ):
        assert getattr(api, name) is getattr(agentos, name)
        assert name in agentos.__all__
        assert name in api.__all__
    assert issubclass(AgencyConfigError, GMIError)


# -- construction refusals -------------------------------------------------------------------


def test_an_unknown_strategy_is_refused_naming_strategy() -> None:
    error = refusal(agents={"a": {"model": model()}}, strategy="round-robin")
    assert error.details["option"] == "strategy"
    assert "round-robin" in str(error)


@pytest.mark.parametrize("strategy", ["parallel", "debate", "hierarchical"])
def test_a_strategy_that_needs_the_agency_model_is_refused_without_one(strategy: str) -> None:
    error = refusal(agents={"a": {"model": model()}, "b": {"model": model()}}, strategy=strategy)
    assert error.details["option"] == "model"
    assert strategy in str(error)


def test_adaptive_without_an_agency_model_is_refused() -> None:
    error = refusal(agents={"a": {"model": model()}}, adaptive=True)
    assert error.details["option"] == "model"
    assert "adaptive" in str(error)


@pytest.mark.parametrize("roster", [{}, [], None])
def test_an_empty_roster_is_refused(roster: Any) -> None:
    assert refusal(agents=roster).details["option"] == "agents"


def test_duplicate_member_names_are_refused() -> None:
    first = agent(model=model(), name="writer")
    second = agent(model=model(), name="writer")
    error = refusal(agents=[first, second])
    assert error.details == {"option": "agents", "agent": "writer"}


@pytest.mark.parametrize("name", ["has space", "9lives", "a.b", "", "x" * 60])
def test_a_name_that_cannot_be_a_delegate_tool_name_is_refused(name: str) -> None:
    error = refusal(agents={name: {"model": model()}})
    assert error.details["option"] == "agents"
    assert error.details["agent"] == name


@pytest.mark.parametrize("rounds", [0, -1, 1.5, True])
def test_max_rounds_below_one_is_refused(rounds: Any) -> None:
    error = refusal(agents={"a": {"model": model()}}, max_rounds=rounds)
    assert error.details["option"] == "max_rounds"


def test_a_review_loop_with_one_member_is_refused() -> None:
    error = refusal(agents={"a": {"model": model()}}, strategy="review-loop")
    assert error.details["option"] == "agents"
    assert "review-loop" in str(error)


def test_a_graph_with_a_cycle_is_refused_naming_the_agents() -> None:
    error = refusal(
        agents={
            "a": {"model": model(), "depends_on": ["c"]},
            "b": {"model": model(), "depends_on": ["a"]},
            "c": {"model": model(), "depends_on": ["b"]},
            "d": {"model": model()},
        },
        strategy="graph",
    )
    assert error.details["agents"] == ["a", "b", "c"]
    assert "cycle among a, b, c" in str(error)


def test_a_graph_with_an_unknown_dependency_is_refused_naming_both() -> None:
    error = refusal(
        agents={"a": {"model": model()}, "b": {"model": model(), "depends_on": ["ghost"]}},
        strategy="graph",
    )
    assert error.details == {
        "option": "agents.b.depends_on",
        "agent": "b",
        "dependency": "ghost",
    }


def test_an_unknown_option_is_refused_with_a_hint() -> None:
    error = refusal(agents={"a": {"model": model()}}, max_round=2)
    assert error.details["option"] == "max_round"
    assert "did you mean 'max_rounds'?" in str(error)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"controls": {"max_agent_call": 1}}, "controls.max_agent_call"),
        ({"controls": {"max_agent_calls": -1}}, "controls.max_agent_calls"),
        ({"controls": {"on_limit_reached": "panic"}}, "controls.on_limit_reached"),
        ({"hitl": {"approvals": {"before_tools": print}}}, "hitl.approvals.before_tools"),
        ({"hitl": {"approvals": {"before_tool": "yes"}}}, "hitl.approvals.before_tool"),
        ({"quorum": {"min_agents": 0}}, "quorum.min_agents"),
        ({"budget": {"max_cost_usd": -1}}, "budget.max_cost_usd"),
        ({"store": "agency.db"}, "store"),
    ],
)
def test_nested_options_are_checked_naming_the_key(options: dict[str, Any], named: str) -> None:
    assert refusal(agents={"a": {"model": model()}}, **options).details["option"] == named


def test_depends_on_outside_a_graph_is_refused() -> None:
    error = refusal(agents={"a": {"model": model()}, "b": {"model": model(), "depends_on": ["a"]}})
    assert error.details["option"] == "agents.b.depends_on"


# -- the one warning -------------------------------------------------------------------------


def test_cognitive_mechanisms_and_guardrails_are_named_in_one_warning_and_the_result() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        team = agency(
            agents={"a": {"model": model("done")}},
            guardrails=["pii-filter", "no-profanity"],
            cognitive_mechanisms={},
        )
    unapplied = [w.message for w in caught if isinstance(w.message, UnappliedOptionsWarning)]
    assert len(unapplied) == 1
    assert unapplied[0].options == ("guardrails", "cognitive_mechanisms")
    assert "pii-filter, no-profanity" in str(unapplied[0])
    result = asyncio.run(team.generate("go"))
    assert result.metadata["guardrails_not_enforced"] == ["pii-filter", "no-profanity"]


def test_emergent_on_a_strategy_without_a_manager_is_named_in_the_warning() -> None:
    # Spec: emergent specialists only "on hierarchical" (and adaptive, which has a manager).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agency(agents={"a": {"model": model("x")}}, emergent={"enabled": True})
    unapplied = [w.message for w in caught if isinstance(w.message, UnappliedOptionsWarning)]
    assert [w.options for w in unapplied] == [("emergent",)]
    assert "hierarchical" in str(unapplied[0])


def test_a_bad_emergent_option_is_refused_when_the_agency_is_built() -> None:
    members = {"a": {"model": model("x")}}
    error = refusal(agents=members, strategy="hierarchical", model=model(), emergent={"x": 1})
    assert error.details["option"] == "emergent.x"
    error = refusal(
        agents=members,
        strategy="hierarchical",
        model=model(),
        emergent={"enabled": True, "max_specialists": -1},
    )
    assert error.details["option"] == "emergent.max_specialists"


def test_no_warning_when_nothing_is_unapplied() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agency(agents={"a": {"model": model("x")}})


# -- approvals ---------------------------------------------------------------------------------


async def test_before_agent_may_skip_a_member_or_add_instructions() -> None:
    a, b, c = model("A says"), model("B says"), model("C says")
    asked: list[ApprovalRequest] = []

    def before_agent(request: ApprovalRequest) -> bool | ApprovalDecision:
        asked.append(request)
        if request.agent == "b":
            return False
        if request.agent == "c":
            return ApprovalDecision(True, instructions="be brief")
        return True

    team = agency(
        agents={"a": {"model": a}, "b": {"model": b}, "c": {"model": c}},
        hitl={"approvals": {"before_agent": before_agent}},
    )
    result = await team.generate("P")
    assert [(r.kind, r.agent, dict(r.details)) for r in asked] == [
        ("agent", "a", {"input": "P"}),
        ("agent", "b", {"input": "Original task: P\n\nPrevious agent (a) output:\nA says"}),
        ("agent", "c", {"input": "Original task: P\n\nPrevious agent (a) output:\nA says"}),
    ]
    assert b.requests == []
    assert user_inputs(c) == [
        "Original task: P\n\nPrevious agent (a) output:\nA says"
        "\n\n[Additional instructions]: be brief"
    ]
    assert [(call.agent, call.skipped, call.output) for call in result.agent_calls] == [
        ("a", False, "A says"),
        ("b", True, "[skipped by HITL]"),
        ("c", False, "C says"),
    ]
    assert result.text == "C says"


async def test_before_tool_is_asked_for_a_member_tool_call_and_a_refusal_reaches_the_model() -> (
    None
):
    ran: list[str] = []

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    call = ToolCall(id="t1", name="delete_file", arguments={"path": "/etc/passwd"})
    member = ScriptedModel([ScriptStep(tool_calls=[call]), ScriptStep("could not delete")])
    asked: list[ApprovalRequest] = []

    async def before_tool(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(False, reason="too risky")

    team = agency(
        agents={"ops": {"model": member, "tools": [delete_file]}},
        hitl={"approvals": {"before_tool": before_tool}},
    )
    result = await team.generate("clean up")
    assert ran == []
    assert [(r.kind, r.agent, dict(r.details)) for r in asked] == [
        (
            "tool",
            "ops",
            {"tool": "delete_file", "arguments": {"path": "/etc/passwd"}, "tool_call_id": "t1"},
        )
    ]
    tool_message = member.requests[1].messages[-1]
    result_part = tool_message.tool_result
    assert result_part is not None
    assert result_part.is_error
    assert "Tool call 'delete_file' was not approved: too risky" in str(result_part.output)
    assert result.agent_calls[0].tool_calls == [call]
    assert result.text == "could not delete"


# -- two budgets -------------------------------------------------------------------------------


async def test_a_member_refused_by_its_own_budget_reports_budget_exhausted() -> None:
    a, b = model("A says"), model("B says")
    team_budget = SpendBudget(max_total_tokens=10_000)
    own = agent(model=b, name="b", budget={"max_total_tokens": 1})
    team = agency(agents={"a": {"model": a}, "b": own}, budget=team_budget)
    result = await team.generate("P")
    assert b.requests == []  # refused before it was sent
    exhausted = result.metadata["budget_exhausted"]
    assert exhausted is not None
    assert exhausted["agent"] == "b"
    assert result.agent_calls[1].error is not None
    assert result.agent_calls[1].output == ""
    assert result.text == "A says"
    assert team_budget.spent_tokens == 15  # a's call charged to the agency budget


async def test_a_member_call_is_charged_to_both_budgets_and_a_shared_parent_once() -> None:
    host = SpendBudget(max_total_tokens=100_000)
    team_budget = SpendBudget(max_total_tokens=100_000, parent=host)
    own = SpendBudget(max_total_tokens=100_000, parent=host)
    member = model("done", tokens=(20, 10))
    team = agency(agents={"solo": agent(model=member, budget=own)}, budget=team_budget)
    result = await team.generate("P")
    assert result.usage.total_tokens == 30
    assert (team_budget.spent_tokens, own.spent_tokens, host.spent_tokens) == (30, 30, 30)
    assert result.metadata["budget_exhausted"] is None


async def test_the_agency_budget_refuses_a_member_call() -> None:
    member = model("never")
    team = agency(agents={"solo": {"model": member}}, budget={"max_total_tokens": 1})
    result = await team.generate("P")
    assert member.requests == []
    assert result.metadata["budget_exhausted"]["agent"] == "solo"
    assert result.text == ""


# -- controls ----------------------------------------------------------------------------------


def three(**options: Any) -> tuple[agentos.Agency, list[ScriptedModel]]:
    models = [model(f"{n} says", tokens=(10, 5)) for n in "abc"]
    team = agency(agents={n: {"model": m} for n, m in zip("abc", models, strict=True)}, **options)
    return team, models


@pytest.mark.parametrize(
    ("controls", "limit", "value"),
    [
        ({"max_agent_calls": 2}, "max_agent_calls", 2),
        ({"max_total_tokens": 20}, "max_total_tokens", 30),
        ({"max_duration_ms": 0}, "max_duration_ms", None),
    ],
)
async def test_a_limit_with_stop_ends_the_run_after_the_call(
    controls: dict[str, Any], limit: str, value: int | None
) -> None:
    team, (_, _, c) = three(controls=controls)
    result = await team.generate("P")
    reached = result.metadata["limit_reached"]
    assert reached["limit"] == limit
    if value is not None:
        assert reached["value"] == value
    calls = {"max_agent_calls": 2, "max_total_tokens": 2, "max_duration_ms": 1}[limit]
    assert len(result.agent_calls) == calls
    assert c.requests == []
    assert result.text == result.agent_calls[-1].output


async def test_a_cost_limit_stops_on_known_cost() -> None:
    team, _ = three(controls={"max_cost_usd": 0})
    result = await team.generate("P")
    assert result.metadata["limit_reached"] == {"limit": "max_cost_usd", "value": 0.0, "max": 0}
    assert len(result.agent_calls) == 1


async def test_a_limit_with_warn_warns_once_and_goes_on() -> None:
    team, _ = three(controls={"max_agent_calls": 1, "on_limit_reached": "warn"})
    with pytest.warns(AgencyLimitWarning, match="max_agent_calls") as caught:
        result = await team.generate("P")
    assert len([w for w in caught if isinstance(w.message, AgencyLimitWarning)]) == 1
    assert [call.agent for call in result.agent_calls] == ["a", "b", "c"]
    assert result.metadata["limit_reached"]["limit"] == "max_agent_calls"


async def test_a_limit_with_error_raises_naming_it() -> None:
    team, (_, b, _) = three(controls={"max_agent_calls": 1, "on_limit_reached": "error"})
    with pytest.raises(AgencyLimitError) as caught:
        await team.generate("P")
    assert caught.value.details["option"] == "controls.max_agent_calls"
    assert b.requests == []


async def test_max_steps_per_agent_caps_each_member_call() -> None:
    looping = ToolCall(id="t", name="ping", arguments={})

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    member = ScriptedModel([ScriptStep(tool_calls=[looping])] * 5 + [ScriptStep("end")])
    team = agency(
        agents={"a": {"model": member, "tools": [ping], "max_steps": 10}},
        controls={"max_steps_per_agent": 2},
    )
    result = await team.generate("P")
    assert len(member.requests) == 2
    assert len(result.agent_calls[0].tool_calls) == 2


# -- calls after close, per-call options -------------------------------------------------------


async def test_a_closed_agency_and_a_per_call_option_are_refused() -> None:
    team = agency(agents={"a": {"model": model("x")}})
    with pytest.raises(GMIError) as caught:
        await team.generate("P", temperature=0.2)
    assert caught.value.details["option"] == "temperature"
    with pytest.raises(GMIError) as blank:
        await team.generate("  ")
    assert blank.value.details["option"] == "prompt"
    await team.close()
    with pytest.raises(GMIError) as closed:
        await team.generate("P")
    assert closed.value.code is GMIErrorCode.INVALID_STATE


def test_result_types_are_plain_dataclasses() -> None:
    call = AgentCall("a", "in", "out")
    result = AgencyResult("out", [call], ModelUsage(), "sequential")
    assert (call.skipped, call.error, result.metadata) == (False, None, {})
    assert Message.user("x").text == "x"


async def test_a_roster_list_of_built_agents_runs_in_its_order() -> None:
    a, b = model("A1"), model("B1")
    team = agency(agents=[agent(model=a, name="first"), {"model": b, "name": "second"}])
    result = await team.generate("P")
    assert [call.agent for call in result.agent_calls] == ["first", "second"]
    assert [m.name for m in team.plan.members] == ["first", "second"]
    assert result.text == "B1"


def test_a_member_without_a_model_gets_the_agencys() -> None:
    shared = model("S1")
    team = agency(agents={"a": {"instructions": "Be terse."}}, model=shared)
    result = asyncio.run(team.generate("P"))
    assert result.text == "S1"
    assert team.plan.members[0].description == "Be terse."


async def test_close_closes_the_members_it_built_and_leaves_agents_passed_in_open() -> None:
    passed_in = agent(model=model("x"), name="mine")
    team = agency(agents={"mine": passed_in, "built": {"model": model("y")}})
    await team.close()
    built = team.plan.member("built").agent
    assert isinstance(built, PlainAgent)
    assert isinstance(passed_in, PlainAgent)
    assert (built.closed, passed_in.closed) == (True, False)


async def test_a_refusal_by_the_members_budget_runs_the_agency_budgets_function() -> None:
    told: list[str | None] = []
    team_budget = SpendBudget(
        max_total_tokens=100_000,
        budget_id="team",
        on_limit_reached=lambda info: told.append(info.budget_id),
    )
    own = SpendBudget(max_total_tokens=1, budget_id="own")
    member = model("never")
    team = agency(agents={"solo": agent(model=member, budget=own)}, budget=team_budget)
    result = await team.generate("P")
    assert member.requests == []
    assert told == ["own"]
    assert result.metadata["budget_exhausted"]["agent"] == "solo"


@pytest.mark.parametrize("name", ["manager", "synthesizer", "judge", "specialist_judge"])
def test_a_member_may_not_take_the_name_of_the_agencys_own_agents(name: str) -> None:
    error = refusal(agents={name: {"model": model("x")}})
    assert error.details == {"option": "agents", "agent": name}
    assert "agent_calls must tell apart" in error.message
