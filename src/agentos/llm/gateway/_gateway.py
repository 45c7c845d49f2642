"""The completion gateway (spec: "Model calls through a completion gateway").

A `CompletionGateway` is made once from `GatewayDefaults`; each user turn calls `begin_turn()`
and each model step of the turn calls `GatewayTurn.stream_step()` with a function that builds the
request for a hop (the caller rebuilds its prompt for each hop's model). A step runs this way:

- **Resolved before the prompt.** The hops are the router's choice or the primary, then the
  fallback chain (``fallback_providers``; unset: the policy-aware chain from the provider keys
  in the environment, without the primary's provider; ``[]``: no fallback). A hop whose circuit
  is open or whose provider cannot start is skipped and reported to ``on_hop_failure``.
- **Fallback before output.** An attempt that fails before its first content chunk (text or a
  tool call) emits none of its chunks; when the failure is retryable (`is_retryable_error()`)
  the next hop is tried and ``on_fallback(error, provider)`` is called. A failure that is not
  retryable, or the end of the chain, ends the step with the provider's error (code
  ``LLM_PROVIDER_ERROR``); no hop that can start gives ``LLM_PROVIDER_UNAVAILABLE``; a primary
  that cannot be set up gives ``CONFIGURATION_ERROR``.
- **No fallback after output.** Once content has streamed, an error ends the step.
- **Forward within a turn.** The next step of the turn starts at the hop that served the last;
  the next turn (a new `begin_turn()`) starts at the primary.
- **Billed failures count.** A failed attempt whose provider reported usage yields an
  `AttemptFailed` event carrying it, the hop, the provider and the model.
- **A step left early is charged** (DESIGN §5.19). When the step's reader stops it (``aclose()``,
  ``break``, a cancelled task) before it finished with a usage report, the turn's
  `GatewayTurn.left_early_usage` says what the step is charged: the estimate the budget and the
  ledger wrappers settle on too (`StepTally.left_early`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from typing import TypeGuard

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.usage import ModelUsage
from agentos.llm.errors import ProviderError
from agentos.llm.gateway._circuit import ProviderHealthRegistry
from agentos.llm.gateway._fallback import FallbackLeg
from agentos.llm.gateway._hops import (
    AttemptFailed,
    FallbackCallback,
    GatewayDefaults,
    Hop,
    HopFailureCallback,
    ModelResolver,
    UnstartableHop,
    resolve_any_hop,
)
from agentos.llm.gateway._plan import plan_hops
from agentos.llm.gateway._retry import is_retryable_error
from agentos.llm.model import (
    FinishChunk,
    ModelChunk,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
    aclose_stream,
)
from agentos.llm.resolve import prefixed_provider
from agentos.llm.step_tally import StepTally

__all__ = ["CompletionGateway", "GatewayTurn", "create_completion_gateway"]


_CONTENT = (TextDelta, ToolCallChunk, FinishChunk)
"""The chunks that are content: once one has streamed, the attempt no longer falls back."""


class CompletionGateway:
    """Resolves the hop that serves each model step and fails over before output."""

    def __init__(
        self,
        defaults: GatewayDefaults | None = None,
        *,
        resolver: ModelResolver = resolve_any_hop,
        health: ProviderHealthRegistry | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.defaults = defaults or GatewayDefaults()
        self._resolver = resolver
        self.health = health or ProviderHealthRegistry(clock or system_clock)

    def begin_turn(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        task_hint: str = "",
        on_fallback: FallbackCallback | None = None,
        on_hop_failure: HopFailureCallback | None = None,
    ) -> GatewayTurn:
        """Start a user turn at the primary (the turn's provider/model, else the defaults').

        A ``model`` whose ``provider:`` prefix names a provider chooses that provider (spec: it
        runs there, without the defaults' credentials). ``on_fallback`` / ``on_hop_failure``
        given here replace the defaults' for this turn (a GMI passes its own, so callbacks set
        in the defaults do not run for its turns).
        """
        if provider is None and prefixed_provider(model) is not None:
            provider = prefixed_provider(model)
        return GatewayTurn(
            self,
            provider if provider is not None else self.defaults.provider,
            model if model is not None else self.defaults.model,
            task_hint,
            on_fallback if on_fallback is not None else self.defaults.on_fallback,
            on_hop_failure if on_hop_failure is not None else self.defaults.on_hop_failure,
        )

    def plan(
        self, provider: str | None, model: str | None, task_hint: str = ""
    ) -> list[Hop | UnstartableHop]:
        """Resolve the hops of a turn on ``provider`` / ``model`` (`GatewayTurn` calls it once).

        The router's choice or the primary, then the fallback chain; a hop that cannot be set
        up is its `UnstartableHop`; a primary that cannot be set up raises
        ``CONFIGURATION_ERROR``.
        """
        return plan_hops(self.defaults, self._resolver, provider, model, task_hint)


class GatewayTurn:
    """The hops of one user turn; `stream_step()` once per model step."""

    def __init__(
        self,
        gateway: CompletionGateway,
        provider: str | None,
        model: str | None,
        task_hint: str,
        on_fallback: FallbackCallback | None,
        on_hop_failure: HopFailureCallback | None,
    ) -> None:
        self._gateway = gateway
        self._provider = provider
        self._model = model
        self._task_hint = task_hint
        self._on_fallback = on_fallback
        self._on_hop_failure = on_hop_failure
        self._hops: list[Hop | UnstartableHop] | None = None
        self._start = 0
        self.serving_hop: Hop | None = None
        """The hop that served the last completed step (``None`` before one completes)."""
        self.left_early_usage: ModelUsage | None = None
        """What the last step is charged when its reader left it early: its reported usage if
        it had finished, else an estimate marked ``estimated`` (DESIGN §5.19); ``None`` when the
        last step was not left early."""

    def resolve(self) -> Hop | None:
        """Resolve the turn's hops now, before any work.

        A primary that cannot be set up raises ``CONFIGURATION_ERROR`` here; without this call
        `stream_step()` resolves the hops on first use. Returns the first hop (the router's
        choice or the primary), or ``None`` when the router chose one that cannot start.
        """
        first = self._plan()[0]
        return first if isinstance(first, Hop) else None

    def _plan(self) -> list[Hop | UnstartableHop]:
        """Every hop of the chain, resolved once per turn; a hop that cannot start is its error."""
        if self._hops is None:
            self._hops = self._gateway.plan(self._provider, self._model, self._task_hint)
        return self._hops

    async def stream_step(
        self, build_request: Callable[[Hop], ModelRequest]
    ) -> AsyncGenerator[ModelChunk | AttemptFailed, None]:
        """Run one model step on the first hop that can serve it, yielding its chunks.

        ``build_request(hop)`` builds the prompt for that hop's model; it is called again for
        each hop tried. Chunks of an attempt that fails before content are never yielded.
        """
        hops = self._plan()
        last_error: BaseException | None = None
        started = False
        self.left_early_usage = None
        for position in range(self._start, len(hops)):
            hop = hops[position]
            if not self._startable(hop):
                continue
            request = self._attempt_request(hop, build_request, last_error)
            started = True
            held: list[ModelChunk] = []
            content = False
            tally = StepTally(request)
            try:
                chunks = hop.model.stream(request)
                try:
                    async for chunk in chunks:
                        if type(chunk) is TextDelta:  # the common case: no call per delta
                            tally.output_chars += len(chunk.text)
                        else:
                            tally.add(chunk)
                        if content:
                            yield chunk
                        elif isinstance(chunk, _CONTENT):
                            content = True
                            for earlier in held:
                                yield earlier
                            held.clear()
                            yield chunk
                        else:
                            held.append(chunk)
                finally:
                    await aclose_stream(chunks)  # leaving early aborts the call
                for earlier in held:  # a step that ended without a finish chunk or content
                    yield earlier
            except Exception as exc:
                yield self._failed(hop, exc, after_output=content)
                if content or not is_retryable_error(exc):
                    raise
                last_error = exc
                continue
            except BaseException:
                # The reader left early (GeneratorExit, CancelledError): DESIGN §5.19.
                self.left_early_usage = tally.left_early()
                raise
            self._gateway.health.record_success(hop.provider_id)
            self.serving_hop = hop
            self._start = position
            return
        _raise_unserved(last_error, started, len(hops))

    def _failed(self, hop: Hop, error: Exception, *, after_output: bool) -> AttemptFailed:
        """Record ``hop``'s failure with its circuit; the event that reports the attempt."""
        self._gateway.health.record_failure(hop.provider_id, error)
        usage = error.usage if isinstance(error, ProviderError) else None
        return AttemptFailed(hop, error, usage, after_output=after_output)

    def _startable(self, hop: Hop | UnstartableHop) -> TypeGuard[Hop]:
        """Whether ``hop`` can take an attempt; a hop that cannot is reported and skipped."""
        if isinstance(hop, UnstartableHop):
            self._hop_failed(hop.provider_id, hop.model_id, hop.error)
            return False
        if self._gateway.health.is_open(hop.provider_id):
            self._hop_failed(
                hop.provider_id,
                hop.model_id,
                ProviderError(
                    f"[503] {hop.provider_id} circuit open",
                    status_code=503,
                    provider_id=hop.provider_id,
                    model_id=hop.model_id,
                    kind="setup",
                ),
            )
            return False
        return True

    def _attempt_request(
        self,
        hop: Hop,
        build_request: Callable[[Hop], ModelRequest],
        last_error: BaseException | None,
    ) -> ModelRequest:
        """The request of an attempt on ``hop``, after ``on_fallback`` and ``before_attempt``."""
        if last_error is not None and self._on_fallback is not None:
            self._on_fallback(last_error, hop.provider_id)
        request = _with_leg_settings(build_request(hop), hop.leg)
        before = self._gateway.defaults.before_attempt
        if before is not None:
            before(hop, request)  # a refusal (a budget's) raises: nothing is sent
        return request

    def _hop_failed(self, provider_id: str, model_id: str, error: BaseException) -> None:
        if self._on_hop_failure is not None:
            self._on_hop_failure(provider_id, model_id, error)


def _raise_unserved(last_error: BaseException | None, started: bool, hops: int) -> None:
    """End a step no hop served: the last attempt's error, else ``LLM_PROVIDER_UNAVAILABLE``."""
    if last_error is not None:
        raise last_error
    if not started:
        raise GMIError(
            "No provider can serve this step: every hop was skipped",
            GMIErrorCode.LLM_PROVIDER_UNAVAILABLE,
            {"hops": hops},
        )


def create_completion_gateway(
    defaults: GatewayDefaults | None = None,
    *,
    resolver: ModelResolver = resolve_any_hop,
    health: ProviderHealthRegistry | None = None,
    clock: Clock | None = None,
) -> CompletionGateway:
    """Make a `CompletionGateway` (spec: ``createCompletionGateway(defaults)``)."""
    return CompletionGateway(defaults, resolver=resolver, health=health, clock=clock)


def _with_leg_settings(request: ModelRequest, leg: FallbackLeg | None) -> ModelRequest:
    """Apply a fallback entry's settings to the steps its hop serves.

    Spec: a fallback entry's ``effort``, ``cache`` and ``maxTokensHeadroom`` apply to the steps
    its hop serves. The headroom is added to a call's ``max_tokens`` (a call without one stays
    uncapped); ``effort`` and ``cache`` replace the call's own when the entry sets them.
    """
    if leg is None:
        return request
    options = request.options
    if leg.max_tokens_headroom is not None and options.max_tokens is not None:
        options = replace(options, max_tokens=options.max_tokens + leg.max_tokens_headroom)
    if leg.effort is not None:
        options = replace(options, effort=leg.effort)
    if leg.cache is not None:
        options = replace(options, cache=leg.cache)
    return request if options is request.options else replace(request, options=options)
