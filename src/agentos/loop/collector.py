"""`StepCollector`: the record of what one model step streamed.

The step loop (`agentos.loop.StepLoop`) reads a step's chunks from the completion gateway and
keeps this record of them: the step's text, tool calls, replay blocks, last usage report and
finish chunk, and the error the step ends with when it fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentos.core.errors import GMIError
from agentos.core.messages import Message, ReplayBlock, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.errors import ProviderError
from agentos.llm.gateway import Hop
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    UsageChunk,
)

__all__ = ["StepCollector"]


@dataclass(slots=True)
class StepCollector:
    """The record of one step; `add()` each chunk the serving hop streams."""

    pieces: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    replay_blocks: list[ReplayBlock] = field(default_factory=list)
    usage: ModelUsage | None = None
    """The last usage report (providers report running totals: the last wins)."""
    finish: FinishChunk | None = None

    def add(self, chunk: ModelChunk) -> None:
        """Record ``chunk``."""
        if type(chunk) is TextDelta:
            if chunk.text:
                self.pieces.append(chunk.text)
        elif isinstance(chunk, ToolCallChunk):
            self.tool_calls.append(chunk.tool_call)
        elif isinstance(chunk, ReplayChunk):
            self.replay_blocks.append(chunk.block)
        elif isinstance(chunk, UsageChunk):
            self.usage = chunk.usage
        elif isinstance(chunk, FinishChunk):
            self.finish = chunk

    @property
    def text(self) -> str:
        """The step's own text: its deltas joined."""
        return "".join(self.pieces)

    @property
    def output(self) -> bool:
        """Whether content (text or a tool call) has streamed."""
        return bool(self.pieces or self.tool_calls)

    @property
    def finish_reason(self) -> FinishReason:
        """Why the step ended (``other`` when the provider said nothing)."""
        return self.finish.finish_reason if self.finish is not None else "other"

    def message(self) -> Message:
        """The step as the assistant message the history records."""
        return Message.assistant(
            self.text, tool_calls=list(self.tool_calls), replay_blocks=list(self.replay_blocks)
        )

    def failure(self, error: Exception, hop: Hop | None) -> GMIError:
        """``error``, raised while the step streamed, as the error the step ends with.

        A `GMIError` keeps its code; anything else becomes a `ProviderError` (code
        ``LLM_PROVIDER_ERROR``) naming the hop that failed, when known.
        """
        if isinstance(error, GMIError):
            return error
        provider = hop.provider_id if hop is not None else None
        wrapped = ProviderError(
            f"{provider or 'the'} model call failed: {error}",
            provider_id=provider,
            model_id=hop.model_id if hop is not None else None,
            after_output=self.output,
        )
        wrapped.__cause__ = error
        return wrapped
