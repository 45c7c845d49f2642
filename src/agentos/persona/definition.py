"""`PersonaDefinition`: who a GMI is (spec: "What a GMI holds", Persona; reference §1.7).

The models take both spellings of every key: the camelCase of files written for the TypeScript
runtime (``baseSystemPrompt``) and the snake_case of Python callers (``base_system_prompt``), and
they keep keys they do not know (a TypeScript file's ``modelPreference``), so a file loads as it
is and dumps back (``model_dump(by_alias=True)``) with what it carried.

``personality_traits`` holds the six HEXACO values (0..1) and may hold other entries (strings,
numbers) that TypeScript files carry; only the HEXACO keys drive prompts and memory scaling
(DESIGN.md §5.7).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "HEXACO_TRAITS",
    "ConversationContextConfig",
    "InitialMemoryImprint",
    "MemoryConfig",
    "MetaPromptDefinition",
    "MetaPromptTrigger",
    "ModelCompletionOptions",
    "ModelTargetPreference",
    "MoodAdaptation",
    "PersonaDefinition",
    "PromptPart",
    "PromptTemplate",
    "RagConfig",
    "RagDataSource",
    "RagIngestionProcessing",
    "RagSummarizationConfig",
    "ReasoningTraceConfig",
    "SentimentTrackingConfig",
]

HEXACO_TRAITS: tuple[str, ...] = (
    "honesty",
    "emotionality",
    "extraversion",
    "agreeableness",
    "conscientiousness",
    "openness",
)
"""The six HEXACO trait keys, in the order the personality section renders them."""

TraitValue = float | int | str | bool | None


class _PersonaModel(BaseModel):
    """Base of every persona model: camelCase and snake_case keys both load; unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
    )


class PromptTemplate(_PersonaModel):
    """A base system prompt written as a template with ``{{name}}`` variables."""

    template: str
    variables: dict[str, str] | None = None

    def render(self) -> str:
        """The template with each ``{{name}}`` replaced by its variable's value."""
        text = self.template
        for name, value in (self.variables or {}).items():
            text = text.replace("{{" + name + "}}", value)
        return text


class PromptPart(_PersonaModel):
    """One system prompt of a base prompt given as a list; a lower priority comes first."""

    content: str
    priority: int | None = None


class MoodAdaptation(_PersonaModel):
    """How the persona's mood moves (``moodAdaptation``)."""

    enabled: bool = False
    default_mood: str | None = None
    allowed_moods: list[str] | None = None
    sensitivity_factor: float | None = None
    mood_prompts: dict[str, str] | None = None


class ModelCompletionOptions(_PersonaModel):
    """The persona's default completion options (``defaultModelCompletionOptions``)."""

    model_id: str | None = None
    provider_id: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    stop_sequences: list[str] | None = None
    thinking: Any = None
    effort: str | None = None
    cache: Any = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    service_tier: str | None = None
    request_timeout: float | None = None
    custom_model_params: dict[str, Any] | None = None
    response_format: Any = None
    tool_choice: Any = None


class ModelTargetPreference(_PersonaModel):
    """One entry of ``modelTargetPreferences``: which model serves a kind of task."""

    task_hint: str | None = None
    provider_id: str | None = None
    model_id: str | None = None
    model_family: str | None = None
    min_quality_tier: str | None = None
    required_capabilities: list[str] | None = None
    allowed_model_ids: list[str] | None = None


class ConversationContextConfig(_PersonaModel):
    """How much conversation the GMI keeps (``conversationContextConfig``)."""

    max_messages: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    overflow_strategy: str | None = None


class ReasoningTraceConfig(_PersonaModel):
    """How many reasoning-trace entries the GMI keeps (500 when unset)."""

    max_entries: int | None = Field(default=None, ge=1)


class SentimentTrackingConfig(_PersonaModel):
    """Per-turn sentiment scoring and its event thresholds (``sentimentTracking``)."""

    enabled: bool = False
    method: str | None = None
    model_id: str | None = None
    provider_id: str | None = None
    history_window: int | None = None
    frustration_threshold: float | None = None
    satisfaction_threshold: float | None = None
    consecutive_turns_for_trigger: int | None = None
    presets: list[str] | None = None


class MetaPromptTrigger(_PersonaModel):
    """When a metaprompt runs: ``turn_interval``, ``event_based`` or ``manual``."""

    type: str
    interval_turns: int | None = None
    event_name: str | None = None


class MetaPromptDefinition(_PersonaModel):
    """A metaprompt the persona carries (``metaPrompts``)."""

    id: str
    description: str | None = None
    prompt_template: str | PromptTemplate
    model_id: str | None = None
    provider_id: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    output_schema: dict[str, Any] | None = None
    trigger: MetaPromptTrigger | None = None


class RagDataSource(_PersonaModel):
    """A data source retrieval reads from."""

    id: str
    data_source_name_or_id: str | None = None
    is_enabled: bool = True


class RagSummarizationConfig(_PersonaModel):
    """Summarizing an exchange before it is ingested."""

    enabled: bool = False
    target_length: int | str | None = None
    method: str | None = None
    model_id: str | None = None
    provider_id: str | None = None


class RagIngestionProcessing(_PersonaModel):
    """What happens to an exchange before ingestion."""

    summarization: RagSummarizationConfig | None = None


class RagConfig(_PersonaModel):
    """Retrieval-augmented generation settings (``memoryConfig.ragConfig``)."""

    enabled: bool = False
    default_retrieval_strategy: str | None = None
    default_retrieval_top_k: int | None = None
    data_sources: list[RagDataSource] | None = None
    retrieval_triggers: dict[str, Any] | None = None
    ingestion_triggers: dict[str, Any] | None = None
    ingestion_processing: RagIngestionProcessing | None = None
    default_ingestion_data_source_id: str | None = None


class MemoryConfig(_PersonaModel):
    """Memory settings (``memoryConfig``)."""

    enabled: bool = False
    conversation_context: ConversationContextConfig | None = None
    rag_config: RagConfig | None = None
    lifecycle_config: dict[str, Any] | None = None


class InitialMemoryImprint(_PersonaModel):
    """A fact the persona starts with."""

    key: str
    value: Any = None
    description: str | None = None


class PersonaDefinition(_PersonaModel):
    """A persona definition (reference §1.7, ``IPersonaDefinition``).

    ``id`` is required; the other required fields of the reference (name, description, version,
    base system prompt) default to empty so that `validate_persona` can report them as
    ``missing_required_field`` rather than failing to build the model.
    """

    id: str
    name: str = ""
    label: str | None = None
    description: str = ""
    version: str = ""
    base_system_prompt: str | PromptTemplate | list[PromptPart] = ""
    default_model_id: str | None = None
    default_provider_id: str | None = None
    default_model_completion_options: ModelCompletionOptions | None = None
    model_target_preferences: list[ModelTargetPreference] | None = None
    cost_saving_strategy: str | None = None
    prompt_engine_config_overrides: dict[str, Any] | None = None
    tool_ids: list[str] | None = None
    allowed_capabilities: list[str] | None = None
    embedded_tools: list[Any] | None = None
    allowed_input_modalities: list[str] | None = None
    allowed_output_modalities: list[str] | None = None
    voice_config: dict[str, Any] | None = None
    avatar_config: dict[str, Any] | None = None
    personality_traits: dict[str, TraitValue] | None = None
    mood_adaptation: MoodAdaptation | None = None
    default_language: str | None = None
    ui_interaction_style: str | None = None
    memory_config: MemoryConfig | None = None
    cognitive_memory_config: dict[str, Any] | None = None
    conversation_context_config: ConversationContextConfig | None = None
    reasoning_trace_config: ReasoningTraceConfig | None = None
    meta_prompts: list[MetaPromptDefinition] | None = None
    sentiment_tracking: SentimentTrackingConfig | None = None
    contextual_prompt_elements: list[Any] | None = None
    is_creator_persona: bool | None = None
    is_public: bool | None = None
    activation_keywords: list[str] | None = None
    strengths: list[str] | None = None
    min_subscription_tier: str | None = None
    initial_memory_imprints: list[InitialMemoryImprint] | None = None
    custom_fields: dict[str, Any] | None = None
    required_secrets: list[Any] | None = None

    @field_validator("personality_traits")
    @classmethod
    def _hexaco_in_range(cls, traits: dict[str, TraitValue] | None) -> dict[str, TraitValue] | None:
        for key in HEXACO_TRAITS:
            value = (traits or {}).get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"personality_traits.{key} must be a number from 0 to 1")
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"personality_traits.{key} must be from 0 to 1, got {value}")
        return traits

    @property
    def hexaco_traits(self) -> dict[str, float]:
        """The HEXACO entries of ``personality_traits`` (those set), as floats."""
        traits = self.personality_traits or {}
        return {
            key: float(value)
            for key in HEXACO_TRAITS
            if isinstance(value := traits.get(key), int | float) and not isinstance(value, bool)
        }

    def system_prompt_parts(self) -> list[PromptPart]:
        """The base system prompt as parts ordered by priority (stable; unset priority is 0)."""
        prompt = self.base_system_prompt
        if isinstance(prompt, str):
            return [PromptPart(content=prompt, priority=0)] if prompt else []
        if isinstance(prompt, PromptTemplate):
            return [PromptPart(content=prompt.render(), priority=0)]
        return sorted(prompt, key=lambda part: part.priority or 0)

    def system_prompt_text(self) -> str:
        """The base system prompt as one text (parts joined by a blank line)."""
        if isinstance(self.base_system_prompt, str):
            return self.base_system_prompt  # the common case, read on every model call
        return "\n\n".join(part.content for part in self.system_prompt_parts() if part.content)

    def to_json_dict(self) -> dict[str, Any]:
        """The persona as a camelCase JSON object, as the TypeScript runtime writes it."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
