"""``create_workflow``: the agent composes a named sequence of tool calls and runs it.

Spec: The self-modification tools; reference §1.30.

``create`` stores a workflow for the session: at most ``workflow_max_steps`` steps, each naming
a tool that exists and is allowed (``*`` or its name in ``workflow_allowed_tools``), never
``create_workflow`` itself. It changes the agent, so it first passes `learning_refusal`.
``run`` calls the steps in order with their arguments and the call's context; each step gets
``workflow_step_timeout_s`` on the host's clock, and the first failure ends the run with
``Workflow failed at step <n>``. ``run`` and ``list`` answer on every turn, as they do without a
layer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent.self_improvement.options import SelfImprovementOptions
from agentos.emergent.self_improvement.refusals import learning_refusal
from agentos.emergent.self_improvement.session import session_key
from agentos.tools import Tool, ToolExecutionContext

__all__ = ["TOOL_NAME", "Workflow", "WorkflowRunner", "create_workflow_tool"]

TOOL_NAME = "create_workflow"


@dataclass(frozen=True, slots=True)
class Workflow:
    """A named, checked sequence of ``(tool, arguments)`` steps."""

    name: str
    description: str
    steps: tuple[tuple[str, dict[str, Any]], ...]


def _invalid(message: str, option: str) -> GMIError:
    return GMIError(
        f"create_workflow: {message}", GMIErrorCode.VALIDATION_ERROR, {"option": option}
    )


class WorkflowRunner:
    """The workflows of one host, per session, and the runs of them."""

    def __init__(self, options: SelfImprovementOptions) -> None:
        self._options = options
        self._workflows: dict[str, dict[str, Workflow]] = {}

    def _tools(self) -> Mapping[str, Tool]:
        return self._options.tools() if self._options.tools is not None else {}

    def _allowed(self, name: str) -> bool:
        allowed = self._options.workflow_allowed_tools
        return "*" in allowed or name in allowed

    def create(
        self, session: str, name: str, description: str, steps: list[dict[str, Any]]
    ) -> Workflow:
        """Check and store a workflow; `GMIError` ``VALIDATION_ERROR`` naming the step."""
        if not name.strip():
            raise _invalid("name must not be blank", "name")
        if not steps:
            raise _invalid("a workflow needs at least one step", "steps")
        limit = self._options.workflow_max_steps
        if len(steps) > limit:
            raise _invalid(f"{len(steps)} steps is more than the {limit} allowed", "steps")
        tools = self._tools()
        checked: list[tuple[str, dict[str, Any]]] = []
        for index, step in enumerate(steps, start=1):
            tool = step.get("tool")
            args = step.get("args", {})
            if not isinstance(tool, str) or not tool:
                raise _invalid(f"step {index} names no tool", f"steps[{index - 1}].tool")
            if tool == TOOL_NAME:
                raise _invalid(f"step {index}: workflows cannot nest create_workflow", "steps")
            if tool not in tools:
                raise _invalid(f"step {index}: no tool {tool!r}", f"steps[{index - 1}].tool")
            if not self._allowed(tool):
                raise _invalid(f"step {index}: tool {tool!r} is not allowed", "steps")
            if not isinstance(args, dict):
                raise _invalid(f"step {index}: args must be an object", f"steps[{index - 1}].args")
            checked.append((tool, dict(args)))
        workflow = Workflow(name.strip(), description, tuple(checked))
        self._workflows.setdefault(session, {})[workflow.name] = workflow
        return workflow

    def workflows(self, session: str) -> list[Workflow]:
        """The session's workflows, in the order they were created."""
        return list(self._workflows.get(session, {}).values())

    async def run(self, session: str, name: str, context: ToolExecutionContext | None) -> list[Any]:
        """Run workflow ``name``'s steps in order; their results, or `GMIError` at a failure."""
        workflow = self._workflows.get(session, {}).get(name)
        if workflow is None:
            raise GMIError(
                f"create_workflow: no workflow {name!r} in this session",
                GMIErrorCode.NOT_FOUND,
                {"option": "name"},
            )
        results: list[Any] = []
        for index, (tool_name, args) in enumerate(workflow.steps, start=1):
            tool = self._tools().get(tool_name)
            try:
                if tool is None or not self._allowed(tool_name):
                    raise LookupError(f"tool {tool_name!r} is no longer available")
                results.append(await self._bounded(tool.run(args, context)))
            except Exception as exc:
                raise GMIError(
                    f"Workflow failed at step {index} ({tool_name}): {type(exc).__name__}: {exc}",
                    GMIErrorCode.TOOL_EXECUTION_FAILED,
                    {"step": index, "tool": tool_name},
                ) from exc
        return results

    async def _bounded(self, call: Any) -> Any:
        """``call`` raced against the step timeout on the host's clock."""
        limit = self._options.workflow_step_timeout_s
        work = asyncio.ensure_future(call)
        timer = asyncio.ensure_future(self._options.clock.sleep(limit))
        try:
            await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
        if not work.done():
            work.cancel()
            raise TimeoutError(f"the step took longer than {limit:g} s")
        return work.result()


def create_workflow_tool(runner: WorkflowRunner) -> Tool:
    """The ``create_workflow`` tool over ``runner``."""

    async def create_workflow(
        action: Literal["create", "run", "list"],
        name: str | None = None,
        description: str = "",
        steps: list[dict[str, Any]] | None = None,
        context: ToolExecutionContext | None = None,
    ) -> dict[str, object]:
        """Create, run or list workflows: named sequences of your tool calls.

        Args:
            action: create, run or list.
            name: the workflow's name (create and run).
            description: what the workflow does (create).
            steps: the steps, each {"tool": name, "args": {...}} (create).
            context: the call's context (the host fills it; the model does not see it).
        """
        session = session_key(context)
        if action == "list":
            return {"workflows": [_shown(w) for w in runner.workflows(session)]}
        if not name:
            raise _invalid(f"{action} needs a name", "name")
        if action == "run":
            return {"name": name, "results": await runner.run(session, name, context)}
        denied = learning_refusal(TOOL_NAME, context)
        if denied is not None:
            raise denied
        return {"created": _shown(runner.create(session, name, description, steps or []))}

    return Tool.from_function(create_workflow)


def _shown(workflow: Workflow) -> dict[str, object]:
    return {
        "name": workflow.name,
        "description": workflow.description,
        "steps": [{"tool": tool, "args": args} for tool, args in workflow.steps],
    }
