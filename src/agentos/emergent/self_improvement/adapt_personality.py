"""``adapt_personality``: the calling GMI changes one of its HEXACO traits within bounds.

Spec (The self-modification tools): the learning checks first (freeze, mode, learner: see
`learning_refusal`); then "On every host, with a layer or without one, adapt_personality refuses
honesty and emotionality (operator_only): only the persona definition sets them. With a layer it
also keeps the layer's bounds: it refuses a delta above 0.02 either way (step_bound) and a call
after three accepted ones in the session (call_limit). A call it accepts changes the GMI's trait
as it does without a layer, and the prompt keeps the authored traits."

Without a layer the reference's rules apply (§1.30, case 56): per session and trait the applied
deltas may add up to ``max_delta_per_session``; a larger delta is clamped to what remains; the
new value is ``clamp01(previous (0.5 when unset) + delta)``. The trait changed is the CALLING
GMI's (``context.gmi_id`` through ``gmi_for``), never another's (reference bug §5.13 not
reproduced). With ``persist_with_decay`` and a store, the store decays the agent's earlier
mutations on its clock, then records the change; stored mutations are never read back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent.self_improvement.options import SelfImprovementOptions
from agentos.emergent.self_improvement.refusals import (
    has_learning_layer,
    learning_refusal,
    refusal,
)
from agentos.emergent.self_improvement.session import session_key
from agentos.persona import HEXACO_TRAITS
from agentos.substrate import GMI
from agentos.tools import Tool, ToolExecutionContext

__all__ = [
    "LAYER_CALL_LIMIT",
    "LAYER_STEP_BOUND",
    "OPERATOR_ONLY_TRAITS",
    "PersonalityAdapter",
    "adapt_personality_tool",
]

LAYER_STEP_BOUND = 0.02
"""With a learning layer, the largest |delta| one call may ask for."""
LAYER_CALL_LIMIT = 3
"""With a learning layer, the accepted calls a session may make."""
OPERATOR_ONLY_TRAITS = ("honesty", "emotionality")
"""Traits only the persona definition sets, on every host."""


@dataclass
class _SessionBudget:
    applied: dict[str, float] = field(default_factory=dict)
    """Per trait, the sum of |applied delta| this session."""
    accepted: int = 0


def _checked_input(tool: str, trait: str, delta: float, reasoning: str) -> None:
    if trait not in HEXACO_TRAITS:
        raise GMIError(
            f"Invalid trait {trait!r}: the traits are {', '.join(HEXACO_TRAITS)}",
            GMIErrorCode.VALIDATION_ERROR,
            {"option": "trait"},
        )
    if isinstance(delta, bool) or not isinstance(delta, int | float) or not math.isfinite(delta):
        raise GMIError(
            f"{tool}: delta must be a finite number, got {delta!r}",
            GMIErrorCode.VALIDATION_ERROR,
            {"option": "delta"},
        )
    if not reasoning.strip():
        raise GMIError(
            f"{tool}: reasoning must not be empty",
            GMIErrorCode.VALIDATION_ERROR,
            {"option": "reasoning"},
        )


class PersonalityAdapter:
    """The trait changes of one host: budgets per session, the store, the GMI lookup.

    Shared by ``adapt_personality`` and ``self_evaluate``'s personality adjust, so both count
    against the same session budget and call limit.
    """

    def __init__(self, options: SelfImprovementOptions) -> None:
        self._options = options
        self._budgets: dict[str, _SessionBudget] = {}

    def calling_gmi(self, tool: str, context: ToolExecutionContext | None) -> GMI:
        """The GMI that made the call; `GMIError` ``NOT_FOUND`` when there is none."""
        gmi_id = context.gmi_id if context is not None else None
        gmi = self._options.gmi_for(gmi_id) if gmi_id else None
        if gmi is None:
            raise GMIError(
                f"{tool}: no GMI {gmi_id!r} to change (the call carries no calling GMI)",
                GMIErrorCode.NOT_FOUND,
                {"gmi_id": gmi_id},
            )
        return gmi

    async def adapt(
        self,
        tool: str,
        trait: str,
        delta: float,
        reasoning: str,
        context: ToolExecutionContext | None,
    ) -> dict[str, object]:
        """Apply ``delta`` to the calling GMI's ``trait``, or raise its refusal (see module)."""
        _checked_input(tool, trait, delta, reasoning)
        denied = learning_refusal(tool, context)
        if denied is not None:
            raise denied
        if trait in OPERATOR_ONLY_TRAITS:
            raise refusal(tool, "operator_only", f"only the persona definition sets {trait}")
        budget = self._budgets.setdefault(session_key(context), _SessionBudget())
        if has_learning_layer(context):
            if abs(delta) > LAYER_STEP_BOUND:
                raise refusal(tool, "step_bound")
            if budget.accepted >= LAYER_CALL_LIMIT:
                raise refusal(tool, "call_limit")
        gmi = self.calling_gmi(tool, context)
        return await self._apply(gmi, budget, trait, float(delta), reasoning)

    async def _apply(
        self, gmi: GMI, budget: _SessionBudget, trait: str, delta: float, reasoning: str
    ) -> dict[str, object]:
        remaining = max(0.0, self._options.max_delta_per_session - budget.applied.get(trait, 0.0))
        applied = math.copysign(min(abs(delta), remaining), delta)
        clamped = abs(delta) > remaining
        previous = gmi.persona.hexaco_traits.get(trait, 0.5)
        new_value = min(1.0, max(0.0, previous + applied))
        gmi.set_personality_trait(trait, new_value)
        budget.applied[trait] = budget.applied.get(trait, 0.0) + abs(applied)
        budget.accepted += 1
        await self._record(gmi.gmi_id, trait, applied, reasoning, previous, new_value)
        total = budget.applied[trait]
        return {
            "trait": trait,
            "previous_value": previous,
            "new_value": new_value,
            "delta": applied,
            "clamped": clamped,
            "session_total": total,
            "remaining_budget": max(0.0, self._options.max_delta_per_session - total),
        }

    async def _record(
        self, agent_id: str, trait: str, delta: float, reasoning: str, before: float, after: float
    ) -> None:
        store = self._options.mutation_store
        if store is None or not self._options.persist_with_decay:
            return
        await store.decay_for_agent(agent_id, self._options.decay_rate)
        await store.record(
            agent_id=agent_id,
            trait=trait,
            delta=delta,
            reasoning=reasoning,
            baseline_value=before,
            mutated_value=after,
        )


def adapt_personality_tool(adapter: PersonalityAdapter) -> Tool:
    """The ``adapt_personality`` tool over ``adapter``."""

    async def adapt_personality(
        trait: str, delta: float, reasoning: str, context: ToolExecutionContext | None = None
    ) -> dict[str, object]:
        """Adjust one of your HEXACO personality traits by a small delta, within bounds.

        Args:
            trait: openness, conscientiousness, extraversion or agreeableness (honesty and
                emotionality are set only by the persona definition).
            delta: the signed change, e.g. 0.02.
            reasoning: why the change helps this conversation.
            context: the call's context (the host fills it; the model does not see it).
        """
        return await adapter.adapt("adapt_personality", trait, delta, reasoning, context)

    return Tool.from_function(adapt_personality, has_side_effects=False)
