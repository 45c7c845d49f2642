"""The lightweight step loop behind `generate_text()` and `stream_text()`.

No GMI: the caller's messages go to the model, each tool call the model makes runs, its result
goes back, and the model is called again, for at most ``max_steps`` model steps. A tool that is
unknown, gets bad arguments or raises gives the model an error result instead of ending the run.
A provider failure ends the run with `ProviderError` (code ``LLM_PROVIDER_ERROR``).

With cache diagnostics asked for (``options.cache_diagnostics``), every step sends them: the
first with the request the caller gave, each later one naming the previous step's response
(its ``provider_message_id``, or none when that step reported no id).

`StepHooks` are the GMI's hook shapes (`agentos.gmi.config`), so `agent_hooks` wraps a user's
``on_before_generation`` / ``on_after_generation`` / ``on_before_tool_execution`` once for both
paths: the first sees each attempt's messages after the schema message (a hop whose payload
carries no schema), the second may replace a step's text (not a schema tool call's JSON), the
third may skip or rewrite a call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.gmi.config import BeforeModelCall, ModelCallInfo, StepInfo
from agentos.llm.gateway import AttemptFailed, GatewayTurn, Hop
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    CompletionOptions,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
    closing_stream,
    place_schema_prompt,
)
from agentos.llm.step import StepCollector
from agentos.tools.orchestrator import ToolOrchestrator, skipped_by_hook
from agentos.tools.tool import Tool

from .results import (
    GenerateTextResult,
    StepFinishPart,
    StepResult,
    StreamPart,
    TextDeltaPart,
    ToolCallPart,
    ToolResultPart,
)
from .structured import StructuredSpec

__all__ = ["StepHooks", "TextRun"]


@dataclass(frozen=True, slots=True)
class StepHooks:
    """What a run calls around its steps; ``system`` is what ``before_model_call`` is told."""

    system: str = ""
    before_model_call: BeforeModelCall | None = None
    after_model_step: Callable[[StepInfo], Awaitable[str | None]] | None = None
    before_tool_call: Callable[[ToolCall], Awaitable[ToolCall | None]] | None = None


class TextRun:
    """One generation: iterate `parts()` once, then read `result()`.

    Each step runs through the turn's completion gateway, so a retryable failure before output
    moves to the next hop; billed failed attempts count in the usage.
    """

    def __init__(
        self,
        turn: GatewayTurn,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        options: CompletionOptions,
        max_steps: int,
        structured: StructuredSpec | None = None,
        hooks: StepHooks | None = None,
    ) -> None:
        self.turn = turn
        self.history: list[Message] = list(messages)
        self._start = len(self.history)
        self.tools = {tool.name: tool for tool in tools}
        # The lightweight path runs no capability checks (spec: agent() tools run as given).
        self.orchestrator = ToolOrchestrator(tools, check_capabilities=False)
        self.options = options
        self.max_steps = max_steps
        self.structured = structured
        self.hooks = hooks or StepHooks()
        self.steps: list[StepResult] = []
        self.failed_attempts: list[AttemptFailed] = []
        self.left_early: ModelUsage | None = None
        """What the step its reader left early is charged (DESIGN §5.19), else ``None``."""

    async def parts(self) -> AsyncIterator[StreamPart]:
        """Run the steps, yielding the stream's parts (without the closing `FinishPart`)."""
        # A structured step is sent without tools (spec: Completion options).
        offered = {} if self.structured is not None else self.tools
        definitions = [tool.definition() for tool in offered.values()]
        options = self.options
        if definitions and options.tool_choice is None:
            options = replace(options, tool_choice="auto")
        elif not definitions and options.tool_choice is not None:
            options = replace(options, tool_choice=None)  # providers reject it without tools
        for index in range(self.max_steps):
            history = list(self.history)
            if options.cache_diagnostics is not None and self.steps:
                # Each later step is compared with the previous step's response.
                previous = CacheDiagnosticsRequest(self.steps[-1].provider_message_id)
                options = replace(options, cache_diagnostics=previous)

            last = self.steps[-1] if self.steps else None

            def build(
                hop: Hop,
                history: list[Message] = history,
                options: CompletionOptions = options,
                last: StepResult | None = last,
                index: int = index,
            ) -> ModelRequest:
                if (
                    last is not None
                    and options.cache_diagnostics is not None
                    and last.provider_id != hop.provider_id
                ):
                    # Another provider's response id means nothing to this one: opt in
                    # without a comparison rather than name an id it cannot find.
                    options = replace(options, cache_diagnostics=CacheDiagnosticsRequest())
                # As on a GMI: the schema message is in place before the hook sees it.
                messages, options = place_schema_prompt(hop.model, history, options)
                before = self.hooks.before_model_call
                if before is not None:
                    info = ModelCallInfo(
                        "",
                        index,
                        hop.index,
                        hop.provider_id,
                        hop.model_id,
                        list(messages),
                        self.hooks.system,
                        list(definitions),
                    )
                    replaced = before(info)
                    if replaced is not None:
                        messages = list(replaced)
                return ModelRequest(messages, definitions, options)

            step_record = StepCollector()
            try:
                async with closing_stream(self.turn.stream_step(build)) as items:
                    async for item in items:
                        if isinstance(item, AttemptFailed):
                            self.failed_attempts.append(item)
                            continue
                        step_record.add(item)
                        if type(item) is TextDelta:
                            if item.text:
                                yield TextDeltaPart(item.text)
                        elif isinstance(item, ToolCallChunk):
                            yield ToolCallPart(item.tool_call)
            except Exception as exc:
                failed = self.failed_attempts[-1].hop if self.failed_attempts else None
                raise step_record.failure(exc, failed) from exc
            except BaseException:
                # The reader left early: the step costs what the gateway settled (DESIGN §5.19).
                self.left_early = self.turn.left_early_usage
                raise
            hop = self.turn.serving_hop
            assert hop is not None  # a step that completed was served by a hop
            calls = step_record.tool_calls
            finish = step_record.finish
            text, message = step_record.text, step_record.message()
            after = self.hooks.after_model_step
            if after is not None:
                info = StepInfo(
                    "",
                    index,
                    text,
                    list(calls),
                    step_record.finish_reason,
                    hop.provider_id,
                    hop.model_id,
                )
                replaced = await after(info)
                # A schema answer the provider returned as a schema tool call stays the JSON
                # the schema validated (spec: Hooks); any other text is replaced.
                if replaced is not None and not (finish and finish.schema_route == "tool"):
                    text, message = replaced, replace(message, content=replaced)
            self.history.append(message)
            will_run = bool(calls) and bool(offered)
            step = StepResult(
                index=index,
                text=text,
                tool_calls=calls,
                tool_results=[],
                finish_reason=step_record.finish_reason,
                usage=step_record.usage,
                provider_id=hop.provider_id,
                model_id=hop.model_id,
                replay_blocks=step_record.replay_blocks,
                response_model=finish.response_model if finish else None,
                provider_message_id=finish.provider_message_id if finish else None,
                cache_diagnostics=finish.cache_diagnostics if finish else None,
            )
            self.steps.append(step)
            yield StepFinishPart(step)
            if not will_run:
                return
            results = await asyncio.gather(*(self._run_tool(call) for call in calls))
            step.tool_results.extend(results)
            for result in results:
                self.history.append(Message.tool(result))
                yield ToolResultPart(result)

    async def _run_tool(self, call: ToolCall) -> ToolResult:
        vet = self.hooks.before_tool_call
        vetted = await vet(call) if vet is not None else call
        if vetted is None:
            return skipped_by_hook(call)
        return await self.orchestrator.process_tool_call(vetted)

    def result(self) -> GenerateTextResult:
        """The finished generation's result; a structured one's ``object`` is validated here.

        Raises `ObjectGenerationError` when a structured answer does not parse, does not match
        its schema, or was cut off by the output limit.
        """
        if not self.steps:
            raise GMIError("the generation has not run a step", GMIErrorCode.INVALID_STATE)
        last = self.steps[-1]
        parsed = (
            self.structured.parse(last.text, last.finish_reason)
            if self.structured is not None
            else None
        )
        return GenerateTextResult(
            text=last.text,
            usage=self.usage(),
            finish_reason=last.finish_reason,
            tool_calls=[call for step in self.steps for call in step.tool_calls],
            tool_results=[result for step in self.steps for result in step.tool_results],
            steps=list(self.steps),
            response_messages=self.history[self._start :],
            provider_id=last.provider_id,
            model_id=last.model_id,
            object=parsed,
        )

    def usage(self) -> ModelUsage:
        """The usage so far: finished steps, billed failed attempts, a step left early.

        A step its reader left early counts what it is charged, an estimate unless it had
        finished (DESIGN §5.19). A step that reported no usage makes the total cost unknown.
        """
        billed = [f.usage for f in self.failed_attempts if f.usage is not None]
        if self.left_early is not None:
            billed.append(self.left_early)
        return ModelUsage.sum([*(step.usage or ModelUsage() for step in self.steps), *billed])
