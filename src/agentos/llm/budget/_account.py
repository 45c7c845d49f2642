"""`BudgetAccount`: one spend budget's caps and figures in exact units (spec: Spend budget).

A `SpendBudget` keeps what it has spent and what calls in flight hold (DESIGN §5.18) in an
account; the walk over a call's budgets (`agentos.llm.budget._spend_budget`) and a
`Reservation` check, hold and charge each budget through it. The account knows nothing of
parents: one budget, its own caps.

**Money is counted in whole picodollars** (10^-12 USD), converted from each cost's shortest
decimal form, so sums are exact and do not depend on order (0.1 + 0.2 spends exactly 0.3), and
a call recorded with exactly the usage it was checked at can never take a budget over its cap.
Every account shares one process-wide lock (`LOCK`): read or change an account only under it.
"""

from __future__ import annotations

import math
import threading
from decimal import Decimal

from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.budget._errors import (
    CostCapExceededError,
    SpendCap,
    SpendLimitError,
    SpendLimitInfo,
    UnpricedModelError,
)
from agentos.llm.budget._spend_call import SpendCall

__all__ = ["LOCK", "BudgetAccount", "priced", "to_pico", "to_usd"]

_PICO_PER_USD = 10**12

# One lock for every budget: a charge touches several budgets at once, and a single lock can
# neither deadlock nor let a diamond's shared budget be charged twice. Callbacks run outside it.
LOCK = threading.RLock()
"""The lock every account's reads and changes are made under."""


def to_pico(usd: float) -> int:
    """``usd`` in whole picodollars, from its shortest decimal form (``repr``)."""
    return int((Decimal(repr(float(usd))) * _PICO_PER_USD).to_integral_value())


def to_usd(pico: int) -> float:
    """``pico`` picodollars in USD."""
    return pico / _PICO_PER_USD


def priced(usage: ModelUsage, provider_id: str, model_id: str) -> tuple[ModelUsage, int | None]:
    """``usage`` priced by the catalog, and its cost in picodollars (``None``: unknown)."""
    with_cost = catalog.priced(provider_id, model_id, usage)
    return with_cost, None if with_cost.cost_usd is None else to_pico(with_cost.cost_usd)


class BudgetAccount:
    """One budget's caps, what it has spent and what calls in flight hold on it.

    ``max_cost_usd`` and ``max_total_tokens`` are the caps as given (already checked); an
    infinite cap is kept for reporting but compared as no cap at all.
    """

    __slots__ = (
        "_cost_limit",
        "_token_limit",
        "max_cost_usd",
        "max_total_tokens",
        "reserved_pico",
        "reserved_tokens",
        "spent_pico",
        "spent_tokens",
        "unpriced_calls",
    )

    def __init__(self, max_cost_usd: float | None, max_total_tokens: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_total_tokens = max_total_tokens
        self._cost_limit = (
            None if max_cost_usd is None or math.isinf(max_cost_usd) else to_pico(max_cost_usd)
        )
        self._token_limit = (
            None if max_total_tokens is None or math.isinf(max_total_tokens) else max_total_tokens
        )
        self.spent_pico = 0
        self.spent_tokens = 0
        self.unpriced_calls = 0
        self.reserved_pico = 0
        self.reserved_tokens = 0

    def remaining_usd(self) -> float | None:
        """What the cost cap allows beside spent and reserved (0 at or over it), or ``None``."""
        if self._cost_limit is None:
            return None
        return to_usd(max(0, self._cost_limit - self.spent_pico - self.reserved_pico))

    def remaining_tokens(self) -> float | None:
        """What the token cap allows beside spent and reserved (0 at or over it), or ``None``."""
        if self._token_limit is None:
            return None
        return max(0, self._token_limit - self.spent_tokens - self.reserved_tokens)

    def charge(self, tokens: int, pico: int | None) -> None:
        """Add a charge; ``pico`` ``None`` is a call of unknown cost. Hold `LOCK`."""
        self.spent_tokens += tokens
        if pico is None:
            self.unpriced_calls += 1
        else:
            self.spent_pico += pico

    def hold(self, tokens: int, pico: int) -> None:
        """Add (or, negative, release) a reservation's hold. Hold `LOCK`."""
        self.reserved_tokens += tokens
        self.reserved_pico += pico

    def refusal(
        self, call: SpendCall, worst: ModelUsage, worst_pico: int | None, budget_id: str | None
    ) -> SpendLimitError | None:
        """The error refusing ``call`` here (the cost cap first), or ``None``. Hold `LOCK`.

        ``worst`` is the call's worst case, ``worst_pico`` its price (``None``: unpriced);
        ``budget_id`` names the budget in the error.
        """
        if self._cost_limit is not None:
            refusal = self._cost_refusal(call, worst, worst_pico, budget_id)
            if refusal is not None:
                return refusal
        if self._token_limit is not None:
            return self._token_refusal(call, worst, budget_id)
        return None

    def _cost_refusal(
        self, call: SpendCall, worst: ModelUsage, worst_pico: int | None, budget_id: str | None
    ) -> SpendLimitError | None:
        assert self._cost_limit is not None
        assert self.max_cost_usd is not None
        spent = to_usd(self.spent_pico)
        name = _name(budget_id)
        if worst_pico is None:
            info = self._info(call, "max_cost_usd", spent, None, budget_id, unpriced=True)
            return UnpricedModelError(
                f"{name} has a max_cost_usd of {_money(self.max_cost_usd)} and "
                f"cannot price {call.call} on {call.provider_id}:{call.model_id}: the model "
                f"catalog has no price for it (spent so far {_money(spent)}); "
                "use a priced model or set only max_total_tokens",
                info,
            )
        if self.spent_pico + self.reserved_pico + worst_pico <= self._cost_limit:
            return None
        reserved = to_usd(self.reserved_pico)
        info = self._info(call, "max_cost_usd", spent, to_usd(worst_pico), budget_id, reserved)
        held = f" and {_money(reserved)} reserved by calls in flight" if reserved else ""
        return CostCapExceededError(
            f"{name} refused {call.call} on {call.provider_id}:{call.model_id}: "
            f"its worst case of {_money(to_usd(worst_pico))} ({worst.prompt_tokens:,} "
            f"prompt + {worst.completion_tokens:,} output tokens) on top of "
            f"{_money(spent)} spent{held} would exceed the max_cost_usd of "
            f"{_money(self.max_cost_usd)}",
            info,
        )

    def _token_refusal(
        self, call: SpendCall, worst: ModelUsage, budget_id: str | None
    ) -> SpendLimitError | None:
        assert self._token_limit is not None
        assert self.max_total_tokens is not None
        reserved_tokens = self.reserved_tokens
        if self.spent_tokens + reserved_tokens + worst.total_tokens <= self._token_limit:
            return None
        info = self._info(
            call,
            "max_total_tokens",
            self.spent_tokens,
            worst.total_tokens,
            budget_id,
            reserved_tokens,
        )
        held = f" and {reserved_tokens:,} reserved by calls in flight" if reserved_tokens else ""
        return CostCapExceededError(
            f"{_name(budget_id)} refused {call.call} on {call.provider_id}:{call.model_id}: "
            f"its worst case of {worst.total_tokens:,} tokens ({worst.prompt_tokens:,} "
            f"prompt + {worst.completion_tokens:,} output) on top of "
            f"{self.spent_tokens:,} spent{held} would exceed the max_total_tokens of "
            f"{_count(self.max_total_tokens)}",
            info,
        )

    def _info(
        self,
        call: SpendCall,
        cap: SpendCap,
        spent: float,
        requested: float | None,
        budget_id: str | None,
        reserved: float = 0,
        *,
        unpriced: bool = False,
    ) -> SpendLimitInfo:
        limit = self.max_cost_usd if cap == "max_cost_usd" else self.max_total_tokens
        assert limit is not None
        return SpendLimitInfo(
            cap=cap,
            limit=limit,
            spent=spent,
            requested=requested,
            call=call.call,
            provider_id=call.provider_id,
            model_id=call.model_id,
            budget_id=budget_id,
            unpriced=unpriced,
            reserved=reserved,
        )


def _name(budget_id: str | None) -> str:
    return f"spend budget {budget_id!r}" if budget_id else "the spend budget"


def _money(usd: float) -> str:
    """``$0.50``, ``$0.000123``: at least cents, up to picodollars, no trailing zeros."""
    text = f"{usd:.12f}".rstrip("0")
    whole, _, fraction = text.partition(".")
    return f"${whole}.{fraction.ljust(2, '0')}"


def _count(tokens: float) -> str:
    return f"{tokens:,}" if float(tokens).is_integer() else f"{tokens:,.2f}"
