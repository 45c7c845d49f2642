"""Budgets hold under concurrency (issue 11, item 7; DESIGN §5.18).

A budget that admits a call reserves its worst case (the prompt estimate plus the output cap,
priced) until the call settles: calls running at once never pass a cap together. Each call below
is held by a gate until every call of the batch has been admitted or refused, so all the
admitted calls are in flight at once: the hardest case for a budget.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos import ModelUsage, SpendBudget, generate_text, gmi, stream_text
from agentos.core.messages import Message
from agentos.llm import CompletionOptions, ModelRequest, ToolDefinition
from agentos.llm.budget import (
    BudgetedModel,
    CostCapExceededError,
    JointBudget,
    SpendCall,
    SpendLimitError,
    SpendLimitInfo,
)
from agentos.llm.token_estimate import estimate_prompt_tokens
from agentos.testing import ScriptedModel, ScriptStep
from fakes.priced_model import price, priced_catalog


@pytest.fixture(autouse=True)
def _priced_model() -> Iterator[None]:
    with priced_catalog():
        yield


Outcome = Literal["finish", "fail_unbilled", "fail_billed", "abort"]


@dataclass(frozen=True)
class Plan:
    """What one call does once admitted: its output cap and how it ends."""

    max_tokens: int
    outcome: Outcome = "finish"
    share: float = 1.0  # the share of the output cap the provider bills


class Gate:
    """Holds every admitted call until each call of the batch is admitted or refused."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.admitted = 0
        self.refused: list[SpendLimitInfo] = []
        self.open = asyncio.Event()
        self.first_admitted = asyncio.Event()

    def _settled(self) -> None:
        if self.admitted + len(self.refused) == self.calls:
            self.open.set()

    def refuse(self, info: SpendLimitInfo) -> None:
        """An ``on_limit_reached``: a refusal settles one call of the batch."""
        self.refused.append(info)
        self._settled()

    async def admit(self) -> None:
        self.admitted += 1
        self.first_admitted.set()
        self._settled()
        await self.open.wait()


def gated_model(gate: Gate, plans: Sequence[Plan]) -> ScriptedModel:
    """Call ``k`` (prompt ``"call k"``) plays ``plans[k]`` once the gate opens."""

    async def play(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        await gate.admit()
        plan = plans[int(messages[-1].text.split()[1])]
        prompt = estimate_prompt_tokens(ModelRequest(list(messages)))
        billed = ModelUsage(prompt, math.floor(plan.max_tokens * plan.share))
        if plan.outcome == "fail_unbilled":
            return ScriptStep.fail(400, "refused")
        if plan.outcome == "fail_billed":
            return ScriptStep.fail(400, "refused", usage=billed)
        return ScriptStep(text="word word word", usage=billed)

    return ScriptedModel(play, provider_id="acme", model_id="cheap")


async def call(model: ScriptedModel, index: int, plan: Plan, budget: SpendBudget) -> str:
    """Run call ``index`` through the public API; its outcome, or ``refused``."""
    options: dict[str, Any] = {
        "model": model,
        "budget": budget,
        "max_tokens": plan.max_tokens,
        "fallback_providers": [],
    }
    try:
        if plan.outcome == "abort":
            stream = stream_text(f"call {index}", **options)
            async for _ in stream.text_stream:
                break  # leave after the first delta: charged an estimate (DESIGN §5.19)
            usage = await stream.usage
            assert usage.estimated
        else:
            await generate_text(f"call {index}", **options)
    except SpendLimitError:
        return "refused"
    except Exception:
        assert plan.outcome.startswith("fail")
    return plan.outcome


def assert_within(budget: SpendBudget) -> None:
    if budget.max_cost_usd is not None:
        assert budget.spent_usd <= budget.max_cost_usd
    if budget.max_total_tokens is not None:
        assert budget.spent_tokens <= budget.max_total_tokens
    assert (budget.reserved_tokens, budget.reserved_usd) == (0, 0)  # every hold ended


# --- the case: 50 sends under a budget sized for 5 calls ---------------------------------


async def test_fifty_concurrent_sends_under_a_budget_for_five_spend_at_most_five_calls() -> None:
    # "call 7" is 2 prompt tokens; with max_tokens=100 a call's worst case is 2 + 100 tokens.
    worst = price(ModelUsage(2, 100))
    budget_seen: list[SpendLimitInfo] = []
    gate = Gate(50)

    def on_limit(info: SpendLimitInfo) -> None:
        budget_seen.append(info)
        gate.refuse(info)

    budget = SpendBudget(max_cost_usd=5 * worst, on_limit_reached=on_limit, budget_id="team")
    plans = [Plan(max_tokens=100)] * 50
    model = gated_model(gate, plans)
    outcomes = await asyncio.gather(*(call(model, k, plans[k], budget) for k in range(50)))

    assert outcomes.count("finish") == 5
    assert outcomes.count("refused") == 45
    assert model.calls == 5
    assert budget.spent_usd == pytest.approx(5 * worst)
    assert budget.spent_tokens == 5 * 102
    assert_within(budget)
    # Every refusal is the budget's own, naming what calls in flight hold.
    assert len(budget_seen) == 45
    for info in budget_seen:
        assert (info.cap, info.call, info.budget_id) == ("max_cost_usd", "generate_text", "team")
        assert info.spent + info.reserved + (info.requested or 0) > info.limit


async def test_a_refusal_while_calls_are_in_flight_carries_the_budgets_message() -> None:
    gate = Gate(2)
    budget = SpendBudget(max_total_tokens=150, on_limit_reached=gate.refuse)
    plans = [Plan(max_tokens=100), Plan(max_tokens=100)]
    model = gated_model(gate, plans)
    first = asyncio.create_task(call(model, 0, plans[0], budget))
    await gate.first_admitted.wait()
    with pytest.raises(CostCapExceededError) as caught:
        await generate_text("call 1", model=model, budget=budget, max_tokens=100)
    assert caught.value.message == (
        "the spend budget refused generate_text on acme:cheap: its worst case of 102 tokens "
        "(2 prompt + 100 output) on top of 0 spent and 102 reserved by calls in flight would "
        "exceed the max_total_tokens of 150"
    )
    assert caught.value.info.reserved == 102
    assert caught.value.details["reserved"] == 102
    assert await first == "finish"
    assert (budget.spent_tokens, budget.reserved_tokens) == (102, 0)


async def test_a_call_that_fails_unbilled_releases_its_reservation() -> None:
    budget = SpendBudget(max_total_tokens=110)
    model = ScriptedModel(
        [ScriptStep.fail(400, "refused"), ScriptStep("ok", usage=ModelUsage(2, 1))],
        provider_id="acme",
        model_id="cheap",
    )
    with pytest.raises(Exception, match="refused"):
        await generate_text("call 0", model=model, budget=budget, max_tokens=100)
    assert (budget.spent_tokens, budget.reserved_tokens) == (0, 0)
    # The whole cap is free again for the next call.
    result = await generate_text("call 1", model=model, budget=budget, max_tokens=100)
    assert result.text == "ok"
    assert (budget.spent_tokens, budget.reserved_tokens) == (3, 0)


async def test_an_aborted_call_settles_its_reservation_at_the_estimate() -> None:
    budget = SpendBudget(max_total_tokens=1000)
    go_on = asyncio.Event()
    model = ScriptedModel(
        [ScriptStep(text=["Once ", "upon"], wait=go_on, wait_at=1)],
        provider_id="acme",
        model_id="cheap",
    )
    stream = stream_text("call 0", model=model, budget=budget, max_tokens=100)
    async for delta in stream.text_stream:
        assert delta == "Once "
        assert budget.reserved_tokens == 102  # held while the step streams
        break
    usage = await stream.usage
    # "call 0" is 2 prompt tokens, "Once " 2 output tokens: estimated (DESIGN §5.19).
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (2, 2, True)
    assert (budget.spent_tokens, budget.reserved_tokens) == (4, 0)


# --- parents and joint budgets reserve on every budget they draw on ------------------------------


async def test_children_of_one_parent_hold_their_calls_on_the_parent_too() -> None:
    worst = ModelUsage(2, 100).total_tokens
    gate = Gate(20)
    parent = SpendBudget(max_total_tokens=3 * worst, on_limit_reached=gate.refuse)
    children = [SpendBudget(max_total_tokens=10 * worst, parent=parent) for _ in range(2)]
    plans = [Plan(max_tokens=100)] * 20
    model = gated_model(gate, plans)
    outcomes = await asyncio.gather(*(call(model, k, plans[k], children[k % 2]) for k in range(20)))
    assert outcomes.count("finish") == 3
    assert parent.spent_tokens == 3 * worst
    assert sum(child.spent_tokens for child in children) == 3 * worst
    for budget in (parent, *children):
        assert_within(budget)


async def test_a_joint_budget_reserves_on_each_budget_it_joins() -> None:
    shared = SpendBudget(max_total_tokens=1000)
    team = SpendBudget(max_total_tokens=250, parent=shared)
    own = SpendBudget(max_total_tokens=1000, parent=shared)
    joint = JointBudget(team, own)
    reservation = joint.reserve(SpendCall("acme", "cheap", 2, 100))
    # Held once on each budget reached, the shared parent included.
    assert [b.reserved_tokens for b in (shared, team, own)] == [102, 102, 102]
    joint.reserve(SpendCall("acme", "cheap", 2, 100))
    with pytest.raises(CostCapExceededError) as caught:
        joint.reserve(SpendCall("acme", "cheap", 2, 100))
    assert caught.value.info.reserved == 204
    priced = reservation.settle(ModelUsage(2, 10), provider_id="acme", model_id="cheap")
    assert priced.cost_usd == price(ModelUsage(2, 10))
    assert [b.spent_tokens for b in (shared, team, own)] == [12, 12, 12]
    assert [b.reserved_tokens for b in (shared, team, own)] == [102, 102, 102]


async def test_a_budgeted_model_under_a_joint_budget_settles_once_on_every_budget() -> None:
    shared = SpendBudget()
    team, own = SpendBudget(parent=shared), SpendBudget(parent=shared)
    model = BudgetedModel(
        ScriptedModel(["hi"], provider_id="acme", model_id="cheap"), JointBudget(team, own)
    )
    request = ModelRequest([Message.user("call 0")], options=CompletionOptions(max_tokens=50))
    [chunk async for chunk in model.stream(request)]
    assert [b.spent_tokens for b in (shared, team, own)] == [3, 3, 3]  # 2 prompt + 1 output
    assert [b.reserved_tokens for b in (shared, team, own)] == [0, 0, 0]


def test_a_reservation_ends_once() -> None:
    budget = SpendBudget(max_total_tokens=500)
    reservation = budget.reserve(SpendCall("acme", "cheap", 10, 90))
    assert (reservation.held, reservation.tokens, budget.remaining_tokens) == (True, 100, 400)
    reservation.settle(ModelUsage(10, 5), provider_id="acme", model_id="cheap")
    assert (reservation.held, budget.spent_tokens, budget.reserved_tokens) == (False, 15, 0)
    reservation.release()  # nothing left to release
    assert budget.spent_tokens == 15
    with pytest.raises(RuntimeError, match="already been settled"):
        reservation.settle(ModelUsage(10, 5), provider_id="acme", model_id="cheap")
    released = budget.reserve(SpendCall("acme", "cheap", 10, 90))
    released.release()
    assert (budget.spent_tokens, budget.reserved_tokens) == (15, 0)


def test_a_check_counts_reservations_but_holds_nothing() -> None:
    budget = SpendBudget(max_total_tokens=150)
    budget.reserve(SpendCall("acme", "cheap", 2, 100))
    with pytest.raises(CostCapExceededError):
        budget.check(SpendCall("acme", "cheap", 2, 100))
    budget.check(SpendCall("acme", "cheap", 2, 40))
    assert budget.reserved_tokens == 102


# --- the property: N concurrent calls, any cap, spend within the cap -----------------------------

_PLANS = st.lists(
    st.builds(
        Plan,
        max_tokens=st.integers(min_value=1, max_value=400),
        # Mostly calls that bill their whole worst case: the ones that press on a cap.
        outcome=st.sampled_from(["finish", "finish", "fail_unbilled", "fail_billed", "abort"]),
        share=st.sampled_from([1.0, 0.5, 0.0]) | st.floats(min_value=0, max_value=1),
    ),
    min_size=2,
    max_size=40,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plans=_PLANS,
    caps=st.sampled_from(["cost", "tokens", "both"]),
    # The cap as a share of what all the calls could cost together, so many press on it.
    cost_share=st.integers(min_value=0, max_value=100),
    token_share=st.integers(min_value=0, max_value=100),
)
def test_concurrent_calls_never_pass_any_cap(
    plans: list[Plan], caps: str, cost_share: int, token_share: int
) -> None:
    worst = [ModelUsage(2, plan.max_tokens) for plan in plans]  # "call k" is 2 tokens (k < 100)
    all_cost = sum(price(usage) for usage in worst)
    all_tokens = sum(usage.total_tokens for usage in worst)
    cost = None if caps == "tokens" else all_cost * cost_share / 100
    tokens = None if caps == "cost" else all_tokens * token_share // 100

    async def run() -> None:
        gate = Gate(len(plans))
        budget = SpendBudget(cost, tokens, on_limit_reached=gate.refuse, budget_id="b")
        model = gated_model(gate, plans)
        outcomes = await asyncio.gather(
            *(call(model, k, plan, budget) for k, plan in enumerate(plans))
        )
        assert_within(budget)
        assert outcomes.count("refused") == len(gate.refused)
        assert gate.admitted == model.calls == len(plans) - len(gate.refused)
        for info in gate.refused:
            assert info.budget_id == "b"
            assert info.requested is not None
            assert info.spent + info.reserved + info.requested > info.limit

    asyncio.run(run())


async def test_concurrent_gmi_sessions_hold_to_the_agents_budget() -> None:
    sessions = 12
    gate = Gate(sessions)
    budget = SpendBudget(max_total_tokens=260, on_limit_reached=gate.refuse)
    plans = [Plan(max_tokens=50)] * sessions
    model = gated_model(gate, plans)
    agent = gmi(model=model, budget=budget, max_tokens=50)

    async def send(k: int) -> str:
        try:
            await agent.session(f"s{k}").send(f"call {k}")
        except Exception as error:
            return str(error)
        return "sent"

    outcomes = await asyncio.gather(*(send(k) for k in range(sessions)))
    # Every session sends the same prompt size: each step's worst case is the same.
    worst = estimate_prompt_tokens(model.requests[0]) + 50
    admitted = 260 // worst
    assert 0 < admitted < sessions
    assert outcomes.count("sent") == model.calls == admitted
    refusals = [outcome for outcome in outcomes if outcome != "sent"]
    assert len(refusals) == sessions - admitted
    # The turn's error carries the budget's message (spec: Spend budget).
    assert all("the spend budget refused gmi.step on acme:cheap" in text for text in refusals)
    assert budget.spent_tokens == admitted * worst
    assert_within(budget)
    assert {info.call for info in gate.refused} == {"gmi.step"}
    await agent.close()
