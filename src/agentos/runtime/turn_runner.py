"""One turn or continuation of the full runtime: a GMI's chunks as the runtime streams them.

Spec (Output stream): the GMI's chunks pass through the `GMIChunkTransformer`; the orchestrator
builds the turn's FINAL_RESPONSE from the `GMIOutput` the turn returns. An output that stops the
turn for the host (``is_final`` false with tool calls: "An IGMI stops a turn for the host") is
saved as the session's pending request (`ToolPause`) *before* the host reads the one actionable
TOOL_CALL_REQUEST that names its calls; every other output ends the turn, or the continuation,
with one FINAL_RESPONSE. The conversation keeps the turn's input and only the reply (the GMI's
own tool rounds stay in the GMI's history), written when the turn ends; a turn that fails or
whose reader leaves early keeps nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from agentos.core.clock import Clock
from agentos.core.errors import GMIErrorCode
from agentos.core.messages import Message
from agentos.persona.definition import PersonaDefinition
from agentos.storage import ToolPause, ToolPauseStore
from agentos.storage.turn_writer import TurnWriter
from agentos.substrate.chunks import GMIOutput
from agentos.substrate.igmi import IGMITurnStream

from .chunks import AgentOSResponse, FinalResponseChunk, TextDeltaChunk
from .guardrails import GuardedOutput, GuardrailEvent, OutputRelease
from .transformer import GMIChunkTransformer

__all__ = ["TurnPlace", "stream_turn"]


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a turn runs: its session, user, persona, GMI and interaction.

    ``persona`` is the GMI's persona, whose id and name the FINAL_RESPONSE reports as its
    ``active_persona_details``; ``organization_id`` the turn's resolved organization (``None``:
    none), which a pause it makes keeps for its continuation.
    """

    session_id: str
    user_id: str
    persona_id: str
    gmi_instance_id: str
    interaction_id: str
    persona: PersonaDefinition | None = None
    organization_id: str | None = None


async def stream_turn(
    stream: IGMITurnStream,
    transformer: GMIChunkTransformer,
    place: TurnPlace,
    *,
    pauses: ToolPauseStore,
    writer: TurnWriter | None,
    user_message: Message | None,
    clock: Clock,
    guard: GuardedOutput | None = None,
    continuation: bool = False,
    answered: Sequence[Message] = (),
) -> AsyncIterator[AgentOSResponse]:
    """The runtime's chunks of one GMI turn (see the module doc); ends the store's turn.

    The conversation keeps the input and the reply; a paused turn keeps the assistant message
    that made the host's calls, and its continuation the host's results (``answered``) before
    its reply, so the stored rounds stay paired. A ``continuation``'s text is held until its
    output, so that its RAG sources reach the stream as a METADATA_UPDATE before its text, as a
    turn's do (spec: "A continuation's output reaches the stream as a turn's does: its
    ragSources as a METADATA_UPDATE before its text").

    With ``guard`` (the runtime's guardrails), the text streams as they release it, and the
    FINAL_RESPONSE and the conversation carry the released text, never the model's own; a
    block stops the model call and ends the turn with a final ERROR (``GUARDRAIL_BLOCKED``),
    keeping nothing.
    """
    finished = False
    released = _Released(guard, transformer)
    held: list[AgentOSResponse] | None = [] if continuation else None
    try:
        async for chunk in stream:
            for response in transformer.transform(chunk):
                if guard is not None and type(response) is TextDeltaChunk:
                    for guarded in await released.push(response.text_delta):
                        if held is not None:
                            held.append(guarded)
                        else:
                            yield guarded
                    if released.blocked is not None:
                        break
                elif held is not None and type(response) is TextDeltaChunk:
                    held.append(response)
                else:
                    yield response
            if released.blocked is not None:
                break
        if released.blocked is not None:
            yield released.block_error()
            return
        finish = await released.finish()
        if released.blocked is not None:
            for guarded in finish:
                yield guarded
            yield released.block_error()
            return
        output = await stream.output()
        if held is not None:
            if output.rag_sources:
                yield transformer.metadata_update({"rag_sources": list(output.rag_sources)})
            for response in held:
                yield response
        for guarded in finish:
            yield guarded
        if released.events:
            yield transformer.metadata_update({"guardrail_events": released.events})
        last: AgentOSResponse | None
        reply: Message | None
        if not output.is_final and output.tool_calls:
            last = await _pause(output, transformer, place, pauses, clock)
            reply = released.paused_round(output)
        else:
            last = released.final(transformer.final_response(output, persona=place.persona))
            reply = released.reply(output)
        if writer is not None and output.error is not None:
            finished = True
            with contextlib.suppress(Exception):  # its store may be closed (a late turn)
                await writer.discard()  # a failed turn keeps nothing, as a session's does
        elif writer is not None:
            # Stored before the host reads the last chunk: a host stops reading at the request
            # it acts on, and a process may die there (spec: the pause is saved before).
            kept = [m for m in (*answered, user_message, reply) if m is not None]
            await writer.add(kept)
            await writer.commit()
        finished = True
        if last is not None:
            yield last
    finally:
        if not finished:
            close = getattr(stream, "aclose", None)  # an IGMI's stream need not have one
            if close is not None:
                await close()
            if writer is not None:
                # A failed, blocked or abandoned turn keeps nothing; a store already closed (a
                # runtime shut down under a late turn) must not hide the turn's own error.
                with contextlib.suppress(Exception):
                    await writer.discard()


class _Released:
    """What a turn's guardrails let through: the text streamed, their decisions, a block."""

    def __init__(self, guard: GuardedOutput | None, transformer: GMIChunkTransformer) -> None:
        self._guard = guard
        self._transformer = transformer
        self._text: list[str] = []
        self.events: list[dict[str, str]] = []
        self.blocked: GuardrailEvent | None = None

    async def push(self, delta: str) -> list[AgentOSResponse]:
        assert self._guard is not None
        return self._take(await self._guard.push(delta))

    async def finish(self) -> list[AgentOSResponse]:
        if self._guard is None:
            return []
        return self._take(await self._guard.finish())

    def _take(self, release: OutputRelease) -> list[AgentOSResponse]:
        self.events.extend(event.to_dict() for event in release.events)
        if release.blocked is not None:
            self.blocked = release.blocked
        if not release.text:
            return []
        self._text.append(release.text)
        return [self._transformer.text_delta(release.text)]

    def block_error(self) -> AgentOSResponse:
        blocked = self.blocked
        assert blocked is not None
        return self._transformer.error(
            GMIErrorCode.GUARDRAIL_BLOCKED,
            f"guardrail {blocked.guardrail_id!r} blocked the reply: {blocked.reason}",
            {"guardrail_events": self.events},
        )

    def final(self, final: FinalResponseChunk) -> FinalResponseChunk:
        """The FINAL_RESPONSE carrying the released text (unchanged without guardrails)."""
        if self._guard is None:
            return final
        return replace(final, final_response_text="".join(self._text) or None)

    def paused_round(self, output: GMIOutput) -> Message:
        """The assistant message of a paused turn: its text and the calls the host runs."""
        text = "".join(self._text) if self._guard is not None else (output.response_text or "")
        return Message.assistant(text, tool_calls=list(output.tool_calls))

    def reply(self, output: GMIOutput) -> Message | None:
        """The reply the conversation keeps: the released text, else the output's."""
        text = "".join(self._text) if self._guard is not None else output.response_text
        return Message.assistant(text) if text else None


async def _pause(
    output: GMIOutput,
    transformer: GMIChunkTransformer,
    place: TurnPlace,
    pauses: ToolPauseStore,
    clock: Clock,
) -> AgentOSResponse | None:
    """Save the pending request, then the one actionable request the host reads."""
    request = transformer.external_request_for(output, output.tool_calls)
    pause = ToolPause.create(
        session_id=place.session_id,
        user_id=place.user_id,
        persona_id=place.persona_id,
        interaction_id=place.interaction_id,
        tool_calls=tuple(output.tool_calls),
        rationale=request.rationale if request is not None else None,
        gmi_instance_id=place.gmi_instance_id,
        organization_id=place.organization_id,
        clock=clock,
    )
    await pauses.save(pause)  # saved before the host reads the request (spec)
    return request
