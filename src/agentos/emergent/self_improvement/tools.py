"""`self_improvement_tools()`: the self-modification tools a full runtime registers.

Spec (What a GMI adds over a plain agent): "With emergentConfig.selfImprovement.enabled, the
runtime registers adapt_personality, manage_skills, create_workflow and self_evaluate ... Only
the full runtime passes the tool orchestrator the options that register these tools, so a GMI
from agent({ runtime: 'gmi' }) or gmi() has none of them." The runtime calls this with its
manager's GMI lookup; nothing in the ``gmi()`` path does.
"""

from __future__ import annotations

from agentos.emergent.self_improvement.adapt_personality import (
    PersonalityAdapter,
    adapt_personality_tool,
)
from agentos.emergent.self_improvement.options import SelfImprovementOptions, check_options
from agentos.emergent.self_improvement.self_evaluate import SelfEvaluator, self_evaluate_tool
from agentos.emergent.self_improvement.skills import manage_skills_tool
from agentos.emergent.self_improvement.workflows import WorkflowRunner, create_workflow_tool
from agentos.tools import Tool

__all__ = ["self_improvement_tools"]


def self_improvement_tools(options: SelfImprovementOptions) -> list[Tool]:
    """The self-modification tools built from ``options``.

    ``adapt_personality``, ``manage_skills`` (when ``options.skills`` is set),
    ``create_workflow`` and ``self_evaluate``, sharing one session budget for trait changes.

    Raises `GMIError` ``INVALID_ARGUMENT`` naming the option when ``options`` is invalid.
    """
    check_options(options)
    adapter = PersonalityAdapter(options)
    tools = [adapt_personality_tool(adapter)]
    if options.skills is not None:
        tools.append(manage_skills_tool(options.skills))
    tools.append(create_workflow_tool(WorkflowRunner(options)))
    tools.append(self_evaluate_tool(SelfEvaluator(options, adapter)))
    return tools
