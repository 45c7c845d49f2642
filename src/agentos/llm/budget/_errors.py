"""Why a spend budget refused a call: the limit info and the errors (spec: Spend budget).

A budget that refuses a call raises a `SpendLimitError` before anything is sent:
`CostCapExceededError` when the call's worst case would go over a cap, `UnpricedModelError`
when a cost cap is set and the model catalog has no price for the model. The error's
`SpendLimitInfo` is also what the budget's ``on_limit_reached`` function receives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "CostCapExceededError",
    "LimitCallback",
    "SpendCap",
    "SpendLimitError",
    "SpendLimitInfo",
    "UnpricedModelError",
]

SpendCap = Literal["max_cost_usd", "max_total_tokens"]
"""Which cap of a budget refused a call."""


@dataclass(frozen=True, slots=True)
class SpendLimitInfo:
    """Why a budget refused a call: what ``on_limit_reached`` receives.

    ``limit`` and ``spent`` are in the cap's unit (USD for ``max_cost_usd``, tokens for
    ``max_total_tokens``), ``spent`` being what the refusing budget had spent before the call;
    ``requested`` is the call's worst case in that unit (``None`` when ``unpriced``: the model
    has no price under a cost cap). ``call``, ``provider_id`` and ``model_id`` name the call.
    ``reserved`` is what calls in flight held on the refusing budget, in the cap's unit (their
    worst cases: DESIGN §5.18); 0 when none was running.
    """

    cap: SpendCap
    limit: float
    spent: float
    requested: float | None
    call: str
    provider_id: str
    model_id: str
    budget_id: str | None = None
    unpriced: bool = False
    reserved: float = 0


LimitCallback = Callable[[SpendLimitInfo], object]
"""An ``on_limit_reached`` function. It runs synchronously, before the refusal is raised."""


class SpendLimitError(GMIError):
    """A budget refused a call: the call was not sent. ``info`` says which cap and why.

    Code ``LLM_PROVIDER_ERROR``, the code the spec gives the turn a refusal ends, and HTTP
    status 402. Never a `ProviderError`, so a gateway never retries it on a fallback hop (spec:
    a refused step is not sent or tried on a fallback hop).
    """

    def __init__(self, message: str, info: SpendLimitInfo) -> None:
        details = {
            "cap": info.cap,
            "limit": info.limit,
            "spent": info.spent,
            "requested": info.requested,
            "call": info.call,
            "provider_id": info.provider_id,
            "model_id": info.model_id,
            "budget_id": info.budget_id,
            "reserved": info.reserved,
        }
        super().__init__(
            message,
            GMIErrorCode.LLM_PROVIDER_ERROR,
            details,
            component="budget",
            http_status=402,
        )
        self.info = info


class CostCapExceededError(SpendLimitError):
    """The call's worst case would take a budget over its cost or token cap."""


class UnpricedModelError(SpendLimitError):
    """A budget with a cost cap cannot price the call: the catalog has no price for the model."""
