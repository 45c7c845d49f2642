"""What the full runtime prepares before a turn or a continuation runs on a GMI.

Spec: "On the full runtime, a request's options are the turn's metadata.options: the
temperature, topP, maxTokens and responseFormat of a processRequest() call reach the provider,
and its preferredModelId picks the turn's model"; "The full runtime passes its stored
conversation this way" (``conversation_history_for_prompt``), bounded by the history window
(DESIGN §5.4: the persona's ``conversation_context_config.max_messages``, else the runtime's
``history_window``, else 20); an IGMI that implements only ``handle_tool_result()`` "receives
the host's result alone". The input guardrails run before the turn (DESIGN §5.15).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.llm.schema_prompt import schema_instruction
from agentos.persona.definition import PersonaDefinition
from agentos.storage import SessionHistoryBuffer, ToolPause, is_partial
from agentos.substrate.gmi import GMI
from agentos.substrate.igmi import (
    IGMI,
    IGMITurnStream,
    SingleToolResultHandler,
    ToolResultsHandler,
)
from agentos.substrate.prompt_engine import SystemPrompt
from agentos.substrate.turn_input import GMITurnInput
from agentos.substrate.turn_options import TurnOptions

from .chunks import AgentOSResponse
from .conversations import DEFAULT_HISTORY_WINDOW
from .guardrails import GuardrailRunner, hard_limits_prompt, persona_hard_limits
from .request import AgentOSInput, RequestOptions
from .transformer import GMIChunkTransformer

__all__ = [
    "CheckedInput",
    "TurnLearning",
    "check_input",
    "continue_with",
    "guard_tool_call",
    "history_size",
    "resume_paused_round",
    "structured_reply_instruction",
    "turn_input",
]


def history_size(persona: PersonaDefinition, runtime_window: int | None) -> int:
    """The messages of the conversation a turn sees (see the module doc)."""
    context = persona.conversation_context_config
    size = context.max_messages if context is not None else None
    return size or runtime_window or DEFAULT_HISTORY_WINDOW


@dataclass(frozen=True, slots=True)
class TurnLearning:
    """What the runtime tells a GMI's learner session about a turn (spec "Learning": Learners).

    ``namespace``: the turn's resolved organization (the request's ``organization_id``, else
    the config's ``default_organization_id``, else ``''``), resolved before the GMI is
    acquired; ``workflow_id``: the request's ``metadata.workflow_id``; ``seat``: the turn runs
    on a workflow seat's GMI; ``skills``: the enabled skills' prompt text.
    """

    namespace: str = ""
    workflow_id: str | None = None
    seat: bool = False
    skills: str | None = None


_NO_LEARNING = TurnLearning()
"""A turn's learning fields on a runtime with no layer and no self-improvement tools."""


def turn_input(
    turn: AgentOSInput,
    interaction_id: str,
    text: str | None,
    earlier: Sequence[Message],
    discovery: str | None = None,
    persona: PersonaDefinition | None = None,
    *,
    learning: TurnLearning | None = None,
) -> GMITurnInput:
    """The GMI's input for ``turn``: its (checked) text, contexts and options as typed options.

    The request's ``metadata`` is passed on as the host's data; the GMI reads none of it.
    """
    options = turn.options
    learned = learning or _NO_LEARNING
    return GMITurnInput(
        interaction_id=interaction_id,
        user_id=turn.user_id,
        content=text,
        session_id=turn.session_id,
        user_context_override=dict(turn.user_context_override or {}) or None,
        task_context_override=dict(turn.task_context_override or {}) or None,
        options=TurnOptions(
            temperature=options.temperature,
            top_p=options.top_p,
            max_tokens=options.max_tokens,
            response_format=options.response_format,
            preferred_model_id=_preferred_model(options),
            conversation_history_for_prompt=tuple(earlier) or None,
            max_steps=options.max_tool_call_iterations,
            structured_reply=structured_reply_instruction(options.structured_reply),
            capability_discovery=discovery,
            system_prompts=_hard_limits(persona),
            learning_namespace=learned.namespace or None,
            workflow_id=learned.workflow_id,
            workflow_seat=learned.seat,
            skill_prompt_context=learned.skills,
        ),
        metadata=dict(turn.metadata),
    )


# A session's GMI keeps its persona object for its life: the block is rendered once per
# persona object, not on every turn. The entry holds the persona, so its id is not reused.
_HARD_LIMITS: dict[int, tuple[PersonaDefinition, tuple[SystemPrompt, ...]]] = {}
_HARD_LIMITS_MAX = 1024


def _hard_limits(persona: PersonaDefinition | None) -> tuple[SystemPrompt, ...]:
    """The persona's "Hard limits" block, when its file carries ``hardLimits`` (issue 13)."""
    if persona is None:
        return ()
    held = _HARD_LIMITS.get(id(persona))
    if held is not None and held[0] is persona:
        return held[1]
    block = hard_limits_prompt(persona_hard_limits(persona))
    rendered = (block,) if block is not None else ()
    if len(_HARD_LIMITS) >= _HARD_LIMITS_MAX:
        _HARD_LIMITS.clear()
    _HARD_LIMITS[id(persona)] = (persona, rendered)
    return rendered


def _preferred_model(options: RequestOptions) -> str | None:
    """``provider:model`` when the request names both (DESIGN §5.20), else the model."""
    model, provider = options.preferred_model_id, options.preferred_provider_id
    if model is not None and provider is not None and ":" not in model:
        return f"{provider}:{model}"
    return model


def structured_reply_instruction(reply: Mapping[str, Any] | None) -> str | None:
    """The system prompt of a structured reply: its instructions, then the schema to answer in.

    The schema is worded as the schema message of a model that cannot enforce one
    (`schema_instruction`), so the reply is the JSON alone; the turn's hops add no copy.
    """
    if reply is None:
        return None
    schema = schema_instruction(reply["schema"], reply.get("name"))
    extra = reply.get("instructions")
    return f"{extra}\n\n{schema}" if extra else schema


@dataclass(frozen=True, slots=True)
class CheckedInput:
    """The input after the guardrails: the text the turn runs on, what to stream first."""

    text: str | None
    responses: list[AgentOSResponse] = field(default_factory=list)
    blocked: bool = False


async def check_input(
    runner: GuardrailRunner | None, text: str | None, transformer: GMIChunkTransformer
) -> CheckedInput:
    """Run the input guardrails: a block gives a final ERROR, decisions a METADATA_UPDATE."""
    if runner is None or not text:
        return CheckedInput(text)
    check = await runner.check_input(text)
    events = [event.to_dict() for event in check.events]
    if check.blocked is not None:
        error = transformer.error(
            GMIErrorCode.GUARDRAIL_BLOCKED,
            f"guardrail {check.blocked.guardrail_id!r} blocked the input: {check.blocked.reason}",
            {"guardrail_events": events},
        )
        return CheckedInput(None, [error], blocked=True)
    responses: list[AgentOSResponse] = []
    if events:
        responses.append(transformer.metadata_update({"guardrail_events": events}))
    return CheckedInput(check.text, responses)


def guard_tool_call(runner: GuardrailRunner) -> Callable[[ToolCall], Awaitable[ToolCall | None]]:
    """A ``before_tool_call`` hook: a blocked call is skipped, a redacted one runs redacted."""

    async def vet(call: ToolCall) -> ToolCall | None:
        check = await runner.check_tool_call(call.name, call.arguments)
        if check.blocked is not None:
            return None
        if check.arguments != call.arguments:
            return ToolCall(call.id, call.name, check.arguments)
        return call

    return vet


def resume_paused_round(gmi: IGMI, conversation: SessionHistoryBuffer, pause: ToolPause) -> None:
    """Give a GMI that did not run the paused turn the round it continues (a restart, say).

    Spec (reference ``resumeExternalToolRequest``: the GMI is rebuilt and its history hydrated):
    when the GMI's history has no pending call of the pause, its history becomes the stored
    conversation, which ends with the assistant message that made the pause's calls. A GMI that
    does not expose its history (an IGMI without ``pending_tool_calls`` /
    ``hydrate_conversation_history``) is left as it is.
    """
    pending = getattr(gmi, "pending_tool_calls", None)
    hydrate = getattr(gmi, "hydrate_conversation_history", None)
    if pending is None or hydrate is None:
        return
    wanted = set(pause.tool_call_ids)
    if {call.id for call in pending()} >= wanted:
        return  # the same GMI ran the turn: its own history holds the round
    held = conversation.messages()
    last = held[-1] if held else None
    if last is None or is_partial(last) or not wanted <= {call.id for call in last.tool_calls}:
        # A conversation stored before it kept the paused round: rebuild the round's message.
        last = Message.assistant(tool_calls=list(pause.tool_calls))
    # What a request may carry leaves the unanswered round out; it is what is being answered.
    hydrate([*conversation.prompt_messages(), last])


async def continue_with(
    gmi: IGMI,
    results: Sequence[ToolResult],
    answered: Sequence[ToolResult],
    user_id: str,
    options: TurnOptions | None = None,
) -> IGMITurnStream:
    """The continuation's stream: every answer at once, or the host's one result.

    Spec (the IGMI pause): "an IGMI that implements handleToolResults() receives, after the
    host's results, an error result for each call the host left out (... EXTERNAL_TOOL_NOT_RUN)
    ... one that implements only handleToolResult() receives the host's result alone".
    ``answered`` is ``results`` followed by those error results. A `GMI` also receives the
    continuation's typed ``options`` (its learning namespace); another IGMI's protocol takes
    none.
    """
    if isinstance(gmi, GMI):
        return await gmi.handle_tool_results(list(answered), user_id=user_id, options=options)
    if isinstance(gmi, ToolResultsHandler):
        return await gmi.handle_tool_results(list(answered), user_id=user_id)
    if isinstance(gmi, SingleToolResultHandler) and len(results) == 1:
        result = results[0]
        outcome: dict[str, Any] = (
            {"type": "error", "error": dict(result.error_details or {"message": result.output})}
            if result.is_error
            else {"type": "success", "result": result.output}
        )
        return await gmi.handle_tool_result(
            result.tool_call_id, result.tool_name, outcome, user_id=user_id
        )
    raise GMIError(
        "the session's GMI cannot continue a paused turn with these results",
        GMIErrorCode.NOT_SUPPORTED,
        {"option": "results", "count": len(results)},
    )
