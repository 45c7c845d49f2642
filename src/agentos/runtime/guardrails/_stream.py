"""The guarded output stream: deltas in, checked batches out (issue 13 item 6).

Each guardrail is one stage of a pipeline, in the runner's order; a stage's input is what the
stage before it released. On every ``push(delta)`` a stage appends its input to its pending text,
asks its guardrail's ``output_tail(pending)`` how much to hold back, and sends the rest as one
`OutputBatch` to ``check_output``. What the decision releases (the batch, its redaction, or the
part a block still lets through) goes to the next stage. ``finish()`` sends each stage's whole
pending text with ``final=True``, in order, so nothing held back is lost.

A block stops the stream: the stages after the blocking one are finished with the text it let
through, the stages before it drop what they hold, and later pushes release nothing. The first
block in the pipeline's order is the stream's `blocked` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentos.core.errors import GMIError, GMIErrorCode

from ._decision import (
    Block,
    GuardrailEvent,
    GuardrailStage,
    Redact,
    decision_event,
)
from ._protocol import Guardrail, OutputBatch

__all__ = ["GuardedOutput", "OutputRelease"]


@dataclass(frozen=True, slots=True)
class OutputRelease:
    """What one push (or the finish) releases: text to stream and the decisions made.

    ``blocked`` is set on the release in which a guardrail stopped the stream; ``text`` then
    holds what may still be streamed before it ends.
    """

    text: str
    events: tuple[GuardrailEvent, ...] = ()
    blocked: GuardrailEvent | None = None


class _Stage:
    """One guardrail's pending text and how much of its input it has released."""

    def __init__(self, guardrail: Guardrail) -> None:
        self.guardrail = guardrail
        self.pending = ""
        self.offset = 0

    def take(self, text: str, final: bool) -> str:
        """Append ``text``; remove and return the batch to check (all of it when ``final``)."""
        self.pending += text
        held = 0 if final else _held(self.guardrail, self.pending)
        cut = len(self.pending) - held
        batch, self.pending = self.pending[:cut], self.pending[cut:]
        return batch


def _held(guardrail: Guardrail, pending: str) -> int:
    """``output_tail(pending)``, refused when it is not an int between 0 and len(pending)."""
    tail = guardrail.output_tail(pending)
    if isinstance(tail, bool) or not isinstance(tail, int) or not 0 <= tail <= len(pending):
        raise GMIError(
            f"guardrail {guardrail.id!r}: output_tail() gave {tail!r} for {len(pending)} "
            "pending characters",
            GMIErrorCode.VALIDATION_ERROR,
            {"guardrail": guardrail.id, "stage": GuardrailStage.OUTPUT.value},
        )
    return tail


class GuardedOutput:
    """One output stream checked by a list of guardrails (see the module doc for batching)."""

    def __init__(self, guardrails: Sequence[Guardrail]) -> None:
        self._stages = [_Stage(guardrail) for guardrail in guardrails]
        self._blocked: GuardrailEvent | None = None
        self._finished = False

    @property
    def blocked(self) -> GuardrailEvent | None:
        """The block that stopped the stream, or ``None``."""
        return self._blocked

    @property
    def held(self) -> str:
        """The text still held back (each stage's pending text, last stage first)."""
        return "".join(stage.pending for stage in reversed(self._stages))

    async def push(self, delta: str) -> OutputRelease:
        """Check one delta; return what may be streamed now (possibly nothing)."""
        self._refuse_after_finish()
        if self._blocked is not None:
            return OutputRelease("")
        return await self._run(delta, final=False)

    async def finish(self) -> OutputRelease:
        """Release everything still held, checked with ``final=True``; the stream ends."""
        self._refuse_after_finish()
        self._finished = True
        if self._blocked is not None:
            return OutputRelease("")
        return await self._run("", final=True)

    def _refuse_after_finish(self) -> None:
        if self._finished:
            raise GMIError("the guarded output stream is finished", GMIErrorCode.INVALID_STATE)

    async def _run(self, text: str, *, final: bool) -> OutputRelease:
        events: list[GuardrailEvent] = []
        blocked: GuardrailEvent | None = None
        for stage in self._stages:
            stopping = final or blocked is not None
            batch = stage.take(text, stopping)
            if not batch and not stopping:
                return OutputRelease("", tuple(events))  # nothing further down changes
            guardrail = stage.guardrail
            decision = await guardrail.check_output(OutputBatch(batch, stage.offset, stopping))
            stage.offset += len(batch)
            event = decision_event(guardrail.id, GuardrailStage.OUTPUT, decision)
            text = batch
            if isinstance(decision, Redact):
                text = decision.text or ""
            elif isinstance(decision, Block):
                text = decision.text or ""
                blocked = blocked or event
            if event is not None:
                events.append(event)
        if blocked is not None:
            self._stop(blocked)
        return OutputRelease(text, tuple(events), blocked)

    def _stop(self, blocked: GuardrailEvent) -> None:
        """End the stream: what the earlier stages still hold is never released."""
        self._blocked = blocked
        for stage in self._stages:
            stage.pending = ""
