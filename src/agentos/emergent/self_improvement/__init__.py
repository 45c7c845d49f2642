"""The self-modification tools of the full runtime (spec: Learning, The self-modification tools).

`self_improvement_tools()` builds ``adapt_personality``, ``manage_skills``, ``create_workflow``
and ``self_evaluate`` from `SelfImprovementOptions`; `learning_refusal()` is the check every tool
that changes the agent runs first (freeze, mode, learner); `SkillRegistry` is the skill library
whose `SkillRegistry.prompt_context()` a host passes as ``TurnOptions.skill_prompt_context``.
"""

from agentos.emergent.self_improvement.adapt_personality import (
    LAYER_CALL_LIMIT,
    LAYER_STEP_BOUND,
    OPERATOR_ONLY_TRAITS,
    PersonalityAdapter,
)
from agentos.emergent.self_improvement.options import (
    ADJUSTABLE_PARAMS,
    Judge,
    SelfImprovementOptions,
)
from agentos.emergent.self_improvement.refusals import (
    FREEZE_ENV,
    ToolRefusal,
    learning_refusal,
)
from agentos.emergent.self_improvement.session import session_key
from agentos.emergent.self_improvement.skills import Skill, SkillRegistry
from agentos.emergent.self_improvement.tools import self_improvement_tools

__all__ = [
    "ADJUSTABLE_PARAMS",
    "FREEZE_ENV",
    "LAYER_CALL_LIMIT",
    "LAYER_STEP_BOUND",
    "OPERATOR_ONLY_TRAITS",
    "Judge",
    "PersonalityAdapter",
    "SelfImprovementOptions",
    "Skill",
    "SkillRegistry",
    "ToolRefusal",
    "learning_refusal",
    "self_improvement_tools",
    "session_key",
]
