"""The member-call plumbing agency() builds on (issue 14, contract A), through the public API.

Spec line 119: ``agent.generate()`` / ``stream()`` take "the tool-approval gate agency() passes
with each call to a member"; line 139: "A seat's turn is held to two budgets ... an ancestor
shared by both charged once". On both engines (a plain agent and a GMI agent): ``approve_tool``
asked after ``on_before_tool_execution``, a ``JointBudget`` as a call's ``budget``, the
agent's ``budget`` property; and a `ToolBox` whose tools added during a call are offered from
the next model step, on ``generate_text``, a plain agent and a GMI agent.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos import (
    SKIP_TOOL,
    GMIError,
    ModelUsage,
    ToolCall,
    agent,
    generate_text,
)
from agentos.api import Agent, ApprovalDecision, ApprovalRequest, GenerateTextResult
from agentos.api.approvals import ask
from agentos.llm.budget import JointBudget, SpendBudget, SpendLimitError
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import Tool, ToolBox, not_approved_result, tool

ENGINES = ["legacy", "gmi"]
USAGE = ModelUsage(prompt_tokens=10, completion_tokens=5)


def _build(runtime: str, model: ScriptedModel, **options: Any) -> Agent:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing set here is accepted without being applied
        return agent(model=model, runtime=runtime, fallback_providers=[], **options)  # type: ignore[arg-type]


def _counting_add() -> tuple[Tool, list[dict[str, int]]]:
    ran: list[dict[str, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first
            b: the second
        """
        ran.append({"a": a, "b": b})
        return a + b

    return add, ran


def _calls_add_then(text: str, *calls: ToolCall) -> ScriptedModel:
    return ScriptedModel([ScriptStep(tool_calls=list(calls), usage=USAGE), text])


def _tool_messages(model: ScriptedModel, request: int) -> list[str]:
    """The tool results the model was sent in request ``request``, as text."""
    messages = model.requests[request].messages
    return [str(m.tool_result.output) for m in messages if m.tool_result is not None]


# -- approve_tool --------------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ENGINES)
async def test_the_gate_is_asked_after_the_hook_with_the_arguments_it_left(runtime: str) -> None:
    add, ran = _counting_add()
    asked: list[ToolCall] = []

    def vet(ctx: Any) -> Any:
        return SKIP_TOOL if ctx.args["a"] == 0 else {"a": ctx.args["a"], "b": 100}

    def approve(call: ToolCall) -> bool:
        asked.append(call)
        return True

    model = _calls_add_then(
        "done", ToolCall("c1", "add", {"a": 0, "b": 1}), ToolCall("c2", "add", {"a": 1, "b": 1})
    )
    built = _build(runtime, model, tools=[add], on_before_tool_execution=vet)
    result = await built.generate("Add.", approve_tool=approve)
    assert result.text == "done"
    assert asked == [ToolCall("c2", "add", {"a": 1, "b": 100})]  # the skipped call never asked
    assert ran == [{"a": 1, "b": 100}]
    assert [r.output for r in result.tool_results][1] == 101


@pytest.mark.parametrize("runtime", ENGINES)
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (False, "no reason given"),
        (ApprovalDecision(False), "no reason given"),
        (ApprovalDecision(False, reason="too risky"), "too risky"),
    ],
)
async def test_a_refused_call_is_skipped_and_the_model_told_why(
    runtime: str, answer: bool | ApprovalDecision, reason: str
) -> None:
    add, ran = _counting_add()
    model = _calls_add_then("ok", ToolCall("c1", "add", {"a": 2, "b": 3}))
    built = _build(runtime, model, tools=[add])
    result = await built.generate("Add.", approve_tool=lambda call: answer)
    expected = f"Tool call 'add' was not approved: {reason}"
    assert ran == []
    assert [(r.output, r.is_error) for r in result.tool_results] == [(expected, True)]
    assert _tool_messages(model, 1) == [expected]
    assert result.text == "ok"


@pytest.mark.parametrize("runtime", ENGINES)
async def test_a_gate_that_raises_does_not_approve(runtime: str) -> None:
    add, ran = _counting_add()

    def gate(call: ToolCall) -> bool:
        raise RuntimeError("boom")

    model = _calls_add_then("ok", ToolCall("c1", "add", {"a": 2, "b": 3}))
    result = await _build(runtime, model, tools=[add]).generate("Add.", approve_tool=gate)
    assert ran == []
    assert _tool_messages(model, 1) == [
        "Tool call 'add' was not approved: the approval handler raised RuntimeError('boom')"
    ]
    assert result.tool_results[0].is_error


@pytest.mark.parametrize("runtime", ENGINES)
async def test_an_async_gate_decides_each_call(runtime: str) -> None:
    add, ran = _counting_add()

    async def gate(call: ToolCall) -> ApprovalDecision:
        await asyncio.sleep(0)
        return ApprovalDecision(call.arguments["a"] != 9, reason="nine is not allowed")

    model = _calls_add_then(
        "ok", ToolCall("c1", "add", {"a": 9, "b": 1}), ToolCall("c2", "add", {"a": 4, "b": 1})
    )
    built = _build(runtime, model, tools=[add])
    result = await built.generate("Add.", approve_tool=gate)
    assert ran == [{"a": 4, "b": 1}]
    assert _tool_messages(model, 1) == [
        "Tool call 'add' was not approved: nine is not allowed",
        "5",
    ]
    assert [r.is_error for r in result.tool_results] == [True, False]


@pytest.mark.parametrize("runtime", ENGINES)
async def test_streams_and_session_turns_take_the_gate(runtime: str) -> None:
    add, ran = _counting_add()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 1})]),
            "streamed",
            ScriptStep(tool_calls=[ToolCall("c2", "add", {"a": 2, "b": 2})]),
            "sent",
        ]
    )
    built = _build(runtime, model, tools=[add])
    stream = built.stream("Add.", approve_tool=lambda call: False)
    assert [part async for part in stream.text_stream] == ["streamed"]
    session = built.session("s1")
    result = await session.send("Add again.", approve_tool=lambda call: False)
    assert result.text == "sent"
    assert ran == []
    assert _tool_messages(model, 3)[-1] == "Tool call 'add' was not approved: no reason given"
    # The gate was the turn's own: a turn without one runs its calls.
    model2 = _calls_add_then("free", ToolCall("c3", "add", {"a": 3, "b": 3}))
    again = _build(runtime, model2, tools=[add])
    assert (await again.session("s2").send("Add.")).tool_results[0].output == 6


@pytest.mark.parametrize("runtime", ENGINES)
async def test_a_gate_that_is_not_a_function_is_refused_by_name(runtime: str) -> None:
    model = ScriptedModel(["never"])
    built = _build(runtime, model)
    with pytest.raises(GMIError) as caught:
        await built.generate("Hi", approve_tool="yes")
    assert caught.value.details == {"option": "approve_tool"}
    with pytest.raises(GMIError) as caught:
        await built.session("s").send("Hi", approve_tool=3)
    assert caught.value.details == {"option": "approve_tool"}
    assert model.calls == 0


async def test_ask_normalises_every_kind_of_answer() -> None:
    request = ApprovalRequest("agent", "writer", {"input": "draft it"})

    async def later(req: ApprovalRequest) -> bool:
        return bool(req.details["input"] == "draft it")

    def broken(req: ApprovalRequest) -> bool:
        raise ValueError("no human")

    assert await ask(lambda req: True, request) == ApprovalDecision(True)
    assert await ask(lambda req: False, request) == ApprovalDecision(False)
    assert await ask(later, request) == ApprovalDecision(True)
    decision = ApprovalDecision(True, instructions="Be brief.")
    assert await ask(lambda req: decision, request) is decision
    assert await ask(broken, request) == ApprovalDecision(
        False, reason="the approval handler raised ValueError('no human')"
    )
    odd = await ask(lambda req: "yes", request)  # type: ignore[arg-type,return-value]
    assert odd == ApprovalDecision(
        False, reason="the approval handler returned str, not a decision"
    )


# -- budgets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ENGINES)
async def test_a_joint_budget_charges_both_and_a_shared_ancestor_once(runtime: str) -> None:
    host = SpendBudget(max_total_tokens=100_000, budget_id="host")
    team = SpendBudget(parent=host, budget_id="team")
    own = SpendBudget(parent=host, budget_id="own")
    model = ScriptedModel([ScriptStep("a", usage=USAGE), ScriptStep("b", usage=USAGE)])
    built = _build(runtime, model, budget=own)
    assert built.budget is own
    await built.generate("Hi", budget=JointBudget(team, own))
    assert [b.spent_tokens for b in (team, own, host)] == [15, 15, 15]
    await built.session("s").send("Hi", budget=JointBudget(team, own))
    assert [b.spent_tokens for b in (team, own, host)] == [30, 30, 30]


@pytest.mark.parametrize("runtime", ENGINES)
@pytest.mark.parametrize("refusing", ["team", "own"])
async def test_a_joint_budget_refuses_when_either_refuses(runtime: str, refusing: str) -> None:
    # The scripted model's output cap is 4,096 tokens: a 1,000-token cap refuses any call.
    caps = {"team": 100_000, "own": 100_000, refusing: 1_000}
    team = SpendBudget(max_total_tokens=caps["team"], budget_id="team")
    own = SpendBudget(max_total_tokens=caps["own"], budget_id="own")
    model = ScriptedModel(["never"])
    built = _build(runtime, model, budget=own)
    with pytest.raises(SpendLimitError) as caught:
        await built.generate("Hi", budget=JointBudget(team, own))
    assert caught.value.info.budget_id == refusing
    assert model.calls == 0
    assert (team.spent_tokens, own.spent_tokens) == (0, 0)


@pytest.mark.parametrize("runtime", ENGINES)
async def test_the_budget_property_is_the_agents_own(runtime: str) -> None:
    model = ScriptedModel([])
    assert _build(runtime, model).budget is None
    made = _build(runtime, model, budget={"max_total_tokens": 500}).budget
    assert isinstance(made, SpendBudget)
    assert made.max_total_tokens == 500
    given = SpendBudget(max_total_tokens=7)
    assert _build(runtime, model, budget=given).budget is given


async def test_generate_text_takes_a_joint_budget_and_refuses_another_object() -> None:
    first, second = SpendBudget(budget_id="first"), SpendBudget(budget_id="second")
    model = ScriptedModel([ScriptStep("a", usage=USAGE)])
    await generate_text("Hi", model=model, budget=JointBudget(first, second))
    assert (first.spent_tokens, second.spent_tokens) == (15, 15)
    with pytest.raises(GMIError) as caught:
        await generate_text("Hi", model=model, budget="cheap")  # type: ignore[arg-type]
    assert caught.value.details == {"option": "budget"}


# -- ToolBox ---------------------------------------------------------------------------------------


def test_a_toolbox_keeps_its_tools_in_order_and_refuses_a_duplicate_name() -> None:
    add, _ = _counting_add()

    def shout(text: str) -> str:
        """Shout it.

        Args:
            text: what to shout
        """
        return text.upper()

    box = ToolBox([add])
    added = box.add(shout)
    assert isinstance(added, Tool)
    assert box.names() == ["add", "shout"]
    assert [t.name for t in box] == ["add", "shout"]
    assert len(box) == 2
    assert added in box
    assert box.get("shout") is added
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        box.add(add)
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        ToolBox([add, add])
    assert box.names() == ["add", "shout"]


_NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), max_size=12)


def _named(name: str) -> Tool:
    return Tool(name, f"The {name} tool.", {"type": "object", "properties": {}}, lambda: name)


@given(_NAMES)
def test_a_box_holds_each_name_once_in_the_order_first_added(names: list[str]) -> None:
    box = ToolBox()
    for name in names:
        if box.get(name) is not None:
            with pytest.raises(ValueError, match=f"^two tools are named '{name}'$"):
                box.add(_named(name))
        else:
            box.add(_named(name))
    assert box.names() == list(dict.fromkeys(names))
    assert len(box) == len(set(names))
    assert [t.name for t in box.definitions()] == box.names()


@given(st.one_of(st.none(), st.text(max_size=30)))
def test_a_refusal_names_the_tool_and_its_reason(reason: str | None) -> None:
    result = not_approved_result(ToolCall("c9", "send_mail", {}), reason)
    why = reason if reason is not None and reason.strip() else "no reason given"
    assert result.output == f"Tool call 'send_mail' was not approved: {why}"
    assert result.is_error
    assert result.tool_call_id == "c9"


def _growing_box() -> tuple[ToolBox, list[str]]:
    """A box whose ``grow`` tool adds ``extra``; ``extra`` records its runs."""
    ran: list[str] = []
    box = ToolBox()

    @tool
    def extra(word: str) -> str:
        """Echo a word.

        Args:
            word: the word
        """
        ran.append(word)
        return f"extra:{word}"

    @tool
    def grow() -> str:
        """Add the extra tool."""
        box.add(extra)
        return "added extra"

    box.add(grow)
    return box, ran


def _grow_script() -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("g1", "grow", {})]),
            ScriptStep(tool_calls=[ToolCall("e1", "extra", {"word": "hi"})]),
            "finished",
        ]
    )


def _offered(model: ScriptedModel) -> list[list[str]]:
    return [[t.name for t in request.tools] for request in model.requests]


def _check_grown(model: ScriptedModel, result: GenerateTextResult, ran: list[str]) -> None:
    assert result.text == "finished"
    assert _offered(model) == [["grow"], ["grow", "extra"], ["grow", "extra"]]
    assert ran == ["hi"]
    assert [r.output for r in result.tool_results] == ["added extra", "extra:hi"]


async def test_generate_text_offers_a_tool_added_during_the_call_from_the_next_step() -> None:
    box, ran = _growing_box()
    model = _grow_script()
    result = await generate_text("Grow.", model=model, tools=box)
    _check_grown(model, result, ran)


@pytest.mark.parametrize("runtime", ENGINES)
async def test_an_agent_offers_a_tool_added_during_a_call_from_the_next_step(runtime: str) -> None:
    box, ran = _growing_box()
    model = _grow_script()
    built = _build(runtime, model, tools=box)
    _check_grown(model, await built.generate("Grow."), ran)


@pytest.mark.parametrize("runtime", ENGINES)
async def test_a_session_turn_reads_the_box_at_each_step(runtime: str) -> None:
    box, ran = _growing_box()
    model = _grow_script()
    built = _build(runtime, model, tools=box)
    _check_grown(model, await built.session("s").send("Grow."), ran)


@pytest.mark.parametrize(
    "call", [lambda box: generate_text("x", model=ScriptedModel([]), tools=box, tool_choice="nope")]
)
async def test_tool_choice_is_checked_against_the_box(call: Callable[[ToolBox], Any]) -> None:
    box, _ = _growing_box()
    with pytest.raises(GMIError) as caught:
        await call(box)
    assert caught.value.details == {"option": "tool_choice"}
    model = ScriptedModel(["fine"])
    result = await generate_text("x", model=model, tools=box, tool_choice="grow")
    assert result.text == "fine"
    assert model.requests[0].options.tool_choice == "grow"


async def test_a_box_passes_the_window_check_of_a_model_the_catalog_knows() -> None:
    # A known model's window is checked before the turn, with the box's tools counted in.
    box, ran = _growing_box()
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("g1", "grow", {})]), "done"],
        provider_id="openai",
        model_id="gpt-4o-mini",
    )
    result = await _build("legacy", model, tools=box).session("s").send("Grow.")
    assert result.text == "done"
    assert _offered(model) == [["grow"], ["grow", "extra"]]
    assert ran == []


@pytest.mark.parametrize("outer", ENGINES)
@pytest.mark.parametrize("inner", ENGINES)
async def test_a_gate_is_the_calls_own_never_inherited_by_a_nested_call(
    outer: str, inner: str
) -> None:
    add, ran = _counting_add()
    inner_model = _calls_add_then("inner done", ToolCall("i1", "add", {"a": 5, "b": 5}))
    member = _build(inner, inner_model, tools=[add])

    @tool
    async def ask_member() -> str:
        """Ask the member."""
        return (await member.generate("Add.")).text

    outer_model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("o1", "ask_member", {})]), "outer done"]
    )
    manager = _build(outer, outer_model, tools=[ask_member])
    asked: list[str] = []

    def gate(call: ToolCall) -> bool:
        asked.append(call.name)
        return True

    result = await manager.generate("Delegate.", approve_tool=gate)
    assert result.text == "outer done"
    assert asked == ["ask_member"]  # the member's call ran ungated
    assert ran == [{"a": 5, "b": 5}]


@pytest.mark.parametrize("runtime", ENGINES)
async def test_concurrent_calls_keep_their_own_gates(runtime: str) -> None:
    add, ran = _counting_add()

    def script(messages: Any, tools: Any, options: Any) -> ScriptStep | str:
        if any(m.tool_result is not None for m in messages):
            return "done"
        return ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})])

    built = _build(runtime, ScriptedModel(script), tools=[add])
    refused, approved = await asyncio.gather(
        built.generate("A", approve_tool=lambda call: ApprovalDecision(False, reason="no")),
        built.generate("B", approve_tool=lambda call: True),
    )
    assert refused.tool_results[0].output == "Tool call 'add' was not approved: no"
    assert approved.tool_results[0].output == 3
    assert ran == [{"a": 1, "b": 2}]
