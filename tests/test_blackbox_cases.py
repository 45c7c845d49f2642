"""Black-box cases 31, 41, 42, 47 and 48 of the reference (typescript-implementation.md §3).

Each test drives the public API (``agentos.persona``, ``agentos.substrate``, ``agentos.tools``) and
asserts the values the case gives. Where our behaviour differs from the TypeScript one on
purpose, the test's docstring says so and why.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentos.core import GMIError, GMIErrorCode, Message, Role, ToolCall, ToolResult
from agentos.llm.model import ModelRequest
from agentos.persona import (
    BUILT_IN_PERSONAS,
    OverlayContext,
    PersonaDefinition,
    PersonaEvolutionRule,
    PersonaIssueCode,
    PersonaOverlayManager,
    PersonaStrictConfig,
    PersonaValidationOptions,
    classify_persona_strict,
    validate_persona,
    validate_personas,
)
from agentos.persona.loaders import InMemoryPersonaLoader, PersonaRegistry
from agentos.substrate import (
    DISCOVERY_PRIORITY,
    FORMAT_PREFERENCE_PRIORITY,
    GMI,
    PERSONA_BASE_PRIORITY,
    PROFILE_PRIORITY,
    ROLLING_SUMMARY_PRIORITY,
    SKILLS_PRIORITY,
    SUMMARY_PREFIX,
    VERBOSITY_PREFERENCE_PRIORITY,
    ConversationHistoryManager,
    PromptEngine,
    SystemPrompt,
)
from agentos.substrate.config import GMIConfig
from agentos.substrate.gmi_manager import GMIManager, GMIManagerConfig
from agentos.testing import ScriptedModel
from agentos.tools import (
    HITL_REJECTED,
    Tool,
    ToolExecutionContext,
    ToolOrchestrator,
)

C = PersonaIssueCode


def _persona(**fields: Any) -> PersonaDefinition:
    """A persona with every required field; ``fields`` (camelCase, as in JSON) override."""
    base: dict[str, Any] = {
        "id": "p",
        "name": "P",
        "description": "A test persona.",
        "version": "1.0.0",
        "baseSystemPrompt": "You are P.",
        "costSavingStrategy": "balance_quality_cost",
    }
    base.update(fields)
    return PersonaDefinition.model_validate(base)


def _codes(persona: PersonaDefinition, **options: Any) -> list[PersonaIssueCode]:
    return validate_persona(persona, PersonaValidationOptions(**options)).codes


# --- case 31: history hydrate ------------------------------------------------------------------


HYDRATED = [
    Message(Role.SUMMARY, "X"),
    Message.user("hello"),
    Message(Role.ERROR, "provider timed out"),
    Message(Role.THOUGHT, "I should greet back"),
    Message.assistant("hi"),
]


def test_case_31_hydrate_drops_error_and_thought_and_turns_a_summary_into_system() -> None:
    """Hydrating drops ``error``/``thought`` messages; summary "X" → system with the prefix."""
    manager = ConversationHistoryManager()
    manager.hydrate_conversation_history(HYDRATED)
    assert manager.messages() == [
        Message.system("[Conversation Summary]\nX"),
        Message.user("hello"),
        Message.assistant("hi"),
    ]
    assert SUMMARY_PREFIX == "[Conversation Summary]\n"
    assert not any(m.role in (Role.ERROR, Role.THOUGHT) for m in manager.messages())


def test_case_31_a_resumed_gmi_history_and_prompt_carry_the_summary() -> None:
    """Resume: a GMI's history hydrates the same way, and the prompt sends what it holds.

    The prompt engine normalises the history it is given the same way, so a raw summary never
    reaches a provider as ``summary`` and error/thought messages are never sent.
    """
    gmi = GMI("gmi-resume")
    gmi.history.hydrate_conversation_history(HYDRATED)
    assert [(m.role, m.text) for m in gmi.history.messages()] == [
        (Role.SYSTEM, "[Conversation Summary]\nX"),
        (Role.USER, "hello"),
        (Role.ASSISTANT, "hi"),
    ]
    built = PromptEngine().build(
        provider="openai",
        model="gpt-4o",
        system_prompts=[SystemPrompt("You are P.", PERSONA_BASE_PRIORITY)],
        history=HYDRATED,
        current_turn=[Message.user("and now?")],
    )
    assert [(m.role, m.text) for m in built.messages] == [
        (Role.SYSTEM, "You are P."),
        (Role.SYSTEM, "[Conversation Summary]\nX"),
        (Role.USER, "hello"),
        (Role.ASSISTANT, "hi"),
        (Role.USER, "and now?"),
    ]


# --- case 41: persona validation codes and strict mode -----------------------------------------


def test_case_41_version_1_0_is_invalid_semver() -> None:
    report = validate_persona(_persona(version="1.0"))
    assert report.codes == [C.INVALID_SEMVER]
    assert report.issues[0].severity == "error"
    assert not report.valid


def test_case_41_default_language_english_bang_is_invalid_bcp47() -> None:
    """``invalid_bcp47_language`` is an error, as in the reference's PersonaValidation.ts."""
    report = validate_persona(_persona(defaultLanguage="english!"))
    assert report.codes == [C.INVALID_BCP47_LANGUAGE]
    assert report.issues[0].severity == "error"


def test_case_41_duplicate_and_unknown_tool_ids() -> None:
    """toolIds [a, a] with known {b} → ``duplicate_tool_id`` + ``unknown_tool_id`` (errors).

    The reference reports ``unknown_tool_id`` once per occurrence (twice here); we report each
    unknown id once.
    """
    report = validate_persona(
        _persona(toolIds=["a", "a"]), PersonaValidationOptions(known_tool_ids={"b"})
    )
    assert report.codes == [C.DUPLICATE_TOOL_ID, C.UNKNOWN_TOOL_ID]
    assert [i.severity for i in report.issues] == ["error", "error"]


def test_case_41_voice_config_without_audio_tts_is_a_warning() -> None:
    """A voice config needs an audio output modality (``audio_tts``, or our ``audio``)."""
    report = validate_persona(_persona(voiceConfig={"voiceId": "v1"}))
    assert report.codes == [C.VOICE_CONFIG_WITHOUT_AUDIO_OUTPUT]
    assert report.issues[0].severity == "warning"
    assert report.valid
    for modality in ("audio_tts", "audio"):
        persona = _persona(voiceConfig={"voiceId": "v1"}, allowedOutputModalities=[modality])
        assert _codes(persona) == []


def test_case_41_no_cost_saving_strategy_is_a_suggestion() -> None:
    report = validate_persona(_persona(costSavingStrategy=None))
    assert report.codes == [C.MISSING_COST_STRATEGY]
    assert report.issues[0].severity == "suggestion"
    assert report.valid


def test_case_41_a_shared_activation_keyword_conflicts_on_both_personas() -> None:
    reports = validate_personas(
        [
            _persona(id="helper_a", activationKeywords=["help", "alpha"]),
            _persona(id="helper_b", activationKeywords=["help", "beta"]),
        ]
    )
    for persona_id, other in (("helper_a", "helper_b"), ("helper_b", "helper_a")):
        report = reports[persona_id]
        assert report.codes == [C.ACTIVATION_KEYWORD_CONFLICT]
        assert report.issues[0].severity == "warning"
        assert "'help'" in report.issues[0].message
        assert other in report.issues[0].message


@pytest.mark.parametrize("persona", BUILT_IN_PERSONAS, ids=lambda p: p.id)
def test_case_41_every_built_in_validates(persona: PersonaDefinition) -> None:
    """DESIGN §5.7 overrides the case: all five built-ins validate.

    The TypeScript ``default_free_assistant`` fails for want of a description; ours has one. The
    GMIManager's options are used (reserved ids, 4000 characters, 2000 tokens).
    """
    options = PersonaValidationOptions(
        reserved_persona_ids={"system_admin", "internal_default"},
        max_system_prompt_length=4000,
        max_system_prompt_tokens=2000,
    )
    report = validate_persona(persona, options)
    assert report.errors == [], report.summary()
    assert report.valid


def test_case_41_strict_mode_blocking_on_invalid_semver_is_invalid() -> None:
    """Strict ``{enabled, blockOnCodes: ['invalid_semver']}`` → status ``invalid``.

    The case's second half (``getOrCreateGMIForSession`` → ``AUTH_PERMISSION_DENIED``) is the
    test below.
    """
    strict = PersonaStrictConfig(mode="enforce", block_on_codes=["invalid_semver"])
    result = classify_persona_strict(validate_persona(_persona(version="1.0")), strict)
    assert result.status == "invalid"
    assert result.blocked
    assert [issue.code for issue in result.blocking] == [C.INVALID_SEMVER]
    # Only the listed codes block: a persona with another error passes this config.
    other = classify_persona_strict(validate_persona(_persona(toolIds=["a", "a"])), strict)
    assert other.status == "valid"
    assert classify_persona_strict(validate_persona(_persona()), strict).status == "valid"


async def test_case_41_a_blocked_persona_is_refused_by_the_gmi_manager() -> None:
    """``getOrCreateGMIForSession`` with a strict-blocked persona → ``AUTH_PERMISSION_DENIED``."""
    registry = PersonaRegistry(InMemoryPersonaLoader([_persona(version="1.0"), _persona(id="ok")]))
    await registry.load()
    manager = GMIManager(
        GMIManagerConfig(
            base_config=GMIConfig(model=ScriptedModel([])),
            personas=registry,
            persona_strict=PersonaStrictConfig(mode="enforce", block_on_codes=["invalid_semver"]),
        )
    )
    with pytest.raises(GMIError) as caught:
        await manager.get_or_create_gmi_for_session("u1", "s1", "p")
    assert caught.value.code is GMIErrorCode.PERMISSION_DENIED
    assert caught.value.details["codes"] == [str(C.INVALID_SEMVER)]
    assert manager.gmi_for_session("s1") is None
    allowed = await manager.get_or_create_gmi_for_session("u1", "s2", "ok")
    assert allowed.persona.id == "ok"
    await manager.shutdown()


# --- case 42: persona overlays -----------------------------------------------------------------


FOCUS_RULE = PersonaEvolutionRule.model_validate(
    {
        "id": "focus",
        "trigger": "always",
        "patch": {
            "mood": "focused",
            "personaTraits": {"tone": "concise"},
            "metadata": {"overlayApplied": True},
        },
    }
)


def test_case_42_an_always_rule_patches_mood_traits_and_custom_fields() -> None:
    persona = _persona(
        personalityTraits={"honesty": 0.8, "tone": "warm", "verbosity": "medium"},
        customFields={"team": "core"},
    )
    manager = PersonaOverlayManager()
    overlay = manager.apply_for_session(
        "agency-1::writer", persona, [FOCUS_RULE], OverlayContext(role_id="writer")
    )
    assert "focus" in overlay.applied_rules
    assert overlay.persona_id == "p"
    resolved = manager.resolve_persona("agency-1::writer", persona)
    assert resolved.mood_adaptation is not None
    assert resolved.mood_adaptation.default_mood == "focused"
    assert resolved.mood_adaptation.enabled is True
    assert resolved.personality_traits == {"honesty": 0.8, "tone": "concise", "verbosity": "medium"}
    assert resolved.custom_fields == {"team": "core", "overlayApplied": True}
    # The base persona is left as it was.
    assert persona.mood_adaptation is None
    assert persona.personality_traits is not None
    assert persona.personality_traits["tone"] == "warm"


def test_case_42_first_activation_applies_only_when_previously_activated_is_falsy() -> None:
    boot = PersonaEvolutionRule.model_validate(
        {"id": "boot", "trigger": "first_activation", "patch": {"mood": "curious"}}
    )
    persona = _persona()
    manager = PersonaOverlayManager()
    for falsy in (None, False, 0):
        metadata = {} if falsy is None else {"previouslyActivated": falsy}
        overlay = manager.apply_rules(persona, [boot], OverlayContext(metadata=metadata))
        assert overlay.applied_rules == ["boot"], falsy
        assert overlay.patched_definition.mood_adaptation is not None
        assert overlay.patched_definition.mood_adaptation.default_mood == "curious"
    refused = manager.apply_rules(
        persona, [boot], OverlayContext(metadata={"previouslyActivated": True})
    )
    assert refused.applied_rules == []
    assert refused.patched_definition.mood_adaptation is None
    # A session's own earlier overlay counts as a previous activation too.
    first = manager.apply_rules(persona, [boot], OverlayContext())
    again = manager.apply_rules(
        persona,
        [boot, FOCUS_RULE],
        OverlayContext(metadata={"previouslyActivated": False}),
        previous_overlay=first,
    )
    assert first.metadata["previouslyActivated"] is True
    assert again.applied_rules == ["boot", "focus"]  # boot is kept from the first overlay
    assert again.patched_definition.mood_adaptation is not None
    assert again.patched_definition.mood_adaptation.default_mood == "focused"


# --- case 47: system prompt order --------------------------------------------------------------


ORDERED_PROMPTS = [
    ("You are P.", PERSONA_BASE_PRIORITY, 1),
    ("Earlier: the user planned a trip.", ROLLING_SUMMARY_PRIORITY, 50),
    ("Capabilities you can discover: search.", DISCOVERY_PRIORITY, 55),
    ("Skill: itinerary planning.", SKILLS_PRIORITY, 57),
    ("User profile: likes trains.", PROFILE_PRIORITY, 60),
    ("User response preference: give a detailed answer.", VERBOSITY_PREFERENCE_PRIORITY, 90),
    ("Format the response as a markdown table.", FORMAT_PREFERENCE_PRIORITY, 91),
]


def _build_case_47(provider: str, model: str) -> list[Message]:
    shuffled = [ORDERED_PROMPTS[i] for i in (5, 2, 6, 0, 4, 1, 3)]
    built = PromptEngine().build(
        provider=provider,
        model=model,
        system_prompts=[SystemPrompt(text, priority) for text, priority, _ in shuffled],
        current_turn=[Message.user("Plan my week.")],
    )
    return built.messages


def test_case_47_system_prompts_come_in_priority_order() -> None:
    """base @1, summary @50, discovery @55, skills @57, profile @60, preferences @90/@91.

    Our PromptEngine emits one provider-neutral system message per prompt, in that order; the
    adapters decide how a provider receives them (reference §1.23: "let provider adapters
    format").
    """
    assert [priority for _, priority, _ in ORDERED_PROMPTS] == [
        expected for _, _, expected in ORDERED_PROMPTS
    ]
    messages = _build_case_47("openai", "gpt-4o")
    assert [(m.role, m.text) for m in messages] == [
        *((Role.SYSTEM, text) for text, _, _ in ORDERED_PROMPTS),
        (Role.USER, "Plan my week."),
    ]


def test_case_47_the_anthropic_adapter_joins_them_with_blank_lines_into_one_system() -> None:
    """The case's "joined in that order with blank lines into one system message", at the
    Anthropic adapter, which joins leading system messages with ``"\\n\\n"`` into ``system``.

    The OpenAI-wire and Gemini adapters keep one system message (one instruction part) per
    prompt, in the same order, instead of joining them.
    """
    from agentos.llm.providers._anthropic_request import build_params

    messages = _build_case_47("anthropic", "claude-sonnet-4-5")
    params, _plan = build_params("claude-sonnet-4-5", ModelRequest(messages=messages))
    assert params["system"] == "\n\n".join(text for text, _, _ in ORDERED_PROMPTS)
    assert params["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Plan my week."}]}
    ]


# --- case 48: tool orchestration ---------------------------------------------------------------


def echo(x: int) -> dict[str, int]:
    """Echo a number.

    Args:
        x: The number.
    """
    return {"x": x}


def _code(result: ToolResult) -> str:
    assert result.is_error
    assert result.error_details is not None
    return str(result.error_details["code"])


def _message(result: ToolResult) -> str:
    assert result.is_error
    assert result.error_details is not None
    return str(result.error_details["message"])


async def test_case_48_an_unknown_tool_is_tool_not_found() -> None:
    result = await ToolOrchestrator([Tool.from_function(echo)]).process_tool_call(
        ToolCall("c1", "nope", {})
    )
    assert result.is_error
    assert _code(result) == "TOOL_NOT_FOUND"
    assert GMIErrorCode.TOOL_NOT_FOUND.value == "TOOL_NOT_FOUND"


async def test_case_48_a_globally_disabled_tool_is_permission_denied() -> None:
    orchestrator = ToolOrchestrator([Tool.from_function(echo)], disabled=["echo"])
    result = await orchestrator.process_tool_call(ToolCall("c1", "echo", {"x": 1}))
    assert _code(result) == "AUTH_PERMISSION_DENIED"
    assert GMIErrorCode.PERMISSION_DENIED.value == "AUTH_PERMISSION_DENIED"
    assert orchestrator.list_tools() == []


async def test_case_48_a_tool_needing_web_is_denied_for_a_persona_with_no_capabilities() -> None:
    ran: list[str] = []

    def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return "results"

    web = Tool.from_function(search, required_capabilities=["web"])
    orchestrator = ToolOrchestrator([web], allowed_capabilities=[])
    result = await orchestrator.process_tool_call(ToolCall("c1", "search", {"query": "q"}))
    assert _code(result) == "AUTH_PERMISSION_DENIED"
    assert "web" in _message(result)
    assert ran == []


async def test_case_48_bad_json_arguments_fail_to_parse() -> None:
    call = ToolCall("c1", "echo", '{"x":')  # type: ignore[arg-type]
    result = await ToolOrchestrator([Tool.from_function(echo)]).process_tool_call(call)
    assert "Failed to parse arguments" in _message(result)
    assert result.output == _message(result)
    assert _code(result) == "SYS_VALIDATION_ERROR"


async def test_case_48_a_missing_required_argument_is_invalid_arguments() -> None:
    result = await ToolOrchestrator([Tool.from_function(echo)]).process_tool_call(
        ToolCall("c1", "echo", {})
    )
    assert "Invalid arguments for tool" in _message(result)
    assert "x: Field required" in _message(result)


async def test_case_48_session_data_reaches_the_tools_context() -> None:
    seen: list[dict[str, Any]] = []

    def peek(ctx: ToolExecutionContext) -> str:
        """Look at the session."""
        seen.append(ctx.session_data)
        return str(ctx.session_data.get("cart"))

    session: dict[str, Any] = {"cart": ["book"]}
    result = await ToolOrchestrator([Tool.from_function(peek)]).process_tool_call(
        ToolCall("c1", "peek", {}),
        ToolExecutionContext(gmi_id="g", persona_id="p", session_data=session),
    )
    assert result == ToolResult("c1", "peek", "['book']")
    assert seen == [session]
    assert seen[0] is session


async def test_case_48_hitl_rejection_of_a_side_effect_tool_does_not_run_it() -> None:
    """HITL on + side-effect tool + rejection → error result, reason contains "HITL", not run.

    Our approver is a callback on the orchestrator (the reference's HITL manager's
    ``requestApproval``); the reason is in ``error_details["details"]["reason"]`` and the
    message.
    """
    sent: list[str] = []

    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    asked: list[str] = []

    def reject(call: ToolCall, tool: Tool, ctx: ToolExecutionContext | None) -> bool:
        asked.append(tool.name)
        return False

    mailer = Tool.from_function(send_email, has_side_effects=True)
    orchestrator = ToolOrchestrator([mailer], approve=reject)
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "a@b"}))
    assert result.is_error
    assert _code(result) == "AUTH_PERMISSION_DENIED"
    assert result.error_details is not None
    assert "HITL" in result.error_details["details"]["reason"]
    assert result.error_details["details"]["reason"] == HITL_REJECTED
    assert HITL_REJECTED in _message(result)
    assert asked == ["send_email"]
    assert sent == []
