"""The spend budget: caps on what a run of model calls may cost (spec: Spend budget).

One name for the budget's parts, each in its own module:

- `agentos.llm.spend_call`: `SpendCall`, a call about to be sent as a budget prices it, and
  `DEFAULT_OUTPUT_CAP`;
- `agentos.llm.spend_budget`: `SpendBudget` (caps, parents, checks, reservations and charges),
  `Reservation`, a call's worst case held until it settles (DESIGN §5.18), and `BudgetLike`,
  what a gateway, a wrapper or a GMI needs of a budget;
- `agentos.llm.joint_budget`: `JointBudget`, a call held to several budgets at once;
- `agentos.llm.budget_errors`: the refusals (`SpendLimitError`, `CostCapExceededError`,
  `UnpricedModelError`) and the `SpendLimitInfo` an ``on_limit_reached`` function receives.
"""

from __future__ import annotations

from agentos.llm.budget_errors import (
    CostCapExceededError,
    LimitCallback,
    SpendCap,
    SpendLimitError,
    SpendLimitInfo,
    UnpricedModelError,
)
from agentos.llm.joint_budget import JointBudget
from agentos.llm.spend_budget import BudgetLike, Reservation, SpendBudget
from agentos.llm.spend_call import DEFAULT_OUTPUT_CAP, SpendCall

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "BudgetLike",
    "CostCapExceededError",
    "JointBudget",
    "LimitCallback",
    "Reservation",
    "SpendBudget",
    "SpendCall",
    "SpendCap",
    "SpendLimitError",
    "SpendLimitInfo",
    "UnpricedModelError",
]
