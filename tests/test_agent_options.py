"""agent()/gmi() options: construction checks, the one warning, profiles, persona, system prompt.

Spec: GMIs from agent() (Construction, Profiles, Persona), Learning (The option), the first
table's capability contract; reference §1.27 (buildSystemPrompt).
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import pytest

from agentos.api.capability_contract import (
    GMI_UNAPPLIED,
    LEGACY_UNAPPLIED,
    is_set,
    unapplied_options,
    warn_unapplied,
)
from agentos.api.cognition import CognitionConfig, ResolvedCognition, resolve_cognition
from agentos.api.gmi_persona import (
    build_system_prompt,
    persona_from_agent_options,
    persona_id_for,
    soul_parts,
)
from agentos.api.option_checks import (
    OptionRangeError,
    check_agent_options,
    spend_budget_from_option,
)
from agentos.api.warnings import AgentOSWarning, UnappliedOptionsWarning
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import LearningSettings
from agentos.llm.budget import SpendBudget
from agentos.memory.mechanisms import MechanismsConfig, resolve_mechanisms_config
from agentos.persona.metaprompt_presets import PRESET_NAMES, SENTIMENT_PRESET_IDS
from agentos.persona.personality import PERSONALITY_HEADING, personality_section
from agentos.persona.validation import validate_persona
from agentos.tools.tool import Tool


def _refused(options: dict[str, Any], option: str, *, runtime: str = "gmi") -> GMIError:
    with pytest.raises(GMIError) as caught:
        check_agent_options(options, runtime=runtime)  # type: ignore[arg-type]
    assert caught.value.details["option"] == option, caught.value
    assert option in str(caught.value)
    return caught.value


def _tool(name: str, *capabilities: str) -> Tool:
    def handler(text: str) -> str:
        """Echo the text."""
        return text

    return Tool.from_function(handler, name=name, required_capabilities=capabilities)


# --- construction checks -------------------------------------------------------------------


def test_valid_options_pass_on_both_runtimes() -> None:
    options: dict[str, Any] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "instructions": "You are a tutor.",
        "name": "Tutor",
        "personality": {"openness": 0.9, "honesty": 0.2},
        "tools": [_tool("echo")],
        "max_steps": 3,
        "chain_of_thought": False,
        "fallback_providers": [{"provider": "anthropic", "model": "claude-sonnet-4"}],
        "thinking": 1024,
        "cache": "5m",
        "max_tokens": 256,
        "controls": {"max_total_tokens": 100, "max_duration_ms": 2500},
        "budget": {"max_cost_usd": 1.5, "max_total_tokens": 10_000},
        "history": {"max_tokens": 5000},
        "memory": {"embedding": {"provider": "openai"}, "consolidation": {"enabled": True}},
        "memory_provider_options": {"timeout_ms": 500},
        "cognition": {"sentiment": True, "metaprompts": ["engagement_boost"]},
        "cognitive_mechanisms": {"reconsolidation": {}},
        "learning": {"mode": "frozen", "agent_key": "tutor", "traits": True},
        "on_before_generation": lambda *_: None,
        "voice": {"enabled": False},
    }
    check_agent_options({**options, "runtime": "gmi"}, runtime="gmi")
    check_agent_options(options, runtime="legacy")


def test_unknown_option_is_refused_with_a_suggestion() -> None:
    error = _refused({"instructons": "x"}, "instructons")
    assert error.code is GMIErrorCode.INVALID_ARGUMENT
    assert "did you mean 'instructions'?" in str(error)


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"runtime": "fast"}, "runtime"),
        ({"provider": 3}, "provider"),
        ({"model": 4.0}, "model"),
        ({"instructions": ["a"]}, "instructions"),
        ({"name": 1}, "name"),
        ({"personality": {"openness": 1.5}}, "personality.openness"),
        ({"personality": {"openness": "high"}}, "personality.openness"),
        ({"personality": {"opennes": 0.5}}, "personality.opennes"),
        ({"personality": [0.5]}, "personality"),
        ({"system_blocks": "one block"}, "system_blocks"),
        ({"soul": {"body": 1}}, "soul.body"),
        ({"soul": 5}, "soul"),
        ({"skills": [3]}, "skills"),
        ({"tools": [lambda: None]}, "tools"),
        ({"tools": [_tool("a"), _tool("a")]}, "tools"),
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": True}, "max_steps"),
        ({"chain_of_thought": 1}, "chain_of_thought"),
        ({"fallback_providers": "openai"}, "fallback_providers"),
        ({"fallback_providers": [{"model": "x"}]}, "fallback_providers"),
        ({"router": "cheapest"}, "router"),
        ({"on_fallback": 1}, "on_fallback"),
        ({"on_after_generation": "x"}, "on_after_generation"),
        ({"thinking": "lots"}, "thinking"),
        ({"thinking": -1}, "thinking"),
        ({"cache": "2h"}, "cache"),
        ({"custom_model_params": [1]}, "custom_model_params"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"controls": {"max_total_tokens": 0}}, "controls.max_total_tokens"),
        ({"controls": {"max_duration_ms": -5}}, "controls.max_duration_ms"),
        ({"controls": {"max_cost": 1}}, "controls.max_cost"),
        ({"budget": 5}, "budget"),
        ({"budget": {"max_cost": 1}}, "budget.max_cost"),
        ({"budget": {"on_limit_reached": "stop"}}, "budget.on_limit_reached"),
        ({"history": "yes"}, "history"),
        ({"history": {"max_tokens": -1}}, "history.max_tokens"),
        ({"usage_ledger": object()}, "usage_ledger"),
        ({"memory_provider_options": {"timeout_ms": 0}}, "memory_provider_options.timeout_ms"),
        ({"memory": "on"}, "memory"),
        ({"memory": {"embeding": {}}}, "memory.embeding"),
        ({"memory": {"consolidation": {"enabled": "yes"}}}, "memory.consolidation.enabled"),
    ],
)
def test_bad_values_raise_naming_the_option(options: dict[str, Any], option: str) -> None:
    _refused(options, option)


@pytest.mark.parametrize("name", ["voice", "avatar", "channels"])
def test_gmi_refuses_voice_avatar_and_channels(name: str) -> None:
    error = _refused({name: {"enabled": True, "provider": "x"}}, name)
    assert error.code is GMIErrorCode.CONFIGURATION_ERROR
    _refused({name: True}, name)
    # A config that sets nothing but enabled: False counts as unset; the legacy path accepts it.
    check_agent_options({name: {"enabled": False}}, runtime="gmi")
    check_agent_options({name: False}, runtime="gmi")
    check_agent_options({name: {"enabled": True}}, runtime="legacy")


@pytest.mark.parametrize("key", ["max_cost_usd", "max_total_tokens"])
@pytest.mark.parametrize("value", [-0.01, -1, math.nan, "5", True, None])
def test_budget_numbers_below_zero_or_not_numbers_are_range_errors(key: str, value: Any) -> None:
    if value is None:
        check_agent_options({"budget": {key: value}}, runtime="gmi")
        return
    with pytest.raises(OptionRangeError) as caught:
        check_agent_options({"budget": {key: value}}, runtime="gmi")
    error = caught.value
    assert isinstance(error, ValueError)
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.INVALID_ARGUMENT
    assert error.details["option"] == f"budget.{key}"
    assert f"budget.{key}" in str(error)


def test_budget_settings_make_one_spend_budget() -> None:
    def on_limit(info: object) -> None:
        pass

    budget = spend_budget_from_option(
        {"max_cost_usd": 2, "max_total_tokens": 0, "on_limit_reached": on_limit}
    )
    assert isinstance(budget, SpendBudget)
    assert (budget.max_cost_usd, budget.max_total_tokens) == (2, 0)
    assert budget.on_limit_reached is on_limit
    given = SpendBudget(max_cost_usd=1)
    assert spend_budget_from_option(given) is given
    assert spend_budget_from_option(None) is None
    check_agent_options({"budget": given}, runtime="gmi")


@pytest.mark.parametrize(
    ("cognition", "option"),
    [
        ("heavy", "cognition"),
        (3, "cognition"),
        ({"sentimnt": True}, "cognition.sentimnt"),
        ({"memory": "yes"}, "cognition.memory"),
        ({"sentiment": 1}, "cognition.sentiment"),
        ({"sentiment": True, "metaprompts": ["cheer_up"]}, "cognition.metaprompts"),
        ({"sentiment": True, "metaprompts": "some"}, "cognition.metaprompts"),
        ({"sentiment": True, "metaprompts": True}, "cognition.metaprompts"),
        ({"mechanisms": {"no_such": {}}}, "cognition.mechanisms"),
        ({"mechanisms": "all"}, "cognition.mechanisms"),
    ],
)
def test_an_unknown_profile_or_preset_raises(cognition: Any, option: str) -> None:
    _refused({"cognition": cognition}, option)


def test_unknown_profile_suggests_the_close_one() -> None:
    assert "did you mean 'full'?" in str(_refused({"cognition": "ful"}, "cognition"))


@pytest.mark.parametrize(
    ("learning", "option"),
    [
        ("on", "learning"),
        ({"mode": "paused"}, "learning.mode"),
        ({"agent_key": "  "}, "learning.agent_key"),
        ({"agent_key": 7}, "learning.agent_key"),
        ({"namespace": 1}, "learning.namespace"),
        ({"anonymous_user_ids": "guest"}, "learning.anonymous_user_ids"),
        ({"anonymous_user_ids": ["a", 2]}, "learning.anonymous_user_ids"),
        ({"traits": "yes"}, "learning.traits"),
        ({"lessons": 1}, "learning.lessons"),
        ({"skills": None, "agentKey": "x"}, "learning.agentKey"),
    ],
)
def test_learning_values_of_the_wrong_type_raise_naming_the_field(
    learning: Any, option: str
) -> None:
    _refused({"learning": learning}, option)


def test_learning_values_that_pass() -> None:
    for learning in (True, False, None, {}, {"mode": "off", "namespace": "", "skills": False}):
        check_agent_options({"learning": learning}, runtime="gmi")


@pytest.mark.parametrize(
    ("embedding", "option"),
    [
        ({"provider": "anthropic"}, "memory.embedding.provider"),
        ({"provider": "openai", "model": "gpt-4o-mini"}, "memory.embedding.model"),
        ({"provider": "openai", "dimension": 0}, "memory.embedding.dimension"),
        ({"provider": "ollama", "model": "my-own-embedder"}, "memory.embedding.dimension"),
        ({"model": "x"}, "memory.embedding.provider"),
        ("openai", "memory.embedding"),
    ],
)
def test_memory_embedding_is_checked(embedding: Any, option: str) -> None:
    _refused({"memory": {"embedding": embedding}}, option)


def test_cognitive_mechanisms_errors_name_the_option() -> None:
    error = _refused({"cognitive_mechanisms": {"reconsolidaton": {}}}, "cognitive_mechanisms")
    assert "reconsolidaton" in str(error)
    _refused({"cognitive_mechanisms": ["reconsolidation"]}, "cognitive_mechanisms")
    _refused(
        {"cognitive_mechanisms": {"reconsolidation": {"drift_rate": -1}}}, "cognitive_mechanisms"
    )


# --- the one warning -----------------------------------------------------------------------


def test_is_set_counts_enabled_false_only_configs_as_unset() -> None:
    assert not is_set(None)
    assert not is_set(False)
    assert not is_set({"enabled": False})
    assert is_set({})
    assert is_set([])
    assert is_set(True)
    assert is_set({"enabled": False, "provider": "x"})
    assert is_set({"enabled": True})
    assert is_set(["pii"])


def test_gmi_warns_once_naming_exactly_the_set_options() -> None:
    options = {
        "rag": {"enabled": True},
        "hitl": {"approvals": {}},
        "guardrails": {"enabled": False},  # unset
        "provenance": None,
        "emergent": True,
        "instructions": "x",
    }
    with pytest.warns(UnappliedOptionsWarning) as record:
        names = warn_unapplied(options, runtime="gmi", stacklevel=2)
    assert len(record) == 1
    warning = record[0].message
    assert isinstance(warning, UnappliedOptionsWarning)
    assert isinstance(warning, AgentOSWarning)
    assert names == ["rag", "hitl", "emergent"] == list(warning.options)
    assert warning.runtime == "gmi"
    text = str(warning)
    for name in GMI_UNAPPLIED:
        assert (name in text) == (name in names)
    assert record[0].filename == __file__


def test_legacy_and_gmi_sets_differ() -> None:
    options = {
        "voice": {"enabled": True},
        "channels": ["slack"],
        "memory": True,
        "cognitive_mechanisms": {},
        "cognition": "full",
        "learning": True,
        "rag": True,
    }
    assert unapplied_options(options, runtime="legacy") == [
        "rag",
        "channels",
        "voice",
        "memory",
        "cognitive_mechanisms",
        "cognition",
        "learning",
    ]
    assert unapplied_options(options, runtime="gmi") == ["rag"]
    assert set(GMI_UNAPPLIED) < set(LEGACY_UNAPPLIED)
    assert not {"voice", "avatar", "channels"} & set(GMI_UNAPPLIED)


def test_no_warning_when_nothing_unapplied_is_set() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_unapplied({"rag": {"enabled": False}, "memory": True}, runtime="gmi") == []
        assert warn_unapplied({"instructions": "x"}, runtime="legacy") == []


def test_warning_can_go_to_a_logger(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("agentos.test_agent_options")
    with caplog.at_level(logging.WARNING, logger=logger.name), warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unapplied({"security": {"tier": "strict"}}, runtime="gmi", logger=logger)
    assert len(caplog.records) == 1
    assert "security" in caplog.records[0].getMessage()


# --- profiles --------------------------------------------------------------------------------


def _resolved(**options: Any) -> ResolvedCognition:
    return resolve_cognition(options)


def test_light_profile_is_the_default() -> None:
    plain = _resolved()
    assert plain == _resolved(cognition="light")
    assert plain.profile == "light"
    assert (plain.memory_on, plain.mechanisms, plain.sentiment_on) == (False, None, False)
    assert plain.metaprompt_presets == ()
    # Memory only when memory is set.
    with_memory = _resolved(memory={"embedding": {"provider": "openai"}})
    assert with_memory.memory_on
    assert with_memory.mechanisms == MechanismsConfig()  # all eight at their defaults
    assert _resolved(memory=True).memory_on
    assert not _resolved(memory=False).memory_on


def test_light_and_full_mechanisms_are_the_agents_or_all_eight() -> None:
    given = {"reconsolidation": {"drift_rate": 0.2}, "temporal_gist": False}
    expected = resolve_mechanisms_config(given)
    for cognition in ("light", "full"):
        resolved = _resolved(cognition=cognition, memory=True, cognitive_mechanisms=given)
        assert resolved.mechanisms == expected
        assert resolved.mechanisms != MechanismsConfig()
    # No memory, no mechanisms, whatever cognitive_mechanisms says.
    assert _resolved(cognitive_mechanisms=given).mechanisms is None
    assert _resolved(cognition="full", memory=False, cognitive_mechanisms=given).mechanisms is None


def test_full_profile() -> None:
    full = _resolved(cognition="full")
    assert full.profile == "full"
    assert full.memory_on  # on unless memory=False
    assert full.mechanisms == MechanismsConfig()
    assert full.sentiment_on
    assert full.metaprompt_presets == PRESET_NAMES
    off = _resolved(cognition="full", memory=False)
    assert (off.memory_on, off.mechanisms, off.sentiment_on) == (False, None, True)


def test_cognition_config_memory_switch() -> None:
    assert _resolved(cognition=CognitionConfig(memory=True)).memory_on
    assert not _resolved(cognition=CognitionConfig(memory=False), memory=True).memory_on
    # Unset: the agent's memory option.
    assert _resolved(cognition=CognitionConfig(), memory=True).memory_on
    assert not _resolved(cognition=CognitionConfig()).memory_on
    assert _resolved(cognition={"memory": None}, memory={}).memory_on
    assert _resolved(cognition=CognitionConfig()).profile == "custom"


def test_cognition_config_mechanisms_switch() -> None:
    given = {"reconsolidation": {"drift_rate": 0.2}}
    default = _resolved(cognition=CognitionConfig(memory=True), cognitive_mechanisms=given)
    assert default.mechanisms == resolve_mechanisms_config(given)  # True: as on 'light'
    assert _resolved(cognition={"memory": True, "mechanisms": True}).mechanisms == (
        MechanismsConfig()
    )
    assert _resolved(cognition={"memory": True, "mechanisms": False}).mechanisms is None
    own: dict[str, Any] = {"emotion_regulation": {}}
    chosen = _resolved(
        cognition={"memory": True, "mechanisms": own}, cognitive_mechanisms=given
    ).mechanisms
    assert chosen == resolve_mechanisms_config(own)
    assert _resolved(cognition={"mechanisms": own}).mechanisms is None  # memory off


def test_cognition_config_sentiment_and_metaprompts() -> None:
    assert not _resolved(cognition=CognitionConfig()).sentiment_on
    on = _resolved(cognition=CognitionConfig(sentiment=True))
    assert on.sentiment_on
    assert on.metaprompt_presets == ()  # unset: none
    assert _resolved(cognition={"sentiment": True, "metaprompts": "all"}).metaprompt_presets == (
        PRESET_NAMES
    )
    listed = _resolved(
        cognition={"sentiment": True, "metaprompts": ["engagement_boost", "gmi_error_recovery"]}
    )
    assert listed.metaprompt_presets == ("error_recovery", "engagement_boost")
    assert _resolved(cognition={"sentiment": True, "metaprompts": False}).metaprompt_presets == ()
    # Only with sentiment: True.
    assert _resolved(cognition={"metaprompts": "all"}).metaprompt_presets == ()


def test_learning_resolves_to_its_switches() -> None:
    # Spec (The option): "resolveCognition() returns the resolved switches as learning".
    assert _resolved().learning is None
    assert not _resolved(learning=False).learning_on
    resolved = _resolved(learning={"mode": "off"})
    assert resolved.learning == LearningSettings(mode="off")
    assert resolved.learning_on
    assert _resolved(learning=True).learning_on


# --- the system prompt ------------------------------------------------------------------------

_TRAITS = {"openness": 0.9, "honesty": 0.1}


def test_system_prompt_order() -> None:
    section = personality_section(_TRAITS)
    assert section is not None
    prompt = build_system_prompt(
        {
            "soul": {"body": "I am the soul.", "style": "Short sentences."},
            "instructions": "You are a tutor.",
            "name": "Ada",
            "personality": _TRAITS,
            "skills": ["Skill one.", {"content": "Skill two.", "name": "two"}],
        }
    )
    assert prompt == "\n\n".join(
        [
            "I am the soul.",
            "## Style\n\nShort sentences.",
            "You are a tutor.",
            "Assistant name: Ada.",
            section,
            "Skill one.",
            "Skill two.",
        ]
    )


def test_system_prompt_parts_are_optional() -> None:
    assert build_system_prompt({}) == ""
    assert build_system_prompt({"instructions": "Be brief."}) == "Be brief."
    assert build_system_prompt({"name": "Ada"}) == "Assistant name: Ada."
    # Traits all between 0.35 and 0.65 give no section.
    assert build_system_prompt({"instructions": "x", "personality": {"openness": 0.5}}) == "x"


def test_personality_section_included_or_excluded() -> None:
    options = {"instructions": "You are a tutor.", "personality": _TRAITS}
    assert PERSONALITY_HEADING in build_system_prompt(options)
    without = build_system_prompt(options, include_personality=False)
    assert without == "You are a tutor."


def test_system_blocks_replace_the_built_prompt() -> None:
    options = {
        "system_blocks": ["Block one.", "  ", "Block two."],
        "instructions": "ignored",
        "personality": _TRAITS,
    }
    assert build_system_prompt(options) == "Block one.\n\nBlock two."


def test_a_soul_files_front_matter_is_not_applied() -> None:
    text = "---\nname: Someone\nmodel: gpt\n---\nThe body.\n"
    assert soul_parts(text) == ("The body.", "")
    assert build_system_prompt({"soul": text, "instructions": "Hi."}) == "The body.\n\nHi."
    assert soul_parts("No front matter.") == ("No front matter.", "")


# --- the persona --------------------------------------------------------------------------------

_LIGHT = resolve_cognition({})
_FULL = resolve_cognition({"cognition": "full"})


def _persona(options: dict[str, Any], cognition: ResolvedCognition = _LIGHT, **kw: Any) -> Any:
    return persona_from_agent_options(
        options, provider_id=kw.get("provider_id"), model_id=kw.get("model_id"), cognition=cognition
    )


def test_persona_id_name_and_description() -> None:
    persona = _persona({"name": "Ada Lovelace", "instructions": "\nYou teach maths.\nBe kind."})
    assert (persona.id, persona.name) == ("ada-lovelace", "Ada Lovelace")
    assert persona.description == "You teach maths."
    assert _persona({"name": "Ada"}).description == "Ada"
    assert persona_id_for("Zoë's Bot!") == "zoe-s-bot"
    assert persona_id_for("") is None


def test_an_agent_with_no_name_gets_an_id_of_its_own() -> None:
    first, second = _persona({}), _persona({})
    assert first.name == "Agent"
    assert first.description == "Agent"
    assert first.id.startswith("agent-")
    assert first.id != second.id
    given = persona_from_agent_options(
        {}, provider_id=None, model_id=None, cognition=_LIGHT, persona_id="agent-42"
    )
    assert given.id == "agent-42"


def test_persona_base_prompt_is_the_system_prompt() -> None:
    options = {"instructions": "You are a tutor.", "name": "Ada", "personality": _TRAITS}
    assert _persona(options).base_system_prompt == build_system_prompt(options)
    # With learning on, the personality section is left out (the GMI sends it on its own).
    learning = resolve_cognition({**options, "learning": True})
    assert _persona(options, learning).base_system_prompt == build_system_prompt(
        options, include_personality=False
    )
    blocks = {"system_blocks": ["A.", "B."], "personality": _TRAITS}
    assert _persona(blocks).base_system_prompt == "A.\n\nB."


def test_persona_traits_provider_and_model() -> None:
    persona = _persona(
        {"personality": {"openness": 0.9, "agreeableness": 1, "honesty": None}},
        provider_id="openai",
        model_id="gpt-4o-mini",
    )
    assert persona.personality_traits == {"agreeableness": 1.0, "openness": 0.9}
    assert persona.hexaco_traits == {"agreeableness": 1.0, "openness": 0.9}
    assert (persona.default_provider_id, persona.default_model_id) == ("openai", "gpt-4o-mini")
    assert _persona({}).personality_traits is None


def test_persona_completion_options_and_nothing_else() -> None:
    options = {
        "max_tokens": 300,
        "controls": {"max_total_tokens": 999, "max_duration_ms": 2500},
        "thinking": {"budget_tokens": 512},
        "effort": "low",
        "custom_model_params": {"top_k": 5},
        "cache": "1h",
    }
    completion = _persona(options).default_model_completion_options
    assert completion.model_dump(exclude_none=True) == {
        "max_tokens": 300,
        "request_timeout": 2.5,  # controls.max_duration_ms, in seconds
        "thinking": {"budget_tokens": 512},
        "effort": "low",
        "custom_model_params": {"top_k": 5},
        "cache": "1h",
    }
    assert completion.temperature is None
    fallback = _persona({"controls": {"max_total_tokens": 999}}).default_model_completion_options
    assert fallback.model_dump(exclude_none=True) == {"max_tokens": 999}
    assert _persona({}).default_model_completion_options.model_dump(exclude_none=True) == {}


def test_persona_allowed_capabilities_are_the_tools_required_ones() -> None:
    tools = [_tool("a", "web", "files"), _tool("b", "files", "mail"), _tool("c")]
    assert _persona({"tools": tools}).allowed_capabilities == ["web", "files", "mail"]
    assert _persona({}).allowed_capabilities == []


def test_persona_sentiment_and_metaprompts_from_the_profile() -> None:
    light = _persona({})
    assert light.sentiment_tracking is not None
    assert not light.sentiment_tracking.enabled
    assert light.meta_prompts == []
    full = _persona({}, _FULL)
    assert full.sentiment_tracking is not None
    assert full.sentiment_tracking.enabled
    assert full.sentiment_tracking.presets == list(PRESET_NAMES)
    assert [mp.id for mp in full.meta_prompts] == list(SENTIMENT_PRESET_IDS)
    chosen = resolve_cognition(
        {"cognition": {"sentiment": True, "metaprompts": ["error_recovery"]}}
    )
    custom = _persona({}, chosen)
    assert [mp.id for mp in custom.meta_prompts] == ["gmi_error_recovery"]
    assert custom.sentiment_tracking is not None
    assert custom.sentiment_tracking.presets == ["error_recovery"]


def test_persona_validates() -> None:
    persona = _persona(
        {"name": "Ada", "instructions": "You teach.", "personality": _TRAITS},
        _FULL,
        provider_id="openai",
        model_id="gpt-4o-mini",
    )
    report = validate_persona(persona)
    assert not report.errors, report
