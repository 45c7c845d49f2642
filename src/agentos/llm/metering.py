"""Metering: one usage event per model step, to the process-wide observer and the ledger.

Spec (Usage): each model call of a turn is metered with the provider and model that served it:
one usage ledger row and one usage event for the process-wide observer
(``setGlobalLlmObserver()``; none while content-safe telemetry is on) per finished step, and
one for each attempt that failed and was billed, with the finish reason ``error``. A step its
reader left early is metered too, with an estimate marked ``estimated`` (DESIGN §5.19): the
provider bills what it generated.

Metering is a wrapper, not a flag (DESIGN.md §4, as pydantic-ai does it): `MeteredModel` wraps
any `ChatModel`, streams its chunks unchanged and meters the step when it ends. The gateway
wraps each hop's model (with that hop's number), ``generate_text`` wraps its model, and a GMI
session wraps its model with the session, persona and user ids. Calls the spec leaves unmetered
(metaprompts, the memory's embedding calls) are simply not wrapped.

The observer is process-wide state: `set_global_llm_observer` / `get_global_llm_observer`,
and `set_content_safe_telemetry` silences it (the ledger still gets its rows: it is the host's
own accounting, not telemetry).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeAlias, runtime_checkable

from agentos.core.clock import Clock, system_clock
from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    ChatModel,
    ModelChunk,
    ModelRequest,
    TextDelta,
    WrapperModel,
    aclose_stream,
)
from agentos.llm.step_tally import StepTally
from agentos.storage.ledger import GLOBAL_SESSION, UsageEvent, UsageLedger

__all__ = [
    "LlmObserver",
    "MeteredModel",
    "MeteringContext",
    "UsageEvent",
    "UsageObserver",
    "content_safe_telemetry",
    "emit_usage_event",
    "get_global_llm_observer",
    "set_content_safe_telemetry",
    "set_global_llm_observer",
]

_log = logging.getLogger(__name__)


@runtime_checkable
class UsageObserver(Protocol):
    """An observer object: its ``on_usage`` receives each `UsageEvent`."""

    def on_usage(self, event: UsageEvent) -> object:
        """Take one event; may be a coroutine function."""
        ...


LlmObserver: TypeAlias = Callable[[UsageEvent], object] | UsageObserver
"""A function of one `UsageEvent` (sync or async), or an object with ``on_usage(event)``."""

_observer: LlmObserver | None = None
_content_safe = False


def set_global_llm_observer(observer: LlmObserver | None) -> LlmObserver | None:
    """Make ``observer`` receive every metered call's event, process-wide; ``None`` removes it.

    Returns the observer it replaces, so a test or a host can put it back. Anything that is
    neither callable nor has ``on_usage`` is refused with `TypeError`.
    """
    global _observer
    if observer is not None and not (callable(observer) or isinstance(observer, UsageObserver)):
        raise TypeError(
            "an LLM observer is a function of a UsageEvent or an object with on_usage(event), "
            f"not {type(observer).__name__}"
        )
    previous, _observer = _observer, observer
    return previous


def get_global_llm_observer() -> LlmObserver | None:
    """The process-wide observer, or ``None``."""
    return _observer


def set_content_safe_telemetry(enabled: bool) -> None:
    """Turn content-safe telemetry on or off: while on, the observer receives no events."""
    global _content_safe
    if not isinstance(enabled, bool):
        raise TypeError(f"content-safe telemetry is on or off (a bool), not {enabled!r}")
    _content_safe = enabled


def observed() -> bool:
    """Whether a usage event would reach an observer now (one is set, telemetry not safe)."""
    return _observer is not None and not _content_safe


def content_safe_telemetry() -> bool:
    """Whether content-safe telemetry is on (off unless set)."""
    return _content_safe


async def emit_usage_event(event: UsageEvent) -> None:
    """Hand ``event`` to the process-wide observer, unless there is none or telemetry is safe.

    An observer that fails is logged and ignored: telemetry never fails the call it watches.
    """
    observer = _observer
    if observer is None or _content_safe:
        return
    try:
        handler: Callable[[UsageEvent], object] = (
            observer.on_usage if isinstance(observer, UsageObserver) else observer
        )
        result = handler(event)
        if inspect.isawaitable(result):
            await result
    except Exception:
        _log.exception("the global LLM observer raised on a usage event; ignored")


@dataclass(frozen=True, slots=True)
class MeteringContext:
    """Who a metered step belongs to: copied onto each of its `UsageEvent`s.

    ``hop`` is 0 for the primary and n for the n-th fallback hop; ``source`` names what makes
    the calls (``"gmi.step"``, ``"generate_text"``, ...).
    """

    session_id: str = GLOBAL_SESSION
    persona_id: str | None = None
    user_id: str | None = None
    hop: int = 0
    source: str | None = None


class MeteredModel(WrapperModel):
    """A `ChatModel` wrapper that meters each step it serves (spec: Usage).

    Chunks stream unchanged. When a step ends, one `UsageEvent` is made from the step's last
    reported usage (providers report running totals: the last wins), priced by the model catalog
    when the provider gave no cost, stamped with ``clock.now()`` and the `MeteringContext`:
    it is appended to ``ledger`` (when given; the write has finished before the stream ends)
    and handed to the process-wide observer.

    - A finished step: ``finish_reason`` from its `FinishChunk` (``None`` if it sent none).
    - A step that fails with a `ProviderError`: when billed (the error's ``usage``, else the
      last usage the step reported), one event with ``finish_reason="error"`` and
      ``attempt_failed=True``; then the error propagates. A ledger that fails then is logged, so
      the caller sees the provider's error.
    - A step its reader leaves early (``aclose()``, ``break``, a cancelled task): the usage it
      reported if it had finished, else an estimate marked ``estimated`` with no finish reason
      (DESIGN §5.19, `StepTally.left_early`). A ledger that fails then is logged, so the
      reader's exit is not replaced.
    - A step that ends without a usage report is not metered.

    Other attributes (``check_options``, ...) are the inner model's.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        ledger: UsageLedger | None = None,
        clock: Clock | None = None,
        context: MeteringContext | None = None,
    ) -> None:
        super().__init__(inner)
        self.ledger = ledger
        self.clock = clock or system_clock
        self.context = context or MeteringContext()

    def bind(self, **context: Any) -> MeteredModel:
        """The same model, ledger and clock with some context fields replaced.

        ``model.bind(session_id="s1", user_id="u7")``; an unknown field raises `TypeError`.
        """
        return MeteredModel(
            self.inner,
            ledger=self.ledger,
            clock=self.clock,
            context=replace(self.context, **context),
        )

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the inner model's step and meter it when it ends."""
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        tally = StepTally(request)
        try:
            chunks = self.inner.stream(request)
            try:
                async for chunk in chunks:
                    if type(chunk) is TextDelta:  # the common case first: one test per delta
                        tally.output_chars += len(chunk.text)
                        yield chunk
                        continue
                    tally.add(chunk)
                    yield chunk
            finally:
                await aclose_stream(chunks)  # leaving early aborts the call
        except ProviderError as error:
            # Spec: a failed step's bill is the usage its provider error reports, else the last
            # usage the step reported.
            billed = error.usage if error.usage is not None else tally.usage
            if billed is not None:
                try:
                    await self._meter(billed, "error", attempt_failed=True)
                except Exception:
                    _log.exception("metering a failed attempt failed; the provider error stands")
            raise
        except Exception:
            raise
        except BaseException:
            # The reader left early (GeneratorExit, CancelledError): the provider bills what it
            # generated, so the step is metered, estimated unless it had finished (DESIGN §5.19).
            usage = tally.left_early()
            try:
                await self._meter(
                    usage, None if usage.estimated else tally.finish_reason, attempt_failed=False
                )
            except Exception:
                _log.exception("metering a step left early failed; ignored")
            raise
        if tally.usage is not None:
            await self._meter(tally.usage, tally.finish_reason, attempt_failed=False)

    async def _meter(
        self, usage: ModelUsage, finish_reason: str | None, *, attempt_failed: bool
    ) -> None:
        if self.ledger is None and not observed():
            return  # no ledger and no observer: an event nobody receives is not built
        context = self.context
        provider_id, model_id = self.provider_id, self.model_id  # each a property of the inner
        event = UsageEvent.from_usage(
            catalog.priced(provider_id, model_id, usage),
            recorded_at=self.clock.now(),
            provider_id=provider_id,
            model_id=model_id,
            finish_reason=finish_reason,
            attempt_failed=attempt_failed,
            hop=context.hop,
            session_id=context.session_id,
            persona_id=context.persona_id,
            user_id=context.user_id,
            source=context.source,
        )
        # The ledger first: it is the durable record, and its write must finish before the
        # call returns; the observer is best-effort telemetry.
        if self.ledger is not None:
            await self.ledger.append(event)
        await emit_usage_event(event)
