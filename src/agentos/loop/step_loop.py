"""`StepLoop`: the one step loop behind `generate_text` / `stream_text`, `agent()` and the GMI.

Per step, through the turn's completion gateway (spec: What a turn does, steps 4-6; Output
stream): each attempt (a fallback hop's included) builds its prompt (``prompt(hop, step)``),
places the schema message (`place_schema_prompt`), runs ``before_model_call``; the step streams;
`StepCollector` records it; ``after_model_step`` may replace its text; its assistant message is
recorded (``record``); then its tool round runs (`ToolRound`) and the next step starts, until a
step asks for no tool or ``max_steps`` steps have run. Events (`agentos.loop.events`) report
each of these as it happens; a failed step raises the `GMIError` it ends with
(`StepCollector.failure`: a provider failure is a `ProviderError`, ``LLM_PROVIDER_ERROR``).

The behaviours the two loops this one replaced did differently, decided once against the spec:

- **Tool concurrency.** A round's calls run concurrently on every path; results, their events
  and their history entries come in call order (DESIGN §5.22; the spec leaves the order open).
  The GMI ran them one after another.
- **Cache diagnostics.** With ``options.cache_diagnostics`` set, the first step sends it as
  given and each later step names the previous step's response (spec: Cache Diagnostics); an
  attempt on a hop of another provider than the one that gave that response opts in without a
  comparison, since another provider's id means nothing to it. Only the light loop did that.
- **Hook guard.** A hook that raises, or a ``before_model_call`` that returns an empty list, is
  reported and the built prompt is sent (spec: step 5; Hooks), on every path (`LoopHooks`).
- **Schema guard.** A step asked for a schema offers no tools (the caller passes none); a
  replacement text from ``after_model_step`` is not applied to a schema answer the provider
  returned as a schema tool call (spec: Hooks).
- **Which calls run.** On the light path a step's calls run only when the step offered tools:
  a call to a tool never offered (a structured step offers none) ends the loop with that step.
  The GMI runs every call the model makes (spec: What a turn does, step 6), an unknown tool
  answered with an error result: ``run_all_calls``.
- **Billed failures.** A failed attempt counts the usage its error reports, else, when it
  failed after output, the step's last report (spec: Billed failures count), on every path.
- **tool_choice** is ``auto`` on a step that offers tools unless set, and never sent without
  tools (spec: Completion options).

The parameters the spec makes differ between paths are ``fail_closed`` (a GMI turn's
``execution_policy``; `ToolRound` says what it does) and ``run_all_calls`` (above). ``external``
names the tools the host runs (DESIGN §5.24): a round runs its other calls, then yields
`ToolsPausedEvent` with the host's calls and the loop ends.

``tools`` given as an `agentos.tools.OfferedTools` (what a tool orchestrator lists) are read
again before each step, so a tool added to the orchestrator's `ToolBox` while the loop runs (by
one of its own tool calls) is offered from the next step on (issue 14: member-call plumbing).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace

from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import AttemptFailed, GatewayTurn, Hop
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    CompletionOptions,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
    closing_stream,
)
from agentos.llm.schema_prompt import place_schema_prompt
from agentos.tools.orchestrator import skipped_by_hook
from agentos.tools.toolbox import OfferedTools

from .collector import StepCollector
from .events import (
    AttemptFailedEvent,
    LoopEvent,
    StepFinishedEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolsPausedEvent,
    UsageEvent,
)
from .hooks import LoopHooks, ModelCallInfo, StepInfo
from .tool_round import ToolRound

__all__ = ["PromptBuilder", "StepLoop", "ToolRunner"]

PromptBuilder = Callable[[Hop, int], list[Message]]
"""The messages of an attempt on ``hop`` in step ``index``, before the schema message."""

ToolRunner = Callable[[ToolCall], Awaitable[ToolResult]]
"""Runs one vetted call and returns its result, an error result included; never raises."""


class StepLoop:
    """One run of steps: iterate `events()` once.

    ``record`` receives every message the loop adds, in order: each step's assistant message,
    then its round's tool results in call order; the next step's ``prompt`` reads them.
    """

    def __init__(
        self,
        turn: GatewayTurn,
        prompt: PromptBuilder,
        record: Callable[[Message], None],
        run_tool: ToolRunner,
        *,
        options: CompletionOptions,
        max_steps: int,
        tools: Sequence[ToolDefinition] = (),
        hooks: LoopHooks | None = None,
        fail_closed: bool = False,
        run_all_calls: bool = False,
        external: Callable[[str], bool] | None = None,
    ) -> None:
        self.turn = turn
        self.prompt = prompt
        self.record = record
        self.run_tool = run_tool
        # An orchestrator's listing is read again before each step (tools added meanwhile).
        self._offered = tools if isinstance(tools, OfferedTools) else None
        self.tools = list(tools)
        self.options = _offer_tools(options, self.tools)
        self.max_steps = max_steps
        self.hooks = hooks or LoopHooks()
        self.fail_closed = fail_closed
        self.run_all_calls = run_all_calls
        self.external = external
        self.left_early: ModelUsage | None = None
        """What the step its reader left early is charged (DESIGN §5.19), else ``None``."""
        self.unannounced: list[ToolResult] = []
        """Results a stopped tool round recorded without their `ToolResultEvent`."""

    async def events(self) -> AsyncGenerator[LoopEvent, None]:
        """Run the steps, yielding their events; raises the failure a step ends with."""
        options = self.options
        previous: StepFinishedEvent | None = None
        for index in range(self.max_steps):
            if self._offered is not None:
                offered = self._offered.current()  # a new list when it changed: sent requests
                if offered is not self.tools:  # keep the list they were sent with
                    self.tools = offered
                    options = _offer_tools(options, offered)
            if previous is not None and options.cache_diagnostics is not None:
                # Each later step is compared with the previous step's response.
                request = CacheDiagnosticsRequest(previous.provider_message_id)
                options = replace(options, cache_diagnostics=request)
            step = StepCollector()
            build = self._builder(index, options, previous)
            failed_hop: Hop | None = None
            # The step's chunks are read here, not in a generator of their own: one layer less
            # for every chunk of every step.
            items = self.turn.stream_step(build)
            try:
                try:
                    async for item in items:
                        if isinstance(item, AttemptFailed):
                            failed_hop = item.hop
                            yield AttemptFailedEvent(item, _billed(item, step))
                            continue
                        step.add(item)
                        if type(item) is TextDelta:
                            if item.text:
                                yield TextDeltaEvent(item.text)
                        elif isinstance(item, ToolCallChunk):
                            yield ToolCallEvent(item.tool_call)
                        elif isinstance(item, UsageChunk):
                            yield UsageEvent(item.usage)
                finally:
                    await items.aclose()  # leaving early aborts the model call
            except Exception as exc:
                raise step.failure(exc, failed_hop) from exc
            except BaseException:
                # The reader left early: the step costs what the gateway settled (DESIGN §5.19).
                self.left_early = self.turn.left_early_usage
                raise
            finished = await self._finish(index, step)
            yield finished
            if not finished.will_run_tools:
                return
            held = self._held(finished.tool_calls)
            tool_round = ToolRound(
                [c for c in finished.tool_calls if c not in held],
                self._run_call,
                self.record,
                fail_closed=self.fail_closed,
            )
            try:
                async with closing_stream(tool_round.results()) as results:
                    async for result in results:
                        yield ToolResultEvent(index, result)
            finally:
                self.unannounced.extend(tool_round.unannounced)
            if held:
                # The host runs these: the round's other calls ran, the loop pauses for them.
                yield ToolsPausedEvent(index, held)
                return
            previous = finished

    def _builder(
        self, index: int, options: CompletionOptions, previous: StepFinishedEvent | None
    ) -> Callable[[Hop], ModelRequest]:
        def build(hop: Hop) -> ModelRequest:
            attempt = options
            if (
                previous is not None
                and attempt.cache_diagnostics is not None
                and previous.hop.provider_id != hop.provider_id
            ):
                # Another provider's response id means nothing to this one: opt in without a
                # comparison rather than name an id it cannot find.
                attempt = replace(attempt, cache_diagnostics=CacheDiagnosticsRequest())
            # The schema message is in place before the hook sees it, so the hook can remove it;
            # the adapter then adds no copy of its own (spec: Completion options).
            messages, attempt = place_schema_prompt(hop.model, self.prompt(hop, index), attempt)
            hooks = self.hooks
            if hooks.before_model_call is not None:
                info = ModelCallInfo(
                    hooks.turn_id,
                    index,
                    hop.index,
                    hop.provider_id,
                    hop.model_id,
                    list(messages),
                    hooks.system,
                    list(self.tools),
                )
                messages = hooks.prompt_for(info, messages)
            return ModelRequest(messages, self.tools, attempt)

        return build

    async def _finish(self, index: int, step: StepCollector) -> StepFinishedEvent:
        hop = self.turn.serving_hop
        assert hop is not None  # a step that completed was served by a hop
        calls, finish = step.tool_calls, step.finish
        text, message = step.text, step.message()
        if self.hooks.after_model_step is not None:
            info = StepInfo(
                self.hooks.turn_id,
                index,
                text,
                list(calls),
                step.finish_reason,
                hop.provider_id,
                hop.model_id,
            )
            replaced = await self.hooks.step_text(info)
            # A schema answer the provider returned as a schema tool call stays the JSON the
            # schema validated (spec: Hooks); any other text is replaced.
            if replaced is not None and not (finish and finish.schema_route == "tool"):
                text, message = replaced, replace(message, content=replaced)
        self.record(message)
        return StepFinishedEvent(
            step_index=index,
            hop=hop,
            text=text,
            message=message,
            tool_calls=calls,
            finish_reason=step.finish_reason,
            usage=step.usage,
            replay_blocks=step.replay_blocks,
            finish=finish,
            will_run_tools=bool(calls) and (bool(self.tools) or self.run_all_calls),
        )

    def _held(self, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
        """The calls of tools the host runs, which the round leaves to the host."""
        external = self.external
        return tuple(c for c in calls if external is not None and external(c.name))

    async def _run_call(self, call: ToolCall) -> ToolResult:
        vetted = await self.hooks.vetted(call)
        if vetted is None:
            return skipped_by_hook(call)
        return await self.run_tool(vetted)


def _billed(failed: AttemptFailed, step: StepCollector) -> ModelUsage | None:
    """What a failed attempt is billed: its error's usage, else, after output, the step's last."""
    if failed.usage is None and failed.after_output:
        return step.usage
    return failed.usage


def _offer_tools(options: CompletionOptions, tools: Sequence[ToolDefinition]) -> CompletionOptions:
    """``options`` with ``tool_choice`` as a step offering ``tools`` sends it."""
    if tools and options.tool_choice is None:
        return replace(options, tool_choice="auto")
    if not tools and options.tool_choice is not None:
        return replace(options, tool_choice=None)  # providers reject it without tools
    return options
