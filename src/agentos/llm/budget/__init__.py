"""The spend budget: caps on what a run of model calls may cost (spec: Spend budget).

This package is the budget's public entry; its parts are private modules:

- `_spend_call`: `SpendCall`, a call about to be sent as a budget prices it, and
  `DEFAULT_OUTPUT_CAP`;
- `_spend_budget`: `SpendBudget` (caps, parents, checks, reservations and charges, and the walk
  over the budgets a call draws on) and `BudgetLike`, what a gateway, a wrapper or a GMI needs
  of a budget;
- `_account`: one budget's figures in exact units (picodollars) and its refusals;
- `_reservation`: `Reservation`, a call's worst case held until it settles (DESIGN §5.18);
- `_joint_budget`: `JointBudget`, a call held to several budgets at once;
- `_budgeted_model`: `BudgetedModel`, a `ChatModel` wrapper that holds each step to a budget;
- `_errors`: the refusals (`SpendLimitError`, `CostCapExceededError`, `UnpricedModelError`) and
  the `SpendLimitInfo` an ``on_limit_reached`` function receives.
"""

from __future__ import annotations

from agentos.llm.budget._budgeted_model import BudgetedModel
from agentos.llm.budget._errors import (
    CostCapExceededError,
    LimitCallback,
    SpendCap,
    SpendLimitError,
    SpendLimitInfo,
    UnpricedModelError,
)
from agentos.llm.budget._joint_budget import JointBudget
from agentos.llm.budget._reservation import Reservation
from agentos.llm.budget._spend_budget import BudgetLike, SpendBudget
from agentos.llm.budget._spend_call import DEFAULT_OUTPUT_CAP, SpendCall

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "BudgetLike",
    "BudgetedModel",
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
