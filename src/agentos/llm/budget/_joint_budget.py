"""`JointBudget`: a call held to several spend budgets at once (spec: a seat's two budgets).

That is how the spec's seats work: a call held to two budgets (the one a team's call carries
and the member's own) is checked and charged through a `JointBudget`, and a team launched from
that seat gets a `SpendBudget` whose parents are both. A charge walks the union of the budgets
it reaches (`agentos.llm.budget._spend_budget`), so an ancestor the joined budgets share is
charged once.
"""

from __future__ import annotations

from agentos.core.usage import ModelUsage
from agentos.llm.budget._reservation import Reservation
from agentos.llm.budget._spend_budget import (
    SpendBudget,
    check_on,
    lineage_of,
    record_external_on,
    record_on,
    reserve_on,
)
from agentos.llm.budget._spend_call import SpendCall

__all__ = ["JointBudget"]


class JointBudget:
    """A call held to several budgets at once (spec: a seat's two budgets).

    ``primary`` is the budget the caller's call carries (a team's), ``others`` the ones it is
    also held to (the member's own). A check refuses when any of them, or any of their
    ancestors, refuses; a refusal runs the refusing budget's ``on_limit_reached`` and the
    primary's (spec: a refusal by the member's own budget runs the carried budget's function).
    A charge reaches every budget once, so an ancestor both share is charged once; so does a
    reservation (`reserve`, DESIGN §5.18).
    """

    def __init__(self, primary: SpendBudget, *others: SpendBudget) -> None:
        budgets = (primary, *others)
        for budget in budgets:
            if not isinstance(budget, SpendBudget):
                raise ValueError(f"JointBudget takes SpendBudgets, not {type(budget).__name__}")
        self.budgets: tuple[SpendBudget, ...] = tuple(dict.fromkeys(budgets))
        """The budgets joined, the primary first."""

    def lineage(self) -> tuple[SpendBudget, ...]:
        """Every budget a call through this one reaches, each once."""
        return lineage_of(self.budgets)

    def check(self, call: SpendCall) -> None:
        """Refuse ``call`` as `SpendBudget.check` does, across all the joined budgets."""
        check_on(self.budgets, call)

    def reserve(self, call: SpendCall) -> Reservation:
        """Check ``call`` as `check` does and hold its worst case on every budget it reaches.

        Each joined budget and ancestor holds it once (DESIGN §5.18), until the `Reservation`
        settles or is released.
        """
        return reserve_on(self.budgets, call)

    def record(self, usage: ModelUsage, *, provider_id: str, model_id: str) -> ModelUsage:
        """Charge a call to every joined budget and ancestor, each once."""
        return record_on(self.budgets, usage, provider_id=provider_id, model_id=model_id)

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge external spending to every joined budget and ancestor, each once."""
        record_external_on(self.budgets, cost_usd, tokens)
