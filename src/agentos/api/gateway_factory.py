"""The completion gateway a call or an agent's turns run through, metered and budgeted.

`build_gateway()` wraps every hop's model: with a budget, in a `BudgetedModel` that checks each
step before it is sent (``call`` names it: ``"generate_text"``, ``"gmi.step"``), then in a
`MeteredModel` that writes one ledger row and one observer event per finished step and per
billed failed attempt, tagged with ``context`` and the hop's position. A model instance given
by the caller serves the primary hop as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from agentos.llm.budget import BudgetedModel, BudgetLike
from agentos.llm.gateway import (
    CompletionGateway,
    FallbackLeg,
    GatewayDefaults,
    create_completion_gateway,
)
from agentos.llm.metering import MeteredModel, MeteringContext
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.storage.ledger import UsageLedger

__all__ = ["CALL_BUDGET", "build_gateway", "coerce_legs"]

CALL_BUDGET: ContextVar[BudgetLike | None] = ContextVar("agentos_call_budget", default=None)
"""A budget that replaces the gateway's for the calls made in this context (a ``budget`` passed
to one ``send()``: the GMI's turn task copies the context it was started in)."""


def coerce_legs(
    legs: Sequence[FallbackLeg | Mapping[str, Any]] | None,
) -> list[FallbackLeg] | None:
    """Legs from `FallbackLeg`s or mappings (``None`` stays ``None``: the default chain)."""
    return None if legs is None else [FallbackLeg.coerce(leg) for leg in legs]


def build_gateway(
    defaults: GatewayDefaults,
    *,
    instance: ChatModel | None = None,
    budget: BudgetLike | None = None,
    ledger: UsageLedger | None = None,
    call: str,
    context: MeteringContext,
) -> CompletionGateway:
    """A gateway whose hops are budgeted (when ``budget``) and metered (see the module doc)."""
    # The caller's instance is wrapped once, not once per turn, and again only when the budget
    # changes (a send's own); a hop that names a provider is resolved each time, so keys set
    # after construction count.
    wrapped: dict[int, tuple[BudgetLike | None, ChatModel]] = {}

    def wrap(served: ChatModel, chosen: BudgetLike | None, hop: int) -> ChatModel:
        if chosen is not None:
            served = BudgetedModel(served, chosen, call=call)
        return MeteredModel(served, ledger=ledger, context=replace(context, hop=hop))

    def resolver(
        provider: str | None,
        model: str | None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        hop: int = 0,
    ) -> ChatModel:
        chosen = CALL_BUDGET.get() or budget
        if instance is None or (provider, model) != (None, None):
            served = resolve_model(
                provider, model, api_key=api_key, base_url=base_url, environ=environ
            )
            return wrap(served, chosen, hop)
        # The primary: the model instance the caller gave.
        held = wrapped.get(hop)
        if held is None or held[0] is not chosen:
            held = wrapped[hop] = (chosen, wrap(instance, chosen, hop))
        return held[1]

    return create_completion_gateway(defaults, resolver=resolver)
