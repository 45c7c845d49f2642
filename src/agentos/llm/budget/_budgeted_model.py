"""`BudgetedModel`: a `ChatModel` wrapper that holds each step to a `SpendBudget`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from agentos.llm.budget._spend_budget import BudgetLike
from agentos.llm.budget._spend_call import SpendCall
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    ChatModel,
    ModelChunk,
    ModelRequest,
    TextDelta,
    WrapperModel,
    closing_stream,
)
from agentos.llm.step_tally import StepTally
from agentos.llm.token_estimate import estimate_prompt_tokens

__all__ = ["BudgetedModel"]


class BudgetedModel(WrapperModel):
    """A `ChatModel` wrapper that holds each step to a budget.

    DESIGN.md §4: the budget wraps a model call, as pydantic-ai does, rather than being a flag.
    Before the inner model is called, the step is reserved (DESIGN §5.18) as a `SpendCall` named
    ``call`` with the prompt estimate ``estimate(request)`` and the ``max_tokens`` the request
    sends; a refusal raises `SpendLimitError` before anything is sent. The worst case stays held
    on the budget while the step streams, so steps running at once never pass a cap together.
    Chunks stream unchanged. The reservation then settles once, whichever way the step ends:

    - it finishes: its last reported usage is charged (a step that reported none is released);
    - it fails with a `ProviderError`: what the provider billed is charged (the error's
      ``usage``, else the last usage the step reported), or, unbilled, the hold is released;
      then the error propagates (any other exception releases the hold);
    - its reader leaves early (``aclose()``, ``break``, a cancelled task): the usage it had
      reported if it had finished, else an estimate marked ``estimated`` (DESIGN §5.19,
      `StepTally.left_early`): the provider bills what it generated.

    Other attributes (``check_options``, ...) are the inner model's.
    """

    def __init__(
        self,
        inner: ChatModel,
        budget: BudgetLike,
        *,
        call: str = "generate_text",
        estimate: Callable[[ModelRequest], int] = estimate_prompt_tokens,
    ) -> None:
        super().__init__(inner)
        self.budget = budget
        self.call = call
        self._estimate = estimate

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Reserve the step, stream the inner model's chunks, settle on what it used."""
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        reservation = self.budget.reserve(
            SpendCall.for_request(
                self.provider_id, self.model_id, request, call=self.call, estimate=self._estimate
            )
        )
        tally = StepTally(request)
        ids = {"provider_id": self.provider_id, "model_id": self.model_id}
        try:
            async with closing_stream(self.inner.stream(request)) as chunks:
                async for chunk in chunks:
                    if type(chunk) is TextDelta:  # the common case: no call per delta
                        tally.output_chars += len(chunk.text)
                    else:
                        tally.add(chunk)
                    yield chunk
        except ProviderError as error:
            # Spec: a failed step's bill is the usage its provider error reports, else the last
            # usage the step reported.
            billed = error.usage if error.usage is not None else tally.usage
            if billed is not None:
                reservation.settle(billed, **ids)
            raise
        except Exception:
            raise  # not billed as far as anyone knows: the finally releases the hold
        except BaseException:
            # The reader left early (GeneratorExit, CancelledError): DESIGN §5.19.
            reservation.settle(tally.left_early(), **ids)
            raise
        else:
            if tally.usage is not None:
                reservation.settle(tally.usage, **ids)
        finally:
            reservation.release()  # no-op once settled
