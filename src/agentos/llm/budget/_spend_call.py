"""`SpendCall`: a model call about to be sent, as a spend budget sees it (spec: Spend budget).

Before a call is sent, a budget prices its worst case: the call's prompt estimate plus the
output cap the call sends (`SpendCall.output_cap`), priced by the model catalog. The spec
checks each completion call of a turn (a fallback hop's at the output cap that hop sends) and
each metaprompt call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.model import ModelRequest
from agentos.llm.token_estimate import estimate_prompt_tokens

__all__ = ["DEFAULT_OUTPUT_CAP", "SpendCall", "check_token_count"]

DEFAULT_OUTPUT_CAP = 4096
"""The output cap assumed for a call that sends no ``max_tokens`` to a model whose catalog
entry gives no ``max_output_tokens``: a common provider default, so a budget plans for a full
reply rather than none."""


@dataclass(frozen=True, slots=True)
class SpendCall:
    """A model call about to be sent, as a budget sees it.

    - ``provider_id`` / ``model_id``: who will serve it (the hop's, on a fallback);
    - ``prompt_tokens``: the prompt's estimated size (`estimate_prompt_tokens`, or the prompt
      engine's own estimate);
    - ``max_tokens``: the output cap the call sends, ``None`` when it sends none;
    - ``call``: what makes the call: ``"gmi.step"``, ``"gmi.metaprompt"``,
      ``"generate_text"``, ... (spec: the ``call`` a `SpendLimitInfo` names).

    A negative or non-integer token figure is refused with `ValueError` naming the field.
    """

    provider_id: str
    model_id: str
    prompt_tokens: int = 0
    max_tokens: int | None = None
    call: str = "generate_text"

    def __post_init__(self) -> None:
        check_token_count("SpendCall.prompt_tokens", self.prompt_tokens)
        if self.max_tokens is not None:
            check_token_count("SpendCall.max_tokens", self.max_tokens)

    @classmethod
    def for_request(
        cls,
        provider_id: str,
        model_id: str,
        request: ModelRequest,
        *,
        call: str = "generate_text",
        estimate: Callable[[ModelRequest], int] | None = None,
    ) -> SpendCall:
        """The call ``request`` makes on a model.

        Its prompt is estimated by ``estimate`` (default `estimate_prompt_tokens`); its output
        cap is the ``max_tokens`` the request's options send.

        A gateway's ``before_attempt`` hook is then one line:
        ``budget.check(SpendCall.for_request(hop.provider_id, hop.model_id, request,
        call="gmi.step"))``.
        """
        prompt_tokens = (estimate or estimate_prompt_tokens)(request)
        return cls(provider_id, model_id, prompt_tokens, request.options.max_tokens, call)

    @property
    def output_cap(self) -> int:
        """The most output the call can bring.

        ``max_tokens``, else the catalog's ``max_output_tokens`` for the model, else
        `DEFAULT_OUTPUT_CAP`.
        """
        if self.max_tokens is not None:
            return self.max_tokens
        info = catalog.model_info(self.provider_id, self.model_id)
        if info is not None and info.max_output_tokens is not None:
            return info.max_output_tokens
        return DEFAULT_OUTPUT_CAP

    @property
    def worst_case(self) -> ModelUsage:
        """The call's usage if it fills its output cap (cost unknown until priced)."""
        return ModelUsage(prompt_tokens=self.prompt_tokens, completion_tokens=self.output_cap)


def check_token_count(name: str, value: object) -> None:
    """Refuse a token figure that is not an int >= 0 with `ValueError` naming ``name``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be an int >= 0, got {value!r}")
