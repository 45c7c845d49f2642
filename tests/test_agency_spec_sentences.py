"""agency(): the spec sentences and issue 14 requirements no other test pinned.

Each test names the sentence it pins (spec: /work/shared/spec/gmi.md line 5, the first table's
lightweight-helpers column, line 119, line 139, "Multi-agent work"; issue 14 items 1-8). The map
of every sentence to its tests is /work/brief/map14.md. A sentence the code does not meet is an
``xfail(strict=True)`` test whose reason starts "NOT IMPLEMENTED".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from agentos import (
    SKIP_TOOL,
    AgencyConfigError,
    AgencyStreamResult,
    ApprovalDecision,
    ApprovalRequest,
    GmiAgent,
    Message,
    ModelUsage,
    PlainAgent,
    SpendBudget,
    ToolCall,
    agency,
    agent,
    gmi,
    set_global_llm_observer,
    tool,
)
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.storage.ledger import UsageEvent
from agentos.testing import ScriptedModel, ScriptStep
from fakes.agency_models import conversation

FRUSTRATED = "This is terrible, awful and wrong!"
"""A prompt whose sentiment triggers the frustration metaprompt on a 'full' GMI session."""


def model(*texts: str, model_id: str = "scripted-model") -> ScriptedModel:
    """A scripted model answering ``texts`` in order, each step 10 prompt + 5 output tokens."""
    return ScriptedModel(
        [ScriptStep(text, usage=ModelUsage(10, 5)) for text in texts], model_id=model_id
    )


@pytest.fixture
def sources() -> Iterator[list[tuple[str, str]]]:
    """``(model_id, source)`` of every metered model call: ``gmi.step`` runs on a GMI."""
    seen: list[tuple[str, str]] = []

    def observe(event: UsageEvent) -> None:
        seen.append((event.model_id, str(event.source)))

    previous = set_global_llm_observer(observe)
    try:
        yield seen
    finally:
        set_global_llm_observer(previous)


def _sentiment_script(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
) -> ScriptStep:
    if options.json_mode:  # the frustration-recovery metaprompt
        reply = {"adjustmentRationale": "calm", "recoveryStrategy": "listen"}
        return ScriptStep(text=[json.dumps(reply)])
    return ScriptStep(text="Sorry.")


# -- line 5 / item 1 / Multi-agent work: who is a GMI ------------------------------------------


async def test_a_member_is_a_gmi_only_when_its_config_or_the_agent_passed_in_says_so(
    sources: list[tuple[str, str]],
) -> None:
    """Spec: "a member is a GMI only when its config sets runtime: 'gmi', or when the roster
    holds an agent built that way" (line 5: "... with runtime: 'gmi' or gmi()")."""
    built = agent(model=model("B", model_id="m-built"), name="built", runtime="gmi")
    made = gmi(model=model("G", model_id="m-gmi"), name="made")
    team = agency(
        agents={
            "plain": {"model": model("P", model_id="m-plain")},
            "legacy": {"model": model("L", model_id="m-legacy"), "runtime": "legacy"},
            "config": {"model": model("C", model_id="m-config"), "runtime": "gmi"},
            "built": built,
            "made": made,
        }
    )
    kinds = [(m.name, type(m.agent)) for m in team.plan.members]
    assert kinds == [
        ("plain", PlainAgent),
        ("legacy", PlainAgent),
        ("config", GmiAgent),
        ("built", GmiAgent),
        ("made", GmiAgent),
    ]
    assert team.plan.member("built").agent is built
    assert team.plan.member("made").agent is made
    result = await team.generate("P")
    assert result.text == "G"
    assert sources == [
        ("m-plain", "generate_text"),
        ("m-legacy", "generate_text"),
        ("m-config", "gmi.step"),
        ("m-built", "gmi.step"),
        ("m-gmi", "gmi.step"),
    ]


async def test_the_synthesizer_judge_manager_and_specialists_are_plain_with_gmi_members(
    sources: list[tuple[str, str]],
) -> None:
    """Spec line 5: "agency() builds no GMI of its own: the manager, synthesizers and spawned
    specialists it creates are plain agents"; issue item 1 adds the judge."""

    def gmi_member(text: str) -> dict[str, Any]:
        return {"model": ScriptedModel([text] * 6, model_id="m-member"), "runtime": "gmi"}

    parallel = agency(
        agents={"a": gmi_member("A"), "b": gmi_member("B")},
        strategy="parallel",
        model=ScriptedModel(["merged"], model_id="m-team"),
    )
    assert (await parallel.generate("P")).text == "merged"
    debate = agency(
        agents={"a": gmi_member("A"), "b": gmi_member("B")},
        strategy="debate",
        max_rounds=1,
        model=ScriptedModel(["verdict"], model_id="m-team"),
    )
    assert (await debate.generate("P")).text == "verdict"
    spawn = ToolCall("s1", "spawn_specialist", {"role": "checker", "instructions": "Check."})
    delegate = ToolCall("d1", "delegate_to_checker", {"task": "check it"})
    hierarchical = agency(
        agents={"a": gmi_member("A")},
        strategy="hierarchical",
        emergent={"enabled": True},
        model=ScriptedModel(
            [
                ScriptStep(tool_calls=[spawn]),
                ScriptStep(tool_calls=[delegate]),
                "checked",  # the specialist's answer (the same agency model)
                "done",
            ],
            model_id="m-team",
        ),
    )
    result = await hierarchical.generate("P")
    assert (result.text, result.metadata["emergent_agents"]) == ("done", ["checker"])
    assert [c.agent for c in result.agent_calls] == ["checker", "manager"]
    assert sorted(set(sources)) == [("m-member", "gmi.step"), ("m-team", "generate_text")]
    assert sources.count(("m-team", "generate_text")) == 1 + 1 + 4


# -- Multi-agent work: the GMI path of a member call ------------------------------------------


async def test_a_gmi_members_calls_run_on_a_gmi_built_for_each_call_with_no_history(
    sources: list[tuple[str, str]],
) -> None:
    """Spec: "The strategies call a member's generate() or stream(), which on the GMI path run
    ... on a GMI built for that call, with no history."""
    member = model("G1", "G2", model_id="m-g")
    team = agency(agents={"g": {"model": member, "runtime": "gmi"}})
    await team.generate("P1")
    await team.stream("P2").result()
    assert [conversation(r.messages) for r in member.requests] == [
        [("user", "P1")],
        [("user", "P2")],
    ]
    assert sources == [("m-g", "gmi.step"), ("m-g", "gmi.step")]


async def test_a_gmi_member_runs_the_light_profile_in_a_one_off_call() -> None:
    """Spec: "... which on the GMI path run the 'light' profile" (issue item 1): a member built
    with cognition 'full' runs no sentiment metaprompt in an agency call."""
    member = ScriptedModel(_sentiment_script)
    team = agency(agents={"g": {"model": member, "runtime": "gmi", "cognition": "full"}})
    assert (await team.generate(FRUSTRATED)).text == "Sorry."
    assert [r.options.json_mode for r in member.requests] == [None]


async def test_a_gmi_member_runs_the_light_profile_in_a_session_turn_too() -> None:
    """Spec: "The strategies call a member's generate() or stream(), which on the GMI path run
    the 'light' profile"; issue item 1: "(on the GMI path: the 'light' profile ...)"."""
    member = ScriptedModel(_sentiment_script)
    team = agency(agents={"g": {"model": member, "runtime": "gmi", "cognition": "full"}})
    session = team.session("s")
    await session.send(FRUSTRATED)
    await session.send(FRUSTRATED)  # the member's first call gets the earlier turns
    assert [r.options.json_mode for r in member.requests] == [None, None]


async def test_a_gmi_members_tool_call_waits_for_the_agencys_gate_after_its_hook() -> None:
    """Spec: "a GMI member's tool calls wait for the approval handler as other members' calls
    do: the agency's gate is asked after the member's onBeforeToolExecution, with the arguments
    the hook left, and a call it does not approve is skipped and the model is told why."""
    ran: list[dict[str, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append({"a": a, "b": b})
        return a + b

    def hook(ctx: Any) -> Any:
        return SKIP_TOOL if ctx.args["a"] == 0 else {"a": ctx.args["a"], "b": 100}

    asked: list[ApprovalRequest] = []
    decide = asyncio.Event()

    async def before_tool(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        await decide.wait()
        return ApprovalDecision(False, reason="a human said no")

    calls = [ToolCall("c1", "add", {"a": 0, "b": 1}), ToolCall("c2", "add", {"a": 2, "b": 3})]
    member = ScriptedModel([ScriptStep(tool_calls=calls), ScriptStep("gave up")])
    team = agency(
        agents={
            "g": {
                "model": member,
                "runtime": "gmi",
                "tools": [add],
                "on_before_tool_execution": hook,
            }
        },
        hitl={"approvals": {"before_tool": before_tool}},
    )
    running = asyncio.create_task(team.generate("Add."))
    while not asked:  # noqa: ASYNC110 - yielding until the gate is asked, no time involved
        await asyncio.sleep(0)
    assert len(member.requests) == 1  # the call waits for the handler
    decide.set()
    result = await running
    assert [(r.kind, r.agent, dict(r.details)) for r in asked] == [
        ("tool", "g", {"tool": "add", "arguments": {"a": 2, "b": 100}, "tool_call_id": "c2"})
    ]
    assert ran == []
    told = [str(m.tool_result.output) for m in member.requests[1].messages if m.tool_result]
    assert told[-1] == "Tool call 'add' was not approved: a human said no"
    assert result.text == "gave up"


# -- the first table: what agency() applies, returns, keeps ------------------------------------


async def test_a_member_gets_what_it_would_get_called_alone_no_rag_context() -> None:
    """First table: agency() "adds no RAG context": a member's request through the agency is the
    request the same agent sends when called alone."""
    alone, through = model("A"), model("A")
    await agent(model=alone, instructions="Answer briefly.", name="a").generate("P")
    member = {"model": through, "instructions": "Answer briefly.", "name": "a"}
    await agency(agents=[member]).generate("P")
    assert through.requests[0].messages == alone.requests[0].messages
    assert [m.role.value for m in through.requests[0].messages] == ["system", "user"]


def test_agency_wires_no_channels_it_refuses_the_option_by_name() -> None:
    """First table: agency() "wires no channels": it has no channels option."""
    with pytest.raises(AgencyConfigError) as caught:
        agency(agents={"a": {"model": model()}}, channels=["slack"])
    assert caught.value.details == {"option": "channels"}


async def test_send_returns_text_agent_calls_and_usage_and_stream_a_stream_result() -> None:
    """First table: "agency(): a result with text, agentCalls and usage from generate() and
    send(), an AgencyStreamResult from stream()"."""
    team = agency(agents={"a": {"model": model("A1", "A2")}, "b": {"model": model("B1", "B2")}})
    session = team.session("s")
    sent = await session.send("P")
    assert sent.text == "B1"
    assert [(c.agent, c.input, c.output) for c in sent.agent_calls] == [
        ("a", "P", "A1"),
        ("b", "Original task: P\n\nPrevious agent (a) output:\nA1", "B1"),
    ]
    assert sent.usage == ModelUsage(20, 10)
    assert isinstance(team.stream("Q"), AgencyStreamResult)
    streamed = session.stream("Q")
    assert isinstance(streamed, AgencyStreamResult)
    assert (await streamed.result()).text == "B2"


async def test_an_agency_session_keeps_its_history_even_with_history_false_members() -> None:
    """Line 5: "agency().session() always keeps it" (the session's message history)."""
    team = agency(agents={"a": {"model": model("A1", "A2"), "history": False}})
    session = team.session("s")
    await session.send("P1")
    await session.send("P2")
    assert conversation(await session.messages()) == [
        ("user", "P1"),
        ("assistant", "A1"),
        ("user", "P2"),
        ("assistant", "A2"),
    ]


async def test_stream_keeps_no_history() -> None:
    """Line 5: "the generate() and stream() methods of an agent or an agency keep none"."""
    member = model("A1", "A2")
    team = agency(agents={"a": {"model": member}})
    assert [t async for t in team.stream("P1").text_stream] == ["A1"]
    assert [t async for t in team.stream("P2").text_stream] == ["A2"]
    assert conversation(member.requests[1].messages) == [("user", "P2")]


# -- Multi-agent work / item 5: sessions -------------------------------------------------------


async def test_each_session_keeps_its_own_history_and_usage() -> None:
    """Spec: "agency().session() keeps per-session message history and usage totals"."""
    member = model("A1", "A2", "A3")
    team = agency(agents={"a": {"model": member}})
    one, two = team.session("one"), team.session("two")
    await one.send("P1")
    await two.send("Q1")
    await one.send("P2")
    assert conversation(member.requests[1].messages) == [("user", "Q1")]
    assert conversation(member.requests[2].messages) == [
        ("user", "P1"),
        ("assistant", "A1"),
        ("user", "P2"),
    ]
    assert conversation(await two.messages()) == [("user", "Q1"), ("assistant", "A2")]
    assert (one.usage(), two.usage()) == (ModelUsage(20, 10), ModelUsage(10, 5))


async def test_the_manager_and_a_delegated_members_first_call_get_the_earlier_turns() -> None:
    """Issue item 5: "the session's earlier turns reach, as earlier messages, the first call
    each member or manager gets in a send"."""
    delegate = ToolCall("d1", "delegate_to_w", {"task": "write it"})
    manager = ScriptedModel(["first answer", ScriptStep(tool_calls=[delegate]), "second answer"])
    writer = model("written")
    team = agency(agents={"w": {"model": writer}}, strategy="hierarchical", model=manager)
    session = team.session("s")
    await session.send("P1")
    result = await session.send("P2")
    earlier = [("user", "P1"), ("assistant", "first answer")]
    assert conversation(manager.requests[1].messages) == [*earlier, ("user", "P2")]
    assert conversation(writer.requests[0].messages) == [*earlier, ("user", "write it")]
    assert conversation(manager.requests[2].messages)[:3] == [*earlier, ("user", "P2")]
    assert (result.text, [c.agent for c in result.agent_calls]) == (
        "second answer",
        ["w", "manager"],
    )


@pytest.mark.parametrize("tier", ["session", "agency", "persistent"])
async def test_a_specialist_is_gone_next_send_whatever_emergent_tier_names(tier: str) -> None:
    """Spec: "each send() starts from the configured roster, so a specialist spawned during one
    call is gone in the next, whatever emergent.tier names."""
    tools_seen: list[list[str]] = []

    def manager(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> Any:
        tools_seen.append([t.name for t in tools])
        if len(tools_seen) == 1:
            return ScriptStep(
                tool_calls=[
                    ToolCall("s1", "spawn_specialist", {"role": "checker", "instructions": "C."})
                ]
            )
        return "answer"

    team = agency(
        agents={"w": {"model": model("w")}},
        strategy="hierarchical",
        model=ScriptedModel(manager),
        emergent={"enabled": True, "tier": tier},
    )
    session = team.session("s")
    first = await session.send("P1")
    second = await session.send("P2")
    assert (first.metadata["emergent_agents"], second.metadata["emergent_agents"]) == (
        ["checker"],
        [],
    )
    assert tools_seen == [
        ["delegate_to_w", "spawn_specialist"],
        ["delegate_to_w", "spawn_specialist", "delegate_to_checker"],
        ["delegate_to_w", "spawn_specialist"],
    ]


# -- line 139 / item 6: two budgets -------------------------------------------------------------


async def test_a_budget_that_is_both_the_agencys_and_the_members_is_charged_once() -> None:
    """Line 139: "A budget both draw on ... is charged once" (here: the very same budget)."""
    shared = SpendBudget(max_total_tokens=100_000)
    member = model("done")
    team = agency(agents={"a": agent(model=member, budget=shared)}, budget=shared)
    result = await team.generate("P")
    assert result.usage.total_tokens == 15
    assert shared.spent_tokens == 15


async def test_each_model_call_of_a_member_call_is_checked_against_both_budgets() -> None:
    """Line 139: a seated member "checks each call against the budget its team's call carries
    and against its own": the second step of one member call is refused by the member's own."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    member = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("t1", "ping", {})], usage=ModelUsage(4_150, 5)),
            ScriptStep("never", usage=ModelUsage(10, 5)),
        ]
    )
    # Each call's worst case is its prompt estimate plus its 100-token output cap: the first
    # fits the member's own 4,200 tokens, the second does not once the first spent 4,155.
    own = SpendBudget(max_total_tokens=4_200, budget_id="own")
    team_budget = SpendBudget(max_total_tokens=100_000, budget_id="team")
    team = agency(
        agents={"a": agent(model=member, budget=own, tools=[ping], max_tokens=100)},
        budget=team_budget,
    )
    result = await team.generate("P")
    assert len(member.requests) == 1
    assert result.metadata["budget_exhausted"]["agent"] == "a"
    assert (own.spent_tokens, team_budget.spent_tokens) == (4_155, 4_155)


async def test_a_team_launched_from_a_seat_draws_on_both_budgets() -> None:
    """Line 139: "a team the member launches from that seat draws on both as well"."""
    inner_member = model("inner")
    inner = agency(agents={"i": {"model": inner_member}})

    @tool
    async def launch(task: str) -> str:
        """Run the inner team."""
        return (await inner.generate(task)).text

    outer_member = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[ToolCall("l1", "launch", {"task": "T"})], usage=ModelUsage(10, 5)
            ),
            ScriptStep("outer", usage=ModelUsage(10, 5)),
        ]
    )
    own = SpendBudget(max_total_tokens=100_000, budget_id="own")
    team_budget = SpendBudget(max_total_tokens=100_000, budget_id="team")
    team = agency(
        agents={"o": agent(model=outer_member, budget=own, tools=[launch])}, budget=team_budget
    )
    assert (await team.generate("P")).text == "outer"
    assert (own.spent_tokens, team_budget.spent_tokens) == (45, 45)
