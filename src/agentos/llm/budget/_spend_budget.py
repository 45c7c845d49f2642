"""`SpendBudget`: caps on what a run of model calls may cost (spec: Spend budget).

A `SpendBudget` caps cost (``max_cost_usd``), tokens (``max_total_tokens``) or both. Before a
call is sent, the budget prices its worst case (the call's prompt estimate plus the output cap
the call sends, priced by the model catalog: see `SpendCall`) and refuses the call when that,
on top of what is spent and what calls in flight hold, would go over a cap:
`CostCapExceededError`, or `UnpricedModelError` when a cost cap is set and the catalog has no
price for the model. The spec checks each completion call of a turn (a fallback hop's at the
output cap that hop sends) and each metaprompt call, and records each finished step, each
billed failed attempt and each metaprompt call.

**A budget reserves** (DESIGN §5.18). `SpendBudget.reserve` checks a call and, when it admits
it, holds the call's worst case on every budget the call draws on until the call settles: a
`Reservation`, whose `Reservation.settle` charges what the call really used (the billed
amount, or the estimate of a stream left early: DESIGN §5.19) and releases the hold, and whose
`Reservation.release` releases it without a charge (a call that failed unbilled). Calls running
at once therefore never pass a cap together: each is admitted only if its worst case fits
beside the worst cases of those in flight. `SpendBudget.check` refuses as `reserve` does but
holds nothing; `SpendBudget.record` charges a call that was not reserved;
`record_external_cost` charges spending made elsewhere (spec: ``session.recordExternalCost()``).

**Budgets draw on budgets.** A budget made with ``parent=`` (one budget or several) checks each
call against itself and every ancestor and charges all of them. A charge walks the *union* of
the budgets it reaches, so a budget reached twice (a diamond: two budgets drawing on one host
budget, both charged for one call) is charged once. The TypeScript runtime's "one total that
budgets on one guard and one budgetId keep" is, here, a parent budget both draw on. Recording
the same call twice, on two budgets separately, charges it twice: charge a call through one
budget, a `JointBudget` or a budget with several parents. The walk
(`lineage_of`, `check_on`, `record_on`, `record_external_on`) starts from the budgets a call is
charged through: a `SpendBudget` from itself, a `JointBudget` from each budget it joins.

Each budget keeps its figures, in whole picodollars, in a `BudgetAccount`
(`agentos.llm.budget._account`); a `Reservation` (`agentos.llm.budget._reservation`) is the
hold of one admitted call.

**Concurrency.** Every method is synchronous and never awaits, so on one event loop a check, a
reservation or a charge is atomic; a process-wide lock makes them atomic across threads too.
A call recorded with at most the worst case it was reserved at can never take a budget over its
cap, however many calls run at once.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.budget._account import LOCK, BudgetAccount, priced, to_pico, to_usd
from agentos.llm.budget._errors import LimitCallback, SpendLimitInfo
from agentos.llm.budget._reservation import Reservation
from agentos.llm.budget._spend_call import SpendCall, check_token_count

__all__ = [
    "BudgetLike",
    "SpendBudget",
    "check_on",
    "lineage_of",
    "record_external_on",
    "record_on",
    "reserve_on",
]

# The package's logger: logging set up for `agentos.llm.budget` sees a failing
# ``on_limit_reached``.
_log = logging.getLogger("agentos.llm.budget")


@runtime_checkable
class BudgetLike(Protocol):
    """What a gateway, a wrapper or a GMI needs of a budget: `SpendBudget` and `JointBudget`."""

    def check(self, call: SpendCall) -> None:
        """Refuse ``call`` (raise `SpendLimitError`) if it could go over a cap."""
        ...

    def reserve(self, call: SpendCall) -> Reservation:
        """Refuse ``call`` as `check` does, or admit it and hold its worst case until it settles."""
        ...

    def record(self, usage: ModelUsage, *, provider_id: str, model_id: str) -> ModelUsage:
        """Charge a call's usage; return it priced."""
        ...

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge spending made outside agentos's model calls."""
        ...


class SpendBudget:
    """Caps on cost and tokens for the calls charged to it (spec: Spend budget).

    ``max_cost_usd`` (USD) and ``max_total_tokens`` are each optional; a value that is
    negative, NaN or not a number (``bool`` included) raises `ValueError` naming the field, as
    the spec's RangeError does. An infinite cap caps nothing. ``on_limit_reached`` runs with a
    `SpendLimitInfo` when a check is refused (see `check`). ``parent`` is a budget, or a
    sequence of budgets, this one draws on. ``budget_id`` names the budget in refusals.
    """

    def __init__(
        self,
        max_cost_usd: float | None = None,
        max_total_tokens: float | None = None,
        *,
        on_limit_reached: LimitCallback | None = None,
        parent: SpendBudget | Sequence[SpendBudget] | None = None,
        budget_id: str | None = None,
    ) -> None:
        self.account = BudgetAccount(
            _check_limit("max_cost_usd", max_cost_usd),
            _check_limit("max_total_tokens", max_total_tokens),
        )
        """What this budget has spent and what calls in flight hold on it, in exact units.

        The walk over a call's budgets checks, holds and charges through it; read the figures
        through the properties below.
        """
        if on_limit_reached is not None and not callable(on_limit_reached):
            raise ValueError("on_limit_reached must be a function taking a SpendLimitInfo")
        self.on_limit_reached = on_limit_reached
        self.parents: tuple[SpendBudget, ...] = _check_parents(parent)
        """The budgets this one draws on (fixed when made, so budgets never form a cycle)."""
        if budget_id is not None and not isinstance(budget_id, str):
            raise ValueError(f"budget_id must be a string, got {type(budget_id).__name__}")
        self.budget_id = budget_id

    # -- figures -------------------------------------------------------------------------------

    @property
    def max_cost_usd(self) -> float | None:
        """The cost cap in USD, or ``None``."""
        return self.account.max_cost_usd

    @property
    def max_total_tokens(self) -> float | None:
        """The token cap, or ``None``."""
        return self.account.max_total_tokens

    @property
    def spent_usd(self) -> float:
        """The known cost charged so far (calls of unknown cost add nothing: `unpriced_calls`)."""
        return to_usd(self.account.spent_pico)

    @property
    def spent_tokens(self) -> int:
        """The tokens charged so far."""
        return self.account.spent_tokens

    @property
    def unpriced_calls(self) -> int:
        """How many charged calls had an unknown cost.

        Possible only without a cost cap, or when a caller records a call it did not check.
        """
        return self.account.unpriced_calls

    @property
    def reserved_usd(self) -> float:
        """The worst-case cost the calls in flight hold (DESIGN §5.18); 0 when none runs."""
        return to_usd(self.account.reserved_pico)

    @property
    def reserved_tokens(self) -> int:
        """The worst-case tokens the calls in flight hold (DESIGN §5.18); 0 when none runs."""
        return self.account.reserved_tokens

    @property
    def remaining_usd(self) -> float | None:
        """What the cost cap still allows beside what is spent and reserved (0 at or over it).

        ``None`` without a finite cap.
        """
        return self.account.remaining_usd()

    @property
    def remaining_tokens(self) -> float | None:
        """What the token cap still allows beside what is spent and reserved (0 at or over it).

        ``None`` without a finite cap.
        """
        return self.account.remaining_tokens()

    def lineage(self) -> tuple[SpendBudget, ...]:
        """Itself, then every budget it draws on (nearest first), each once."""
        return lineage_of((self,))

    # -- the contract --------------------------------------------------------------------------

    def check(self, call: SpendCall) -> None:
        """Refuse ``call`` if its worst case could take this budget or an ancestor over a cap.

        The worst case is the call's prompt estimate plus its output cap
        (`SpendCall.output_cap`), priced by the model catalog; it must fit beside what each
        budget has spent and what the calls in flight have reserved. Budgets are checked in
        `lineage` order, and within one budget the cost cap before the token cap; the first
        refusal raises `UnpricedModelError` (a cost cap and no price for the model) or
        `CostCapExceededError`. Before it is raised, ``on_limit_reached`` runs for the refusing
        budget, then for each budget between it and this one, then for this one (spec: a
        refusal by a budget's parent runs that budget's function), each at most once; an
        exception from a callback is logged and does not replace the refusal.
        A check holds nothing: a call that is about to be sent is `reserve`d instead.
        """
        check_on((self,), call)

    def reserve(self, call: SpendCall) -> Reservation:
        """Check ``call`` as `check` does and, when it fits, hold its worst case (DESIGN §5.18).

        The hold is on this budget and every ancestor (each once) until the returned
        `Reservation` is settled with the call's usage or released; meanwhile every check on
        those budgets counts it as spent. A refusal raises as `check` does and holds nothing.
        """
        return reserve_on((self,), call)

    def record(self, usage: ModelUsage, *, provider_id: str, model_id: str) -> ModelUsage:
        """Charge a call's usage to this budget and every ancestor, each once.

        The cost is the usage's own when the provider gave one, else the catalog's price for
        the model; an unknown cost charges the tokens and counts in `unpriced_calls`. Returns
        the usage with that cost filled in. A charge may take a budget over its cap (a provider
        that overran the estimate): the next check refuses.
        """
        return record_on((self,), usage, provider_id=provider_id, model_id=model_id)

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge spending made outside agentos's model calls (spec: ``recordExternalCost``).

        ``cost_usd`` must be a finite number >= 0 and ``tokens`` an int >= 0 (`ValueError`).
        """
        record_external_on((self,), cost_usd, tokens)

    def __repr__(self) -> str:
        name = f" {self.budget_id!r}" if self.budget_id is not None else ""
        return (
            f"<SpendBudget{name} ${self.spent_usd} of {self.max_cost_usd}, "
            f"{self.spent_tokens} tokens of {self.max_total_tokens}>"
        )


# --- the walk: the budgets a call starts from, and every ancestor once -----------------------


def lineage_of(roots: Iterable[SpendBudget]) -> tuple[SpendBudget, ...]:
    """The roots, then their ancestors breadth first, each budget once (by identity)."""
    seen: dict[int, SpendBudget] = {}
    queue = list(roots)
    while queue:
        budget = queue.pop(0)
        if id(budget) not in seen:
            seen[id(budget)] = budget
            queue.extend(budget.parents)
    return tuple(seen.values())


def check_on(roots: tuple[SpendBudget, ...], call: SpendCall) -> None:
    """Refuse ``call`` if it could take a root or an ancestor over a cap (`SpendBudget.check`).

    ``roots[0]`` is the primary: its ``on_limit_reached`` runs on any refusal.
    """
    _admit(roots, call, hold=False)


def reserve_on(roots: tuple[SpendBudget, ...], call: SpendCall) -> Reservation:
    """Check ``call`` as `check_on` does and hold its worst case on every budget reached, once.

    The check and the hold are one atomic step (`SpendBudget.reserve`).
    """
    reservation = _admit(roots, call, hold=True)
    assert reservation is not None
    return reservation


def _admit(roots: tuple[SpendBudget, ...], call: SpendCall, *, hold: bool) -> Reservation | None:
    if not isinstance(call, SpendCall):
        raise TypeError(f"a budget checks a SpendCall, not {type(call).__name__}")
    worst = call.worst_case
    cost = catalog.cost_usd(call.provider_id, call.model_id, worst)
    worst_pico = None if cost is None else to_pico(cost)
    with LOCK:
        lineage = lineage_of(roots)
        for budget in lineage:
            refusal = budget.account.refusal(call, worst, worst_pico, budget.budget_id)
            if refusal is not None:
                break
        else:
            if not hold:
                return None
            # An unpriced call is admitted only where no budget caps cost: it holds its tokens.
            pico = worst_pico or 0
            accounts = tuple(budget.account for budget in lineage)
            for account in accounts:
                account.hold(worst.total_tokens, pico)
            return Reservation(accounts, worst.total_tokens, pico)
    _notify(roots[0], lineage, budget, refusal.info)
    raise refusal


def _notify(
    primary: SpendBudget,
    lineage: tuple[SpendBudget, ...],
    refusing: SpendBudget,
    info: SpendLimitInfo,
) -> None:
    # The refusing budget, then the budgets drawing on it from the nearest down to the roots
    # (reverse breadth-first order), then the primary: each one whose limit stopped its call.
    drawing = [b for b in reversed(lineage) if b is not refusing and refusing in b.lineage()]
    notified: dict[int, SpendBudget] = {}
    for budget in (refusing, *drawing, primary):
        notified.setdefault(id(budget), budget)
    for budget in notified.values():
        if budget.on_limit_reached is None:
            continue
        try:
            budget.on_limit_reached(info)
        except Exception:
            _log.exception("on_limit_reached of %r raised; the call stays refused", budget)


def record_on(
    roots: tuple[SpendBudget, ...], usage: ModelUsage, *, provider_id: str, model_id: str
) -> ModelUsage:
    """Charge a call's usage to the roots and every ancestor, each once; return it priced."""
    if not isinstance(usage, ModelUsage):
        raise TypeError(f"a budget records a ModelUsage, not {type(usage).__name__}")
    with_cost, pico = priced(usage, provider_id, model_id)
    with LOCK:
        for budget in lineage_of(roots):
            budget.account.charge(with_cost.total_tokens, pico)
    return with_cost


def record_external_on(roots: tuple[SpendBudget, ...], cost_usd: float, tokens: int) -> None:
    """Charge external spending to the roots and every ancestor, each once.

    ``cost_usd`` must be a finite number >= 0 and ``tokens`` an int >= 0 (`ValueError`).
    """
    if (
        not isinstance(cost_usd, numbers.Real)
        or isinstance(cost_usd, bool)
        or not math.isfinite(cost_usd)
        or cost_usd < 0
    ):
        raise ValueError(f"cost_usd must be a finite number >= 0, got {cost_usd!r}")
    check_token_count("tokens", tokens)
    pico = to_pico(cost_usd)
    with LOCK:
        for budget in lineage_of(roots):
            budget.account.charge(tokens, pico)


# --- validation and formatting ----------------------------------------------------------------


def _check_limit(name: str, value: object) -> float | None:
    if value is None:
        return None
    # numbers.Real takes numpy's scalars too; bool is an int to Python but not a budget.
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or math.isnan(value)
        or value < 0
    ):
        raise ValueError(f"SpendBudget {name} must be a number >= 0, got {value!r}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _check_parents(parent: object) -> tuple[SpendBudget, ...]:
    if parent is None:
        return ()
    parents = (parent,) if isinstance(parent, SpendBudget) else parent
    if not isinstance(parents, Sequence) or isinstance(parents, str):
        raise ValueError(f"parent must be a SpendBudget or a list of them, got {parent!r}")
    for item in parents:
        if not isinstance(item, SpendBudget):
            raise ValueError(f"parent must be a SpendBudget or a list of them, got {item!r}")
    return tuple(dict.fromkeys(parents))
