"""One model step of a GMI turn as chunks (spec: Output stream; Billed failures count).

`stream_model_step()` streams a step through the gateway turn and hands each provider chunk's
chunks to ``emit`` as it arrives: TEXT_DELTA and TOOL_CALL_REQUEST, then the chunk's
USAGE_UPDATE. A failed attempt the provider billed becomes a USAGE_UPDATE marked
``attempt_failed`` with its hop, whether it failed before output (the gateway then moves on) or
after it (the step fails); its usage is the one the error reports, else the step's last report.
A step stopped early (the turn aborted or its consumer gone) is billed what the gateway settled
for it, an estimate unless it had finished (DESIGN §5.19); no chunk is emitted for it then.
`step_finished_payload()` describes a completed step for its STEP_FINISHED chunk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from agentos.core.usage import ModelUsage
from agentos.gmi.chunks import GMIOutputChunkType, StepFinishedPayload
from agentos.llm.gateway import AttemptFailed, GatewayTurn, Hop
from agentos.llm.model import ModelRequest, TextDelta, ToolCallChunk, UsageChunk, closing_stream
from agentos.loop.collector import StepCollector

__all__ = ["Emit", "step_finished_payload", "stream_model_step"]

INTERNAL_CALL_METADATA = {"execution_mode": "internal", "requires_external_tool_result": False}
"""A TOOL_CALL_REQUEST's metadata: the GMI runs these calls itself."""


class Emit(Protocol):
    """Hands one chunk of the turn to its consumer."""

    def __call__(self, type: GMIOutputChunkType, content: Any, **fields: Any) -> Awaitable[None]:
        """Emit a chunk of ``type`` with ``content`` and the chunk's other ``fields``."""
        ...


async def stream_model_step(
    gateway_turn: GatewayTurn,
    build: Callable[[Hop], ModelRequest],
    emit: Emit,
    billed: list[ModelUsage],
) -> StepCollector:
    """Run one step, emitting its chunks; billed failed attempts are appended to ``billed``.

    Raises the step's failure as `StepCollector.failure()` words it (a `GMIError`).
    """
    step = StepCollector()
    failed_hop: Hop | None = None
    try:
        async with closing_stream(gateway_turn.stream_step(build)) as items:
            async for item in items:
                if isinstance(item, AttemptFailed):
                    failed_hop = item.hop
                    usage = item.usage
                    if usage is None and item.after_output:
                        usage = step.usage
                    if usage is not None:
                        billed.append(usage)
                        await emit(
                            GMIOutputChunkType.USAGE_UPDATE,
                            usage,
                            usage=usage,
                            metadata={
                                "attempt_failed": True,
                                "hop": item.hop.index,
                                "provider_id": item.hop.provider_id,
                                "model_id": item.hop.model_id,
                            },
                        )
                    continue
                step.add(item)
                if type(item) is TextDelta:
                    if item.text:
                        await emit(GMIOutputChunkType.TEXT_DELTA, item.text)
                elif isinstance(item, ToolCallChunk):
                    await emit(
                        GMIOutputChunkType.TOOL_CALL_REQUEST,
                        [item.tool_call],
                        metadata=dict(INTERNAL_CALL_METADATA),
                    )
                elif isinstance(item, UsageChunk):
                    await emit(GMIOutputChunkType.USAGE_UPDATE, item.usage, usage=item.usage)
    except Exception as exc:
        raise step.failure(exc, failed_hop) from exc
    except BaseException:
        if gateway_turn.left_early_usage is not None:
            billed.append(gateway_turn.left_early_usage)
        raise
    return step


def step_finished_payload(step: StepCollector, hop: Hop, step_index: int) -> StepFinishedPayload:
    """The STEP_FINISHED payload of a completed step served by ``hop``."""
    finish = step.finish
    return StepFinishedPayload(
        step_index=step_index,
        text=step.text,
        finish_reason=step.finish_reason,
        provider_id=hop.provider_id,
        model_id=hop.model_id,
        hop=hop.index,
        usage=step.usage,
        response_model=finish.response_model if finish is not None else None,
        service_tier=finish.service_tier if finish is not None else None,
        provider_message_id=finish.provider_message_id if finish is not None else None,
        cache_diagnostics=finish.cache_diagnostics if finish is not None else None,
        thinking_blocks=list(step.replay_blocks) or None,
    )
