"""`BudgetedModel`: a `ChatModel` wrapper that holds each step to a `SpendBudget`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from agentos.core.usage import ModelUsage
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    ChatModel,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    UsageChunk,
    closing_stream,
)
from agentos.llm.spend_budget import BudgetLike
from agentos.llm.spend_call import SpendCall
from agentos.llm.token_estimate import estimate_prompt_tokens

__all__ = ["BudgetedModel"]


class BudgetedModel:
    """A `ChatModel` wrapper that holds each step to a budget.

    DESIGN.md §4: the budget wraps a model call, as pydantic-ai does, rather than being a flag.
    Before the inner model is called, the step is checked as a `SpendCall` named ``call`` with
    the prompt estimate ``estimate(request)`` and the ``max_tokens`` the request sends; a
    refusal raises `SpendLimitError` before anything is sent. Chunks stream unchanged. A step
    that finishes is recorded with its last reported usage; a step that fails with a
    `ProviderError` is recorded with what the provider billed (the error's ``usage``, else the
    last usage the step reported), then the error propagates. A step its reader closes early is
    recorded only if it had finished (its `FinishChunk` and a usage were read): an aborted step
    is neither finished nor a billed failure. Other attributes (``check_options``, ...) are
    the inner model's.
    """

    def __init__(
        self,
        inner: ChatModel,
        budget: BudgetLike,
        *,
        call: str = "generate_text",
        estimate: Callable[[ModelRequest], int] = estimate_prompt_tokens,
    ) -> None:
        self.inner = inner
        self.budget = budget
        self.call = call
        self._estimate = estimate

    @property
    def provider_id(self) -> str:
        """The inner model's provider."""
        return self.inner.provider_id

    @property
    def model_id(self) -> str:
        """The inner model's id."""
        return self.inner.model_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Check the step, stream the inner model's chunks, record what it used."""
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.budget.check(
            SpendCall.for_request(
                self.provider_id, self.model_id, request, call=self.call, estimate=self._estimate
            )
        )
        last_usage: ModelUsage | None = None
        finished = False
        try:
            async with closing_stream(self.inner.stream(request)) as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, UsageChunk):
                        last_usage = chunk.usage
                    elif isinstance(chunk, FinishChunk):
                        finished = True
                    yield chunk
        except ProviderError as error:
            # Spec: a failed step's bill is the usage its provider error reports, else the last
            # usage the step reported.
            self._record(error.usage if error.usage is not None else last_usage)
            raise
        except GeneratorExit:
            if finished:
                self._record(last_usage)
            raise
        self._record(last_usage)

    def _record(self, usage: ModelUsage | None) -> None:
        if usage is not None:
            self.budget.record(usage, provider_id=self.provider_id, model_id=self.model_id)
