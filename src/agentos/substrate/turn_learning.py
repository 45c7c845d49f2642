"""A turn's learning step: its personality section and learner (spec: Learning).

With ``GMIConfig.learning`` set, a user turn asks the learner session to prepare it
(`prepare_learning()`), once, before its first model call: "The section is prepared once per user
turn, before the first model call, and every model step of the turn sends the same text." The
session gets `PREPARE_TIMEOUT_S` on the GMI's clock. "A learner session that rejects, answers with
no preparation or does not answer within 2,000 ms never fails the turn: the GMI sends the section
it renders from the persona's traits, the turn has no learner, and the reasoning trace holds a
WARNING" (`fallback_preparation()`: the authored traits, mode on). The turn's learner and mode
go in ``session_data["learning"]`` for its tool calls. "A tool continuation belongs to the turn it
continues": it reuses the preparation of the user turn it continues; one that continues a turn
this GMI did not prepare (a GMI built again to resume a stored turn) prepares with
``continuation=True``.

The turn's namespace, workflow id and seat flag are the typed options the host sets
(`TurnOptions.learning_namespace`, ``workflow_id``, ``workflow_seat``); the input's metadata is
the host's own data and is never read here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

from agentos.core.clock import Clock
from agentos.core.messages import TextPart
from agentos.llm.model import ChatModel
from agentos.persona.definition import PersonaDefinition
from agentos.persona.personality import personality_section
from agentos.substrate.learning_seam import (
    LEARNING_KEY,
    PERSONALITY_PRIORITY,
    PREPARE_TIMEOUT_S,
    LearnerSessionLike,
    PreparedTurn,
    TurnPreparation,
)
from agentos.substrate.prompt_engine import SystemPrompt
from agentos.substrate.state import GMIState
from agentos.substrate.trace import ReasoningEntryType
from agentos.substrate.turn_input import GMITurnInput
from agentos.substrate.turn_options import TurnOptions

__all__ = [
    "apply_learning",
    "continues_carried",
    "fallback_preparation",
    "prepare_learning",
    "turn_model_ids",
    "turn_preparation",
]


def fallback_preparation(authored_traits: Mapping[str, object]) -> PreparedTurn:
    """The section the GMI renders itself from the persona's authored traits; no learner."""
    section = personality_section(authored_traits)
    prompts = (SystemPrompt(section, PERSONALITY_PRIORITY, "personality"),) if section else ()
    return PreparedTurn(system_prompts=prompts, learner="none", mode="on")


def _text(turn_input: GMITurnInput) -> str:
    content = turn_input.content
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return " ".join(part.text for part in content if isinstance(part, TextPart) and part.text)


def turn_model_ids(
    persona: PersonaDefinition, options: TurnOptions, model: ChatModel | None
) -> tuple[str, ...]:
    """The model the turn starts on, as far as the GMI knows it before its first call."""
    chosen = options.preferred_model_id or persona.default_model_id
    if model is not None:
        chosen = model.model_id
    return (chosen,) if chosen else ()


def continues_carried(continuation: bool, options: TurnOptions, carried_namespace: str) -> bool:
    """Whether a turn reuses the carried preparation (prepared under ``carried_namespace``).

    Only a continuation does, and only under its turn's namespace: one whose typed options name
    no namespace (``learning_namespace`` ``None``) belongs to the turn it continues; one that
    names another (``''`` included: none) is a turn of another namespace.
    """
    if not continuation:
        return False
    namespace = options.learning_namespace
    return namespace is None or namespace == carried_namespace


def turn_preparation(
    turn_input: GMITurnInput,
    turn_id: str,
    model_ids: tuple[str, ...],
    *,
    continuation: bool,
    options: TurnOptions | None = None,
) -> TurnPreparation:
    """What the GMI tells its learner session about this turn (from its typed options).

    ``options`` defaults to the input's own (`GMITurnInput.options`).
    """
    chosen = turn_input.options if options is None else options
    return TurnPreparation(
        turn_id=turn_id,
        user_id=turn_input.user_id,
        namespace=chosen.learning_namespace or "",
        text=_text(turn_input),
        model_ids=model_ids,
        workflow_seat=chosen.workflow_seat is True,
        workflow_id=chosen.workflow_id or None,
        continuation=continuation,
    )


async def _bounded(
    session: LearnerSessionLike, turn: TurnPreparation, clock: Clock
) -> PreparedTurn | str:
    """The session's answer, or why there is none (a raise, ``None`` or no answer in time)."""
    task = asyncio.ensure_future(session.prepare_turn(turn))
    timer = asyncio.ensure_future(clock.sleep(PREPARE_TIMEOUT_S))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()  # the turn was aborted while it waited: the preparation goes with it
        raise
    finally:
        timer.cancel()
    if not task.done():
        task.cancel()  # bounded on the GMI's own clock; the late answer is not waited for
        with contextlib.suppress(BaseException):
            await task
        return f"no answer within {int(PREPARE_TIMEOUT_S * 1000)} ms"
    if task.cancelled():
        return "the preparation was cancelled"
    error = task.exception()
    if error is not None:
        return f"it raised {type(error).__name__}: {error}"
    answer = task.result()
    if not isinstance(answer, PreparedTurn):
        return "it answered with no preparation"
    return answer


async def prepare_learning(
    state: GMIState,
    session: LearnerSessionLike,
    turn: TurnPreparation,
    authored_traits: Mapping[str, object],
    clock: Clock,
) -> PreparedTurn:
    """Prepare the turn with ``session``; never raises (a failure falls back, with a WARNING).

    Also puts the turn's learner and mode in ``state.session_data["learning"]``.
    """
    answer = await _bounded(session, turn, clock)
    if isinstance(answer, str):
        state.record(
            ReasoningEntryType.WARNING,
            f"the learner session did not prepare the turn ({answer}); "
            "the personality section is rendered from the persona's traits and the turn has "
            "no learner",
            {"reason": answer},
            turn.turn_id,
        )
        prepared = fallback_preparation(authored_traits)
    else:
        prepared = answer
    apply_learning(state, prepared)
    return prepared


def apply_learning(state: GMIState, prepared: PreparedTurn) -> None:
    """Hand the turn's learner and mode to its tool calls (``session_data["learning"]``)."""
    state.session_data[LEARNING_KEY] = {"learner": prepared.learner, "mode": prepared.mode}
