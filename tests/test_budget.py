"""`SpendBudget`: caps, the worst-case check, charges, ancestors, diamonds and the wrapper."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core import GMIError, GMIErrorCode, Message, ModelUsage, ToolCall
from agentos.llm import (
    CompletionOptions,
    FinishChunk,
    ModelRequest,
    ProviderError,
    TextDelta,
    ToolDefinition,
    UsageChunk,
    catalog,
)
from agentos.llm.budget import (
    DEFAULT_OUTPUT_CAP,
    BudgetedModel,
    BudgetLike,
    CostCapExceededError,
    JointBudget,
    SpendBudget,
    SpendCall,
    SpendLimitError,
    SpendLimitInfo,
    UnpricedModelError,
)
from agentos.llm.catalog import ModelInfo
from agentos.llm.token_estimate import estimate_prompt_tokens
from agentos.testing import ScriptedModel, ScriptStep

# $1 per million prompt tokens, $2 per million output tokens: 1,000 + 1,000 tokens cost $0.003.
CHEAP = ModelInfo(
    provider_id="acme",
    model_id="cheap",
    context_window=8000,
    max_output_tokens=1000,
    input_per_million=1.0,
    output_per_million=2.0,
)
# No output limit in the catalog: the default cap applies.
OPEN = ModelInfo(
    provider_id="acme",
    model_id="open",
    context_window=8000,
    input_per_million=0.5,
    output_per_million=1.5,
)
UNPRICED = ModelInfo(
    provider_id="acme", model_id="unpriced", context_window=8000, max_output_tokens=500
)
MODELS = {(m.provider_id, m.model_id): m for m in (CHEAP, OPEN, UNPRICED)}


@pytest.fixture(autouse=True)
def _priced_models() -> Iterator[None]:
    with patch.dict(catalog._CATALOG, MODELS):
        yield


def cheap_call(
    prompt: int = 1000, max_tokens: int | None = None, name: str = "gmi.step"
) -> SpendCall:
    return SpendCall("acme", "cheap", prompt, max_tokens, name)


def charge(budget: BudgetLike, prompt: int, completion: int, model: str = "cheap") -> ModelUsage:
    return budget.record(ModelUsage(prompt, completion), provider_id="acme", model_id=model)


# --- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["max_cost_usd", "max_total_tokens"])
@pytest.mark.parametrize("value", [-1, -0.01, float("nan"), "5", True, False, [1], None.__class__])
def test_bad_caps_are_refused_by_name(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        SpendBudget(**{field: value})  # type: ignore[arg-type]


def test_caps_may_be_zero_or_infinite() -> None:
    zero = SpendBudget(0, 0)
    assert (zero.max_cost_usd, zero.max_total_tokens) == (0, 0)
    unbounded = SpendBudget(math.inf, math.inf)
    assert unbounded.remaining_usd is None
    assert unbounded.remaining_tokens is None
    unbounded.check(SpendCall("acme", "unpriced", 10**9))  # an infinite cap caps nothing


def test_any_real_number_is_a_cap() -> None:
    budget = SpendBudget(Fraction(1, 2), 1000)  # type: ignore[arg-type]  # typed float, takes any Real
    assert budget.max_cost_usd == 0.5
    assert isinstance(budget.max_cost_usd, float)
    assert budget.max_total_tokens == 1000
    assert isinstance(budget.max_total_tokens, int)


def test_no_caps_allow_everything_and_still_count() -> None:
    budget = SpendBudget()
    budget.check(SpendCall("acme", "unpriced", 10**9))
    charge(budget, 10, 5, model="unpriced")
    assert budget.spent_tokens == 15
    assert budget.spent_usd == 0.0
    assert budget.unpriced_calls == 1
    assert (budget.remaining_usd, budget.remaining_tokens) == (None, None)


def test_other_bad_arguments() -> None:
    with pytest.raises(ValueError, match="on_limit_reached"):
        SpendBudget(1, on_limit_reached="print")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="parent"):
        SpendBudget(1, parent="host")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="parent"):
        SpendBudget(1, parent=[SpendBudget(), object()])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="budget_id"):
        SpendBudget(1, budget_id=7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="JointBudget"):
        JointBudget(SpendBudget(), "own")  # type: ignore[arg-type]


# --- the call ---------------------------------------------------------------------------------


def test_the_output_cap_is_max_tokens_then_the_catalog_then_the_default() -> None:
    assert SpendCall("acme", "cheap", 0, 250).output_cap == 250
    assert SpendCall("acme", "cheap", 0).output_cap == 1000
    assert SpendCall("acme", "open", 0).output_cap == DEFAULT_OUTPUT_CAP == 4096
    assert SpendCall("elsewhere", "unknown", 0).output_cap == DEFAULT_OUTPUT_CAP
    assert SpendCall("acme", "cheap", 30).worst_case == ModelUsage(30, 1000)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("prompt_tokens", {"prompt_tokens": -1}),
        ("prompt_tokens", {"prompt_tokens": 1.5}),
        ("max_tokens", {"max_tokens": -5}),
        ("max_tokens", {"max_tokens": True}),
    ],
)
def test_bad_call_figures_are_refused_by_name(field: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=field):
        SpendCall("acme", "cheap", **kwargs)


def test_check_takes_a_spend_call() -> None:
    with pytest.raises(TypeError, match="SpendCall"):
        SpendBudget(1).check(ModelUsage(1, 1))  # type: ignore[arg-type]


# --- checks against the cost cap --------------------------------------------------------------


def test_a_call_is_refused_when_its_worst_case_would_pass_the_cost_cap() -> None:
    budget = SpendBudget(max_cost_usd=0.005, budget_id="team")
    budget.check(cheap_call())  # 0 + 0.003 <= 0.005
    assert charge(budget, 1000, 1000).cost_usd == 0.003
    assert budget.spent_usd == 0.003
    assert budget.remaining_usd == 0.002
    with pytest.raises(CostCapExceededError) as caught:
        budget.check(cheap_call())  # 0.003 + 0.003 > 0.005
    assert caught.value.info == SpendLimitInfo(
        cap="max_cost_usd",
        limit=0.005,
        spent=0.003,
        requested=0.003,
        call="gmi.step",
        provider_id="acme",
        model_id="cheap",
        budget_id="team",
    )
    message = caught.value.message
    assert "spend budget 'team'" in message
    assert "max_cost_usd of $0.005" in message
    assert "$0.003 spent" in message
    assert "gmi.step on acme:cheap" in message
    assert "1,000 prompt + 1,000 output tokens" in message


def test_a_call_that_reaches_the_cap_exactly_is_allowed() -> None:
    budget = SpendBudget(max_cost_usd=0.006)
    for _ in range(2):
        budget.check(cheap_call())
        charge(budget, 1000, 1000)
    assert budget.spent_usd == 0.006
    assert budget.remaining_usd == 0.0
    with pytest.raises(CostCapExceededError):
        budget.check(cheap_call(prompt=0, max_tokens=1))


def test_a_smaller_max_tokens_lets_a_call_fit() -> None:
    budget = SpendBudget(max_cost_usd=0.002)
    with pytest.raises(CostCapExceededError):
        budget.check(cheap_call())  # 0.001 + 0.002
    budget.check(cheap_call(max_tokens=500))  # 0.001 + 0.001


def test_money_is_exact_whatever_the_order() -> None:
    budget = SpendBudget(max_cost_usd=0.3)
    budget.record_external_cost(0.1)
    budget.record_external_cost(0.2)
    assert budget.spent_usd == 0.3  # not 0.30000000000000004
    assert budget.remaining_usd == 0.0
    budget.check(SpendCall("acme", "cheap", 0, 0))  # a free call still fits


def test_an_unpriced_model_is_refused_under_a_cost_cap() -> None:
    seen: list[SpendLimitInfo] = []
    budget = SpendBudget(max_cost_usd=10, on_limit_reached=seen.append)
    with pytest.raises(UnpricedModelError) as caught:
        budget.check(SpendCall("acme", "unpriced", 1, call="gmi.metaprompt"))
    assert caught.value.info.unpriced is True
    assert caught.value.info.requested is None
    assert caught.value.info.call == "gmi.metaprompt"
    assert "max_cost_usd of $10.00" in caught.value.message
    assert "acme:unpriced" in caught.value.message
    assert "no price" in caught.value.message
    assert seen == [caught.value.info]


def test_an_unpriced_model_is_fine_under_a_token_cap_alone() -> None:
    budget = SpendBudget(max_total_tokens=1000)
    budget.check(SpendCall("acme", "unpriced", 100))  # 100 + 500
    charge(budget, 100, 500, model="unpriced")
    assert budget.spent_tokens == 600
    assert budget.unpriced_calls == 1


# --- checks against the token cap -------------------------------------------------------------


def test_a_call_is_refused_when_its_worst_case_would_pass_the_token_cap() -> None:
    budget = SpendBudget(max_total_tokens=2500)
    budget.check(cheap_call())  # 0 + 2,000
    charge(budget, 1000, 200)
    assert budget.remaining_tokens == 1300
    with pytest.raises(CostCapExceededError) as caught:
        budget.check(cheap_call(prompt=400))  # 1,200 + 1,400 > 2,500
    info = caught.value.info
    assert (info.cap, info.limit, info.spent, info.requested) == (
        "max_total_tokens",
        2500,
        1200,
        1400,
    )
    assert "max_total_tokens of 2,500" in caught.value.message
    assert "1,200 spent" in caught.value.message
    budget.check(cheap_call(prompt=400, max_tokens=900))  # 1,200 + 1,300 == 2,500


def test_the_cost_cap_is_checked_before_the_token_cap() -> None:
    budget = SpendBudget(max_cost_usd=0.001, max_total_tokens=10)
    with pytest.raises(CostCapExceededError) as caught:
        budget.check(cheap_call())
    assert caught.value.info.cap == "max_cost_usd"


# --- the errors -------------------------------------------------------------------------------


def test_refusals_are_gmi_errors_but_never_provider_errors() -> None:
    with pytest.raises(SpendLimitError) as caught:
        SpendBudget(max_total_tokens=0).check(cheap_call())
    error = caught.value
    assert isinstance(error, GMIError)
    assert not isinstance(error, ProviderError)  # a gateway must not retry it on another hop
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.http_status == 402
    assert error.details["cap"] == "max_total_tokens"
    assert error.details["call"] == "gmi.step"


# --- recording --------------------------------------------------------------------------------


def test_record_prices_from_the_catalog_unless_the_provider_gave_a_cost() -> None:
    budget = SpendBudget()
    assert charge(budget, 500, 250).cost_usd == 0.001
    given_cost = ModelUsage(500, 250, cost_usd=0.25)
    assert budget.record(given_cost, provider_id="acme", model_id="cheap") == given_cost
    assert budget.spent_usd == 0.251
    assert budget.spent_tokens == 1500


def test_record_charges_the_total_tokens_the_provider_reported() -> None:
    budget = SpendBudget()
    budget.record(ModelUsage(10, 5, total_tokens=40), provider_id="acme", model_id="cheap")
    assert budget.spent_tokens == 40


def test_record_may_pass_the_cap_and_the_next_check_refuses() -> None:
    budget = SpendBudget(max_total_tokens=100)
    charge(budget, 90, 50)
    assert budget.spent_tokens == 140
    assert budget.remaining_tokens == 0
    with pytest.raises(CostCapExceededError):
        budget.check(cheap_call(prompt=0, max_tokens=0))


def test_record_takes_a_model_usage() -> None:
    with pytest.raises(TypeError, match="ModelUsage"):
        SpendBudget().record({"prompt_tokens": 1}, provider_id="a", model_id="b")  # type: ignore[arg-type]


def test_external_cost() -> None:
    parent = SpendBudget(max_cost_usd=1)
    budget = SpendBudget(max_cost_usd=0.5, parent=parent)
    budget.record_external_cost(0.125, tokens=40)
    budget.record_external_cost(0)
    assert (budget.spent_usd, budget.spent_tokens) == (0.125, 40)
    assert (parent.spent_usd, parent.spent_tokens) == (0.125, 40)


@pytest.mark.parametrize(
    ("cost", "tokens", "field"),
    [
        (-0.01, 0, "cost_usd"),
        (float("nan"), 0, "cost_usd"),
        (float("inf"), 0, "cost_usd"),
        ("0.5", 0, "cost_usd"),
        (True, 0, "cost_usd"),
        (0.5, -1, "tokens"),
        (0.5, 2.5, "tokens"),
    ],
)
def test_bad_external_costs_are_refused(cost: object, tokens: object, field: str) -> None:
    budget = SpendBudget()
    with pytest.raises(ValueError, match=field):
        budget.record_external_cost(cost, tokens)  # type: ignore[arg-type]
    assert (budget.spent_usd, budget.spent_tokens) == (0.0, 0)


# --- on_limit_reached -------------------------------------------------------------------------


def test_on_limit_reached_runs_only_on_a_refusal() -> None:
    seen: list[SpendLimitInfo] = []
    budget = SpendBudget(max_total_tokens=3000, on_limit_reached=seen.append)
    budget.check(cheap_call())
    assert seen == []
    with pytest.raises(CostCapExceededError) as caught:
        budget.check(cheap_call(prompt=5000))
    assert seen == [caught.value.info]


def test_a_failing_callback_is_logged_and_the_refusal_stands(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(info: SpendLimitInfo) -> None:
        raise RuntimeError("callback bug")

    budget = SpendBudget(max_total_tokens=0, on_limit_reached=explode)
    with caplog.at_level(logging.ERROR), pytest.raises(CostCapExceededError):
        budget.check(cheap_call())
    assert "on_limit_reached" in caplog.text


# --- budgets that draw on budgets -------------------------------------------------------------


def test_a_child_is_checked_against_its_ancestors_and_charges_them() -> None:
    calls: list[str] = []
    root = SpendBudget(
        max_total_tokens=5000, budget_id="root", on_limit_reached=lambda i: calls.append("root")
    )
    middle = SpendBudget(
        parent=root, budget_id="middle", on_limit_reached=lambda i: calls.append("middle")
    )
    leaf = SpendBudget(
        max_total_tokens=10_000, parent=middle, on_limit_reached=lambda i: calls.append("leaf")
    )
    assert leaf.lineage() == (leaf, middle, root)
    leaf.check(cheap_call())
    charge(leaf, 2000, 1000)
    assert [b.spent_tokens for b in (leaf, middle, root)] == [3000, 3000, 3000]
    with pytest.raises(CostCapExceededError) as caught:
        leaf.check(cheap_call(prompt=1500))  # 3,000 + 2,500 > root's 5,000
    assert caught.value.info.budget_id == "root"
    # The refusing budget first, then those that draw on it, down to the one checked.
    assert calls == ["root", "middle", "leaf"]
    # A sibling drawing on the same root sees the root's spending.
    sibling = SpendBudget(parent=root)
    with pytest.raises(CostCapExceededError):
        sibling.check(cheap_call(prompt=1500))


def test_a_diamond_charges_the_shared_budget_once() -> None:
    host = SpendBudget(max_cost_usd=1, budget_id="host")
    team = SpendBudget(parent=host, budget_id="team")
    own = SpendBudget(parent=host, budget_id="own")
    joint = JointBudget(team, own)
    assert joint.lineage() == (team, own, host)
    joint.check(cheap_call())
    charge(joint, 1000, 1000)
    assert [b.spent_usd for b in (team, own, host)] == [0.003, 0.003, 0.003]
    assert [b.spent_tokens for b in (team, own, host)] == [2000, 2000, 2000]
    joint.record_external_cost(0.5, tokens=1)
    assert [b.spent_usd for b in (team, own, host)] == [0.503, 0.503, 0.503]


def test_a_budget_with_two_parents_charges_their_common_ancestor_once() -> None:
    # Spec: a team launched from a seat draws on both of the seat's budgets.
    host = SpendBudget(budget_id="host")
    carried = SpendBudget(parent=host, budget_id="carried")
    own = SpendBudget(parent=host, budget_id="own")
    launched = SpendBudget(parent=[carried, own, carried], budget_id="launched")
    assert launched.parents == (carried, own)
    assert launched.lineage() == (launched, carried, own, host)
    charge(launched, 10, 20)
    assert [b.spent_tokens for b in (launched, carried, own, host)] == [30, 30, 30, 30]


def test_a_joint_refusal_by_the_own_budget_runs_the_carried_budgets_callback() -> None:
    seen: list[tuple[str, str | None]] = []
    carried = SpendBudget(
        max_cost_usd=1,
        budget_id="carried",
        on_limit_reached=lambda i: seen.append(("carried", i.budget_id)),
    )
    own = SpendBudget(
        max_total_tokens=100,
        budget_id="own",
        on_limit_reached=lambda i: seen.append(("own", i.budget_id)),
    )
    joint = JointBudget(carried, own)
    with pytest.raises(CostCapExceededError) as caught:
        joint.check(cheap_call())
    assert caught.value.info.budget_id == "own"
    assert seen == [("own", "own"), ("carried", "own")]
    assert (carried.spent_tokens, own.spent_tokens) == (0, 0)


def test_a_joint_budget_refuses_when_either_refuses() -> None:
    carried = SpendBudget(max_total_tokens=10_000)
    own = SpendBudget(max_total_tokens=1_000)
    with pytest.raises(CostCapExceededError):
        JointBudget(carried, own).check(cheap_call())
    JointBudget(carried, SpendBudget()).check(cheap_call())


def test_a_budget_joined_twice_counts_once() -> None:
    budget = SpendBudget()
    joint = JointBudget(budget, budget)
    assert joint.budgets == (budget,)
    charge(joint, 1, 1)
    assert budget.spent_tokens == 2


def test_both_kinds_of_budget_meet_the_protocol() -> None:
    assert isinstance(SpendBudget(), BudgetLike)
    assert isinstance(JointBudget(SpendBudget()), BudgetLike)


# --- the property: recorded as checked, a budget never passes its caps ------------------------

_CAPS = st.none() | st.decimals(min_value=0, max_value=Decimal("0.05"), places=6).map(float)
_TOKEN_CAPS = st.none() | st.integers(min_value=0, max_value=40_000)
_CALLS = st.lists(
    st.tuples(
        st.sampled_from(["cheap", "open"]),
        st.integers(min_value=0, max_value=6000),  # prompt estimate
        st.none() | st.integers(min_value=0, max_value=5000),  # max_tokens
        st.floats(min_value=0, max_value=1),  # the share of the output cap actually used
    ),
    max_size=25,
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=200)
@given(
    root_cost=_CAPS,
    root_tokens=_TOKEN_CAPS,
    leaf_cost=_CAPS,
    leaf_tokens=_TOKEN_CAPS,
    calls=_CALLS,
    exact=st.booleans(),
)
def test_checked_calls_recorded_at_most_their_worst_case_never_pass_a_cap(
    root_cost: float | None,
    root_tokens: int | None,
    leaf_cost: float | None,
    leaf_tokens: int | None,
    calls: list[tuple[str, int, int | None, float]],
    exact: bool,
) -> None:
    root = SpendBudget(root_cost, root_tokens)
    leaf = SpendBudget(leaf_cost, leaf_tokens, parent=root)
    for model, prompt, max_tokens, share in calls:
        call = SpendCall("acme", model, prompt, max_tokens, "gmi.step")
        try:
            leaf.check(call)
        except CostCapExceededError as refusal:
            info = refusal.info
            assert info.requested is not None
            # A refusal is never spurious: the worst case really would pass the cap.
            assert Decimal(repr(info.spent)) + Decimal(repr(info.requested)) > Decimal(
                repr(info.limit)
            )
            continue
        worst = call.worst_case
        used = worst if exact else ModelUsage(prompt, math.floor(worst.completion_tokens * share))
        leaf.record(used, provider_id="acme", model_id=model)
        for budget in (leaf, root):
            if budget.max_cost_usd is not None:
                assert budget.spent_usd <= budget.max_cost_usd
            if budget.max_total_tokens is not None:
                assert budget.spent_tokens <= budget.max_total_tokens
    assert root.spent_tokens == leaf.spent_tokens
    assert root.spent_usd == leaf.spent_usd


# --- BudgetedModel ----------------------------------------------------------------------------


def request(text: str = "Hi", max_tokens: int | None = None) -> ModelRequest:
    return ModelRequest([Message.user(text)], options=CompletionOptions(max_tokens=max_tokens))


def test_a_spend_call_for_a_request() -> None:
    call = SpendCall.for_request("acme", "cheap", request("x" * 41, max_tokens=77), call="gmi.step")
    assert call == SpendCall("acme", "cheap", 11, 77, "gmi.step")
    custom = SpendCall.for_request("acme", "cheap", request(), estimate=lambda r: 5)
    assert (custom.prompt_tokens, custom.max_tokens, custom.call) == (5, None, "generate_text")


def test_estimate_prompt_tokens_counts_characters_over_four() -> None:
    assert estimate_prompt_tokens(request("abcdefghi")) == 3  # ceil(9 / 4)
    tool = ToolDefinition("t", "d", {})  # 1 + 1 + 2 chars
    call = ToolCall("c1", "f", {"a": 1})  # "f" + '{"a":1}'
    with_tools = ModelRequest(
        [Message.user("abcd"), Message.assistant("", tool_calls=[call])], tools=[tool]
    )
    assert estimate_prompt_tokens(with_tools) == math.ceil((4 + 1 + 7 + 4) / 4)


async def test_budgeted_model_checks_before_sending_and_records_the_step() -> None:
    inner = ScriptedModel(
        [ScriptStep("Hello there", usage=ModelUsage(100, 50))], provider_id="acme", model_id="cheap"
    )
    budget = SpendBudget(max_cost_usd=1)
    model = BudgetedModel(inner, budget, call="gmi.step")
    assert (model.provider_id, model.model_id) == ("acme", "cheap")
    plain = [
        c
        async for c in ScriptedModel(
            [ScriptStep("Hello there", usage=ModelUsage(100, 50))],
            provider_id="acme",
            model_id="cheap",
        ).stream(request())
    ]
    chunks = [c async for c in model.stream(request())]
    assert chunks == plain
    assert budget.spent_tokens == 150
    assert budget.spent_usd == 0.0002  # 100 * 1e-6 + 50 * 2e-6


async def test_budgeted_model_refuses_without_calling_the_model() -> None:
    seen: list[SpendLimitInfo] = []
    inner = ScriptedModel(["never"], provider_id="acme", model_id="cheap")
    budget = SpendBudget(max_total_tokens=100, on_limit_reached=seen.append)
    model = BudgetedModel(inner, budget, call="generate_text")
    with pytest.raises(CostCapExceededError):
        [c async for c in model.stream(request("x" * 40, max_tokens=91))]  # 10 + 91 > 100
    assert inner.calls == 0
    assert seen[0].call == "generate_text"
    assert seen[0].requested == 101
    # The max_tokens the request sends is the output cap checked.
    chunks = [c async for c in model.stream(request("x" * 40, max_tokens=90))]
    assert isinstance(chunks[-1], UsageChunk)
    assert inner.calls == 1


async def test_budgeted_model_records_a_billed_failure() -> None:
    billed = ModelUsage(30, 0)
    inner = ScriptedModel(
        [ScriptStep.fail(400, "refused", usage=billed)], provider_id="acme", model_id="cheap"
    )
    budget = SpendBudget()
    with pytest.raises(ProviderError):
        [c async for c in BudgetedModel(inner, budget).stream(request())]
    assert budget.spent_tokens == 30


async def test_budgeted_model_releases_an_unbilled_failure_and_estimates_an_abort() -> None:
    inner = ScriptedModel(
        [ScriptStep.fail(500), ScriptStep("one two three", usage=ModelUsage(5, 5))],
        provider_id="acme",
        model_id="cheap",
    )
    budget = SpendBudget()
    model = BudgetedModel(inner, budget)
    with pytest.raises(ProviderError):
        [c async for c in model.stream(request())]
    stream = model.stream(request())
    first = await anext(stream)
    assert isinstance(first, TextDelta)
    assert budget.spent_tokens == 0
    await stream.aclose()  # type: ignore[attr-defined]
    # DESIGN §5.19: "Hi" (1 token) and the delta "one " (1 token), estimated.
    assert budget.spent_tokens == 2
    assert budget.reserved_tokens == 0


async def test_budgeted_model_records_a_finished_step_its_reader_left_early() -> None:
    class UsageBeforeFinish:
        provider_id = "acme"
        model_id = "cheap"

        async def stream(self, request: ModelRequest) -> Any:
            yield TextDelta("hi")
            yield UsageChunk(ModelUsage(7, 3))
            yield FinishChunk("stop")
            yield TextDelta("never read")

    budget = SpendBudget()
    stream = BudgetedModel(UsageBeforeFinish(), budget).stream(request())
    async for chunk in stream:
        if isinstance(chunk, FinishChunk):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert budget.spent_tokens == 10


def test_budgeted_model_passes_other_attributes_through() -> None:
    inner = ScriptedModel(["x"])
    model = BudgetedModel(inner, SpendBudget())
    assert model.requests is inner.requests
    assert model.remaining == 1
