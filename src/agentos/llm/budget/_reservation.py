"""`Reservation`: a call's worst case held on its budgets until the call settles (DESIGN §5.18).

A budget that admits a call (`SpendBudget.reserve`, `JointBudget.reserve`) holds the call's
worst case on every budget the call draws on, so calls running at once never pass a cap
together. The reservation then ends once: settled with what the call used, or released.
"""

from __future__ import annotations

from agentos.core.usage import ModelUsage
from agentos.llm.budget._account import LOCK, BudgetAccount, priced, to_usd

__all__ = ["Reservation"]


class Reservation:
    """A call's worst case, held on the budgets it draws on until it settles (DESIGN §5.18).

    Made by `SpendBudget.reserve` / `JointBudget.reserve` when they admit a call, holding
    ``tokens`` and ``pico`` (picodollars) on each of ``accounts``. End it once: `settle` with
    what the call used (its billed usage, or the estimate of a stream left early, DESIGN §5.19),
    or `release` when nothing was billed. After either, `release` does nothing and `settle`
    raises `RuntimeError` (a call is charged once).
    """

    __slots__ = ("_accounts", "_held", "_pico", "_tokens")

    def __init__(self, accounts: tuple[BudgetAccount, ...], tokens: int, pico: int) -> None:
        self._accounts = accounts
        self._tokens = tokens
        self._pico = pico
        self._held = True

    @property
    def held(self) -> bool:
        """Whether the worst case is still held (neither settled nor released)."""
        return self._held

    @property
    def tokens(self) -> int:
        """The worst-case tokens held on each budget."""
        return self._tokens

    @property
    def cost_usd(self) -> float:
        """The worst-case cost held on each budget (0 when the model has no price)."""
        return to_usd(self._pico)

    def settle(self, usage: ModelUsage, *, provider_id: str, model_id: str) -> ModelUsage:
        """Release the hold and charge ``usage`` in one step; return the usage priced.

        Charged as `SpendBudget.record` charges it, to the same budgets the call was held on.
        """
        if not isinstance(usage, ModelUsage):
            raise TypeError(f"a budget records a ModelUsage, not {type(usage).__name__}")
        with_cost, pico = priced(usage, provider_id, model_id)
        with LOCK:
            if not self._held:
                raise RuntimeError("this reservation has already been settled or released")
            self._held = False
            for account in self._accounts:
                account.hold(-self._tokens, -self._pico)
                account.charge(with_cost.total_tokens, pico)
        return with_cost

    def release(self) -> None:
        """Release the hold without a charge (a call that failed unbilled); once."""
        with LOCK:
            if not self._held:
                return
            self._held = False
            for account in self._accounts:
                account.hold(-self._tokens, -self._pico)

    def __repr__(self) -> str:
        state = "held" if self._held else "ended"
        return f"<Reservation {state}: {self._tokens} tokens, ${self.cost_usd}>"
