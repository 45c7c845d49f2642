"""`ModelUsage`: defaults, refusals, addition, the zero identity and unknown costs."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core import ModelUsage

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")


# --- construction ----------------------------------------------------------------------------


def test_defaults_are_zero_tokens_and_unknown_cost() -> None:
    usage = ModelUsage()
    assert usage == ModelUsage(0, 0, 0, None, 0, 0)
    assert usage.cost_usd is None
    assert usage.cost_known is False


def test_total_defaults_to_prompt_plus_completion() -> None:
    assert ModelUsage(prompt_tokens=120, completion_tokens=30).total_tokens == 150


def test_total_ignores_cache_tokens_when_derived() -> None:
    usage = ModelUsage(prompt_tokens=10, completion_tokens=5, cache_read_tokens=7)
    assert usage.total_tokens == 15


def test_explicit_total_is_kept_even_when_it_differs_from_the_parts() -> None:
    # Providers may count reasoning tokens in the total only.
    assert ModelUsage(prompt_tokens=10, completion_tokens=5, total_tokens=40).total_tokens == 40
    assert ModelUsage(prompt_tokens=10, completion_tokens=5, total_tokens=0).total_tokens == 0


def test_known_cost_including_zero_is_known() -> None:
    assert ModelUsage(cost_usd=0.0).cost_known is True
    assert ModelUsage(cost_usd=0.25).cost_usd == 0.25


@pytest.mark.parametrize("field", [*TOKEN_FIELDS, "total_tokens"])
def test_negative_token_counts_are_refused_naming_the_field(field: str) -> None:
    kwargs: dict[str, Any] = {field: -3}
    with pytest.raises(ValueError, match=rf"ModelUsage\.{field} must be >= 0, got -3"):
        ModelUsage(**kwargs)


def test_an_explicit_total_of_minus_one_is_refused_not_taken_as_the_default() -> None:
    with pytest.raises(ValueError, match=r"ModelUsage\.total_tokens must be >= 0, got -1"):
        ModelUsage(prompt_tokens=2, completion_tokens=3, total_tokens=-1)


@pytest.mark.parametrize("cost", [-0.01, math.nan, math.inf, -math.inf])
def test_negative_or_non_finite_cost_is_refused_naming_the_field(cost: float) -> None:
    with pytest.raises(ValueError, match=r"ModelUsage\.cost_usd must be a finite number >= 0"):
        ModelUsage(cost_usd=cost)


def test_usage_is_frozen() -> None:
    usage = ModelUsage(prompt_tokens=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        usage.prompt_tokens = 2  # type: ignore[misc]


# --- addition --------------------------------------------------------------------------------


def test_addition_adds_every_field() -> None:
    a = ModelUsage(10, 5, 16, 0.5, cache_read_tokens=3, cache_write_tokens=1)
    b = ModelUsage(20, 7, 27, 0.25, cache_read_tokens=4, cache_write_tokens=2)
    assert a + b == ModelUsage(30, 12, 43, 0.75, cache_read_tokens=7, cache_write_tokens=3)


def test_addition_adds_the_totals_not_a_fresh_sum_of_parts() -> None:
    total = ModelUsage(1, 1, total_tokens=10) + ModelUsage(1, 1)
    assert total.total_tokens == 12


def test_unknown_cost_absorbs_a_known_one_on_either_side() -> None:
    known = ModelUsage(prompt_tokens=1, cost_usd=2.0)
    unknown = ModelUsage(prompt_tokens=1)
    assert (known + unknown).cost_usd is None
    assert (unknown + known).cost_usd is None
    assert (unknown + unknown).cost_usd is None


def test_unknown_cost_is_never_read_as_zero() -> None:
    # A zero-priced call plus an unpriced one is unknown, not 0.
    total = ModelUsage(cost_usd=0.0) + ModelUsage(prompt_tokens=5)
    assert total.cost_usd is None
    assert total.cost_known is False
    assert total != ModelUsage(prompt_tokens=5, cost_usd=0.0)


def test_adding_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        ModelUsage() + 1  # type: ignore[operator]


# --- zero and sum ----------------------------------------------------------------------------


def test_zero_has_no_tokens_and_a_known_cost_of_zero() -> None:
    zero = ModelUsage.zero()
    assert zero == ModelUsage(0, 0, 0, 0.0, 0, 0)
    assert zero.cost_known is True


def test_zero_is_a_left_and_right_identity() -> None:
    usage = ModelUsage(3, 4, cost_usd=1.5, cache_read_tokens=2)
    assert ModelUsage.zero() + usage == usage
    assert usage + ModelUsage.zero() == usage


def test_zero_keeps_an_unknown_cost_unknown() -> None:
    assert (ModelUsage.zero() + ModelUsage(prompt_tokens=1)).cost_usd is None


def test_sum_of_nothing_is_zero() -> None:
    assert ModelUsage.sum([]) == ModelUsage.zero()


def test_sum_adds_in_order_and_accepts_any_iterable() -> None:
    usages = [ModelUsage(1, 2, cost_usd=0.5), ModelUsage(3, 4, cost_usd=0.25), ModelUsage(5, 6)]
    assert ModelUsage.sum(iter(usages[:2])) == ModelUsage(4, 6, cost_usd=0.75)
    assert ModelUsage.sum(usage for usage in usages) == ModelUsage(9, 12, cost_usd=None)


# --- properties ------------------------------------------------------------------------------

tokens = st.integers(min_value=0, max_value=10**12)
# Costs are bounded so sums stay finite (an infinite cost is refused) and are multiples of 2**-20
# below 2**20, so float addition of a few of them is exact and associativity can be checked with ==.
exact_costs = st.none() | st.integers(min_value=0, max_value=2**40).map(lambda n: n / 2**20)


@st.composite
def usages(draw: st.DrawFn) -> ModelUsage:
    prompt, completion = draw(tokens), draw(tokens)
    total = draw(st.none() | tokens)
    return ModelUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion if total is None else total,
        cost_usd=draw(exact_costs),
        cache_read_tokens=draw(tokens),
        cache_write_tokens=draw(tokens),
    )


def token_counts(usage: ModelUsage) -> tuple[int, ...]:
    return (
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
    )


@given(usages(), usages(), usages())
def test_addition_is_associative(a: ModelUsage, b: ModelUsage, c: ModelUsage) -> None:
    assert token_counts((a + b) + c) == token_counts(a + (b + c))
    assert (a + b) + c == a + (b + c)


@given(usages(), usages())
def test_addition_is_commutative(a: ModelUsage, b: ModelUsage) -> None:
    assert a + b == b + a


@given(usages())
def test_zero_is_the_identity(usage: ModelUsage) -> None:
    assert usage + ModelUsage.zero() == usage
    assert ModelUsage.zero() + usage == usage


@given(st.lists(usages(), max_size=6))
def test_cost_is_unknown_exactly_when_some_part_is_unknown(parts: list[ModelUsage]) -> None:
    total = ModelUsage.sum(parts)
    assert (total.cost_usd is None) == any(part.cost_usd is None for part in parts)
    if total.cost_usd is not None:
        assert total.cost_usd == sum(part.cost_usd or 0.0 for part in parts)


@given(st.lists(usages(), max_size=6))
def test_sum_adds_each_token_field(parts: list[ModelUsage]) -> None:
    total = ModelUsage.sum(parts)
    assert token_counts(total) == tuple(
        sum(token_counts(part)[field] for part in parts) for field in range(5)
    )


@given(tokens, tokens)
def test_derived_total_is_prompt_plus_completion(prompt: int, completion: int) -> None:
    assert ModelUsage(prompt, completion).total_tokens == prompt + completion
