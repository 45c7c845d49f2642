"""`StepTally`: what a model step has streamed, and what it is charged when left early.

DESIGN §5.19: a stream left early is charged. A provider bills the tokens it generated whether
or not anyone read them, so a step whose reader stops (``break``, ``aclose()``, a cancelled
task) before the step finished with a usage report is charged an estimate, marked
``estimated``: the prompt estimated from the request (`estimate_prompt_tokens`, the project's
one estimator), the completion from the text and tool calls that arrived (`estimate_tokens` of
their characters), never more than the ``max_tokens`` the request sent.

Each seam that settles a step keeps a tally of the chunks it passed on: the budget wrapper
(`agentos.llm.budget.BudgetedModel`), the metering wrapper (`agentos.llm.metering`) and the
completion gateway (for the caller's own usage figure). They see the same chunks of the same
request, so the budget, the ledger and the stream's ``usage`` settle on the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentos.core.messages import Message, ToolCall
from agentos.core.tokens import estimate_tokens_for_chars, message_text_for_estimate
from agentos.core.usage import ModelUsage
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
    UsageChunk,
)
from agentos.llm.token_estimate import estimate_prompt_tokens

__all__ = ["StepTally"]


@dataclass(slots=True)
class StepTally:
    """The chunks one step of ``request`` has streamed so far; `add()` each as it passes."""

    request: ModelRequest
    usage: ModelUsage | None = None
    """The last usage report (providers report running totals: the last wins)."""
    finish_reason: FinishReason | None = None
    finished: bool = False
    """Whether the step's `FinishChunk` has arrived."""
    output_chars: int = 0
    """The characters of the text that arrived (the tool calls' are counted from `calls`)."""
    calls: list[ToolCall] = field(default_factory=list)
    """The tool calls that arrived: sized only when the step is left early."""

    def add(self, chunk: ModelChunk) -> None:
        """Count ``chunk``."""
        if type(chunk) is TextDelta:
            self.output_chars += len(chunk.text)
        elif isinstance(chunk, ToolCallChunk):
            self.calls.append(chunk.tool_call)
        elif isinstance(chunk, UsageChunk):
            self.usage = chunk.usage
        elif isinstance(chunk, FinishChunk):
            self.finish_reason, self.finished = chunk.finish_reason, True

    def left_early(self) -> ModelUsage:
        """What the step is charged when its reader left before it ended (DESIGN §5.19).

        A step that had finished and reported its usage is charged that usage. Otherwise the
        estimate, marked ``estimated``: the request's prompt estimate and the completion
        estimated from the characters that arrived (capped at the request's ``max_tokens``); a
        running usage report that arrived mid-stream raises either figure to what it says.
        """
        if self.finished and self.usage is not None:
            return self.usage
        chars = self.output_chars + sum(
            len(message_text_for_estimate(Message.assistant(tool_calls=[call])))
            for call in self.calls
        )
        completion = estimate_tokens_for_chars(chars)
        cap = self.request.options.max_tokens
        if cap is not None:
            completion = min(completion, cap)
        prompt = estimate_prompt_tokens(self.request)
        running = self.usage
        if running is None:
            return ModelUsage(prompt_tokens=prompt, completion_tokens=completion, estimated=True)
        prompt = max(prompt, running.prompt_tokens)
        completion = max(completion, running.completion_tokens)
        return replace(
            running,
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            # The provider's cost was for fewer tokens: let the catalog price the estimate.
            cost_usd=None,
            estimated=True,
        )
