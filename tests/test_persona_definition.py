"""`PersonaDefinition`: both key spellings, extra keys kept, HEXACO range, base prompt forms."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentos.persona import PersonaDefinition, PromptPart, PromptTemplate

CAMEL = {
    "id": "p1",
    "name": "P",
    "description": "d",
    "version": "1.0.0",
    "baseSystemPrompt": "Be helpful.",
    "defaultModelCompletionOptions": {"temperature": 0.3, "maxTokens": 100, "topP": 0.5},
    "conversationContextConfig": {"maxMessages": 12},
    "personalityTraits": {"openness": 0.9, "verbosity": "medium", "humorLevel": 0.2},
    "moodAdaptation": {"enabled": True, "defaultMood": "calm"},
    "memoryConfig": {"ragConfig": {"enabled": True, "defaultRetrievalTopK": 5}},
    "modelPreference": {"primary": "openai/gpt-4o"},
}


def test_camel_case_typescript_file_loads_as_it_is() -> None:
    persona = PersonaDefinition.model_validate(CAMEL)
    assert persona.base_system_prompt == "Be helpful."
    assert persona.default_model_completion_options is not None
    assert persona.default_model_completion_options.max_tokens == 100
    assert persona.conversation_context_config is not None
    assert persona.conversation_context_config.max_messages == 12
    assert persona.mood_adaptation is not None
    assert persona.mood_adaptation.default_mood == "calm"
    assert persona.memory_config is not None
    assert persona.memory_config.rag_config is not None
    assert persona.memory_config.rag_config.default_retrieval_top_k == 5
    # unknown keys are kept and dumped back in the file's spelling
    assert persona.to_json_dict()["modelPreference"] == {"primary": "openai/gpt-4o"}
    assert persona.to_json_dict()["baseSystemPrompt"] == "Be helpful."


def test_snake_case_loads_too() -> None:
    persona = PersonaDefinition.model_validate(
        {
            "id": "p2",
            "name": "P",
            "base_system_prompt": "x",
            "default_model_completion_options": {"max_tokens": 7},
            "tool_ids": ["a"],
        }
    )
    assert persona.default_model_completion_options is not None
    assert persona.default_model_completion_options.max_tokens == 7
    assert persona.tool_ids == ["a"]


def test_traits_hold_hexaco_and_other_entries() -> None:
    persona = PersonaDefinition.model_validate(CAMEL)
    assert persona.hexaco_traits == {"openness": 0.9}
    assert persona.personality_traits is not None
    assert persona.personality_traits["verbosity"] == "medium"


@pytest.mark.parametrize("value", [1.5, -0.1, "high", True])
def test_hexaco_trait_out_of_range_or_not_a_number_is_refused(value: object) -> None:
    with pytest.raises(ValidationError, match=r"personality_traits\.honesty"):
        PersonaDefinition.model_validate({"id": "x", "personalityTraits": {"honesty": value}})


def test_base_prompt_as_template() -> None:
    persona = PersonaDefinition(
        id="t",
        base_system_prompt=PromptTemplate(template="I am {{name}}.", variables={"name": "Atlas"}),
    )
    assert persona.system_prompt_text() == "I am Atlas."


def test_base_prompt_as_list_sorted_by_priority() -> None:
    persona = PersonaDefinition.model_validate(
        {
            "id": "l",
            "baseSystemPrompt": [
                {"content": "second", "priority": 5},
                {"content": "first", "priority": 1},
                {"content": "no priority"},
            ],
        }
    )
    parts = persona.system_prompt_parts()
    assert [p.content for p in parts] == ["no priority", "first", "second"]
    assert all(isinstance(p, PromptPart) for p in parts)
    assert persona.system_prompt_text() == "no priority\n\nfirst\n\nsecond"
