"""`agentos.llm.gateway` (fallback): fallback legs and the chains built from the environment.

Spec, "Model calls through a completion gateway" (the policy-aware chain from the provider keys
in the environment, without the primary's provider; a fallback entry's effort, cache and
max_tokens_headroom); reference §1.26 buildFallbackChain / buildPolicyAwareFallbackChain.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core import GMIError, GMIErrorCode
from agentos.llm.gateway import (
    POLICY_TIERS,
    UNCENSORED_LEGS,
    FallbackLeg,
    build_fallback_chain,
    build_policy_aware_fallback_chain,
)
from agentos.llm.gateway import _fallback as fallback_chain

ALL_KEYS = {
    "OPENAI_API_KEY": "sk-openai",
    "ANTHROPIC_API_KEY": "sk-ant",
    "OPENROUTER_API_KEY": "sk-or",
    "GEMINI_API_KEY": "gm",
}
OPENAI = FallbackLeg("openai", "gpt-5.6-sol", cache=False)
ANTHROPIC = FallbackLeg("anthropic", "claude-sonnet-5", cache=False)
OPENROUTER = FallbackLeg("openrouter", "openai/gpt-5.6-sol", cache=False)
GEMINI = FallbackLeg("gemini", None, cache=False)
HERMES = FallbackLeg("openrouter", "nousresearch/hermes-3-llama-3.1-405b", cache=False)
SONNET_4 = FallbackLeg("openrouter", "anthropic/claude-sonnet-4", cache=False)


def pairs(chain: list[FallbackLeg]) -> list[tuple[str, str | None]]:
    return [(leg.provider, leg.model) for leg in chain]


# --- FallbackLeg ---------------------------------------------------------------------------------


def test_a_leg_defaults_to_the_calls_own_settings() -> None:
    leg = FallbackLeg("anthropic")
    assert (leg.model, leg.effort, leg.cache, leg.max_tokens_headroom) == (None, None, None, None)


def test_a_leg_carries_its_overrides() -> None:
    leg = FallbackLeg(
        "anthropic", "claude-sonnet-5", effort="low", cache="1h", max_tokens_headroom=1024
    )
    assert leg.effort == "low"
    assert leg.cache == "1h"
    assert leg.max_tokens_headroom == 1024


@pytest.mark.parametrize("cache", [None, True, False, "5m", "1h"])
def test_cache_settings(cache: Any) -> None:
    assert FallbackLeg("openai", cache=cache).cache == cache


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"provider": ""}, "provider"),
        ({"provider": "  "}, "provider"),
        ({"provider": 3}, "provider"),
        ({"provider": "openai", "model": ""}, "model"),
        ({"provider": "openai", "model": 4}, "model"),
        ({"provider": "openai", "effort": ""}, "effort"),
        ({"provider": "openai", "cache": "10m"}, "cache"),
        ({"provider": "openai", "cache": {"ttl": "5m"}}, "cache"),
        ({"provider": "openai", "max_tokens_headroom": -1}, "max_tokens_headroom"),
        ({"provider": "openai", "max_tokens_headroom": 1.5}, "max_tokens_headroom"),
        ({"provider": "openai", "max_tokens_headroom": True}, "max_tokens_headroom"),
    ],
)
def test_an_invalid_leg_is_refused_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(GMIError, match=field) as caught:
        FallbackLeg(**kwargs)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "fallback_providers", "field": field}


def test_legs_are_frozen_and_hashable() -> None:
    leg = FallbackLeg("openai", "gpt-5.6-sol")
    with pytest.raises(AttributeError):
        leg.model = "other"  # type: ignore[misc]
    assert len({leg, FallbackLeg("openai", "gpt-5.6-sol")}) == 1


def test_coerce_takes_a_mapping_with_snake_case_keys() -> None:
    leg = FallbackLeg.coerce({"provider": "anthropic", "model": "claude-sonnet-4", "effort": "low"})
    assert leg == FallbackLeg("anthropic", "claude-sonnet-4", effort="low")
    assert FallbackLeg.coerce(leg) is leg


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"provider": "openai", "maxTokensHeadroom": 5}, "maxTokensHeadroom"),
        ({"model": "gpt-5.6-sol"}, "provider"),
        ("openai", "fallback_providers"),
    ],
)
def test_coerce_refuses_unknown_keys_and_missing_providers(entry: Any, field: str) -> None:
    with pytest.raises(GMIError, match=field) as caught:
        FallbackLeg.coerce(entry)
    assert caught.value.details["field"] == field


# --- build_fallback_chain ----------------------------------------------------------------------


def test_every_key_gives_the_references_order_and_models() -> None:
    assert build_fallback_chain(environ=ALL_KEYS) == [OPENAI, ANTHROPIC, OPENROUTER, GEMINI]


def test_every_availability_leg_pins_cache_off_and_gemini_takes_its_default_model() -> None:
    chain = build_fallback_chain(environ=ALL_KEYS)
    assert all(leg.cache is False for leg in chain)
    assert chain[-1].model is None


def test_no_keys_no_chain() -> None:
    assert build_fallback_chain(environ={}) == []


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"OPENAI_API_KEY"}, [OPENAI]),
        ({"ANTHROPIC_API_KEY"}, [ANTHROPIC]),
        ({"OPENROUTER_API_KEY"}, [OPENROUTER]),
        ({"GEMINI_API_KEY"}, [GEMINI]),
        ({"GEMINI_API_KEY", "OPENAI_API_KEY"}, [OPENAI, GEMINI]),
        ({"OPENROUTER_API_KEY", "ANTHROPIC_API_KEY"}, [ANTHROPIC, OPENROUTER]),
    ],
)
def test_only_providers_with_a_key(keys: set[str], expected: list[FallbackLeg]) -> None:
    assert build_fallback_chain(environ={k: "x" for k in keys}) == expected


def test_an_empty_key_is_no_key() -> None:
    assert build_fallback_chain(environ={**ALL_KEYS, "OPENAI_API_KEY": ""})[0] == ANTHROPIC


def test_unrelated_variables_add_nothing() -> None:
    env = {"GROQ_API_KEY": "x", "MISTRAL_API_KEY": "x", "OLLAMA_BASE_URL": "http://x"}
    assert build_fallback_chain(environ=env) == []


@pytest.mark.parametrize(
    ("excluded", "expected"),
    [
        ("openai", [ANTHROPIC, OPENROUTER, GEMINI]),
        ("anthropic", [OPENAI, OPENROUTER, GEMINI]),
        ("openrouter", [OPENAI, ANTHROPIC, GEMINI]),
        ("gemini", [OPENAI, ANTHROPIC, OPENROUTER]),
        ("groq", [OPENAI, ANTHROPIC, OPENROUTER, GEMINI]),
    ],
)
def test_the_primarys_provider_is_left_out(excluded: str, expected: list[FallbackLeg]) -> None:
    assert build_fallback_chain(excluded, environ=ALL_KEYS) == expected


def test_reads_os_environ_without_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert build_fallback_chain() == [ANTHROPIC]
    assert build_policy_aware_fallback_chain("standard") == [ANTHROPIC]


def test_each_call_returns_a_new_list() -> None:
    first = build_fallback_chain(environ=ALL_KEYS)
    first.clear()
    assert len(build_fallback_chain(environ=ALL_KEYS)) == 4


# --- build_policy_aware_fallback_chain ------------------------------------------------------------


@pytest.mark.parametrize("tier", ["mature", "private-adult"])
def test_permissive_tiers_prefix_the_two_openrouter_legs(tier: str) -> None:
    chain = build_policy_aware_fallback_chain(tier, environ=ALL_KEYS)
    assert chain == [HERMES, SONNET_4, OPENAI, ANTHROPIC, OPENROUTER, GEMINI]
    assert list(UNCENSORED_LEGS) == [HERMES, SONNET_4]


@pytest.mark.parametrize("tier", ["mature", "private-adult"])
def test_permissive_tiers_without_an_openrouter_key_get_the_availability_chain(
    tier: str,
) -> None:
    env = {"OPENAI_API_KEY": "x", "GEMINI_API_KEY": "x"}
    assert build_policy_aware_fallback_chain(tier, environ=env) == [OPENAI, GEMINI]


def test_the_uncensored_legs_ignore_the_excluded_provider() -> None:
    chain = build_policy_aware_fallback_chain("mature", "openrouter", environ=ALL_KEYS)
    assert chain == [HERMES, SONNET_4, OPENAI, ANTHROPIC, GEMINI]


def test_only_an_openrouter_key() -> None:
    env = {"OPENROUTER_API_KEY": "x"}
    assert build_policy_aware_fallback_chain("private-adult", environ=env) == [
        HERMES,
        SONNET_4,
        OPENROUTER,
    ]


def test_a_leg_already_in_the_prefix_is_not_added_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    # Today's legs never collide; a prefix that names an availability leg must not repeat it.
    monkeypatch.setattr(fallback_chain, "UNCENSORED_LEGS", (HERMES, OPENROUTER))
    chain = build_policy_aware_fallback_chain("mature", environ=ALL_KEYS)
    assert chain == [HERMES, OPENROUTER, OPENAI, ANTHROPIC, GEMINI]


@pytest.mark.parametrize("tier", [None, "safe", "standard"])
def test_other_tiers_get_the_availability_chain(tier: str | None) -> None:
    assert build_policy_aware_fallback_chain(tier, "openai", environ=ALL_KEYS) == (
        build_fallback_chain("openai", environ=ALL_KEYS)
    )


@pytest.mark.parametrize("tier", ["adult", "MATURE", "private_adult", "", "unrestricted"])
def test_an_unknown_tier_is_refused_naming_policy_tier(tier: str) -> None:
    with pytest.raises(GMIError, match="policy_tier") as caught:
        build_policy_aware_fallback_chain(tier, environ=ALL_KEYS)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details["option"] == "policy_tier"


def test_the_tiers() -> None:
    assert POLICY_TIERS == ("safe", "standard", "mature", "private-adult")


_KEYS = st.sets(st.sampled_from(sorted(ALL_KEYS)))
_TIERS = st.sampled_from([None, *POLICY_TIERS])
_PROVIDERS = st.sampled_from([None, "openai", "anthropic", "openrouter", "gemini", "local"])


@given(keys=_KEYS, tier=_TIERS, excluded=_PROVIDERS)
def test_property_the_chain_never_repeats_a_provider_and_model(
    keys: set[str], tier: str | None, excluded: str | None
) -> None:
    chain = build_policy_aware_fallback_chain(tier, excluded, environ={k: "x" for k in keys})
    assert len(set(pairs(chain))) == len(chain)
    # Every availability leg is there, in order, after any uncensored prefix.
    availability = build_fallback_chain(excluded, environ={k: "x" for k in keys})
    assert chain[len(chain) - len(availability) :] == availability
    # The excluded provider appears only through the uncensored legs.
    assert all(leg.provider != excluded or leg in UNCENSORED_LEGS for leg in chain)
