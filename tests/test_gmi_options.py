"""The completion options a GMI forwards, and how they map onto `CompletionOptions`.

Spec: gmi.md "Completion options" (FORWARDED_COMPLETION_OPTION_KEYS: the persona's
defaultModelCompletionOptions, camelCase or snake_case, and the turn's typed `TurnOptions` fields
over them; the spec's metadata.options keys).
"""

from __future__ import annotations

from typing import Any

import pytest

from agentos.llm.model import CompletionOptions
from agentos.persona import PersonaDefinition
from agentos.persona.definition import ModelCompletionOptions
from agentos.substrate.options import (
    FORWARDED_COMPLETION_OPTION_KEYS,
    forwarded_options,
    to_completion_options,
)
from agentos.substrate.turn_options import TurnOptions


def _persona(options: dict[str, Any] | None = None) -> PersonaDefinition:
    return PersonaDefinition(
        id="p1",
        name="P",
        base_system_prompt="You are P.",
        default_model_completion_options=(
            ModelCompletionOptions.model_validate(options) if options is not None else None
        ),
    )


def test_the_sixteen_forwarded_keys_include_the_cache_tier_and_format_keys() -> None:
    assert len(FORWARDED_COMPLETION_OPTION_KEYS) == 16
    assert {
        "prompt_cache_key",
        "prompt_cache_retention",
        "service_tier",
        "response_format",
    } <= set(FORWARDED_COMPLETION_OPTION_KEYS)


def test_turn_options_are_typed_snake_case_fields_not_camel_case_keys() -> None:
    # The turn's options are typed fields: the TypeScript camelCase names are not fields (only
    # a persona file, written for the TypeScript runtime, is read in camelCase).
    with pytest.raises(TypeError):
        TurnOptions(promptCacheKey="user-7f3a")  # type: ignore[call-arg]
    assert set(FORWARDED_COMPLETION_OPTION_KEYS) <= {
        name for name in TurnOptions.__dataclass_fields__
    }
    forwarded = forwarded_options(
        _persona(),
        TurnOptions(
            prompt_cache_key="user-7f3a",
            prompt_cache_retention="24h",
            service_tier="flex",
            response_format={"type": "json_object"},
        ),
        has_tools=False,
    )
    assert forwarded == {
        "prompt_cache_key": "user-7f3a",
        "prompt_cache_retention": "24h",
        "service_tier": "flex",
        "response_format": {"type": "json_object"},
    }


def test_camel_case_persona_keys_are_read() -> None:
    persona = _persona(
        {"promptCacheKey": "tutor", "promptCacheRetention": "in_memory", "serviceTier": "auto"}
    )
    forwarded = forwarded_options(persona, None, has_tools=False)
    assert forwarded == {
        "prompt_cache_key": "tutor",
        "prompt_cache_retention": "in_memory",
        "service_tier": "auto",
    }


def test_the_turn_s_values_win_over_the_persona_s_key_by_key() -> None:
    persona = _persona(
        {
            "prompt_cache_key": "persona-key",
            "prompt_cache_retention": "in_memory",
            "service_tier": "priority",
            "response_format": {"type": "text"},
        }
    )
    forwarded = forwarded_options(
        persona,
        TurnOptions(service_tier="flex", response_format={"type": "json_object"}),
        has_tools=False,
    )
    assert forwarded == {
        "prompt_cache_key": "persona-key",  # the turn does not set it: the persona's stays
        "prompt_cache_retention": "in_memory",
        "service_tier": "flex",
        "response_format": {"type": "json_object"},
    }


def test_a_turn_value_of_none_does_not_erase_the_persona_s() -> None:
    persona = _persona({"service_tier": "priority"})
    forwarded = forwarded_options(persona, TurnOptions(service_tier=None), has_tools=False)
    assert forwarded == {"service_tier": "priority"}


def test_cache_and_tier_keys_become_their_own_fields_not_custom_params() -> None:
    options = to_completion_options(
        {
            "prompt_cache_key": "user-7f3a",
            "prompt_cache_retention": "24h",
            "service_tier": "flex",
            "custom_model_params": {"top_k": 20},
        }
    )
    assert options.prompt_cache_key == "user-7f3a"
    assert options.prompt_cache_retention == "24h"
    assert options.service_tier == "flex"
    assert options.custom_model_params == {"top_k": 20}
    assert options.json_mode is None


def test_nothing_set_sends_nothing() -> None:
    assert to_completion_options({}) == CompletionOptions()


def test_a_json_object_response_format_is_json_mode() -> None:
    options = to_completion_options({"response_format": {"type": "json_object"}})
    assert options == CompletionOptions(json_mode=True)


@pytest.mark.parametrize("response_format", [{"type": "text"}, "json_object", {"kind": "x"}])
def test_other_response_formats_set_no_json_mode(response_format: object) -> None:
    assert to_completion_options({"response_format": response_format}) == CompletionOptions()


def test_a_json_schema_response_format_is_a_schema_not_json_mode() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    options = to_completion_options(
        {"response_format": {"type": "json_schema", "json_schema": {"name": "A", "schema": schema}}}
    )
    assert options.response_schema == schema
    assert options.schema_name == "A"
    assert options.json_mode is None


def test_from_persona_and_turn_to_completion_options() -> None:
    persona = _persona({"promptCacheKey": "tutor", "serviceTier": "priority", "temperature": 0.3})
    forwarded = forwarded_options(
        persona,
        TurnOptions(service_tier="flex", response_format={"type": "json_object"}),
        has_tools=True,
    )
    assert to_completion_options(forwarded) == CompletionOptions(
        temperature=0.3,
        tool_choice="auto",
        prompt_cache_key="tutor",
        service_tier="flex",
        json_mode=True,
    )
