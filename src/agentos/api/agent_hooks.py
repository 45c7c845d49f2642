"""The hooks of a `gmi()` agent (spec: GMIs from agent() → Hooks).

- ``on_before_generation(ctx)`` runs before every model attempt, a fallback hop's included, with
  the attempt's messages (system messages included), ``system`` (the persona's base prompt),
  ``tools``, ``model``, ``provider``, ``step`` and ``prompt`` (the user's text). Messages it
  returns replace that attempt's prompt and do not enter the history.
- ``on_after_generation(ctx)`` runs after each model step; a text it returns replaces the step's
  text in the result and in the store. Changes to tool calls are not applied: the GMI has
  already run them.
- ``on_before_tool_execution(ctx)`` runs before each tool call: returning `SKIP_TOOL` skips the
  call (the model receives an error result), returned arguments (a mapping) replace the call's.

Hooks may be sync or async. A hook that raises, or an ``on_before_tool_execution`` that returns
nothing, is warned about (`HookWarning`) and the turn goes on as if the hook were not set.
Python has one ``None``, so skipping is the explicit `SKIP_TOOL` rather than the spec's
``null``.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agentos.core.messages import Message, Role, ToolCall
from agentos.llm.model import ToolDefinition
from agentos.loop import ModelCallInfo, StepInfo

from .warnings import AgentOSWarning

__all__ = [
    "SKIP_TOOL",
    "AfterGenerationContext",
    "BeforeGenerationContext",
    "BeforeToolExecutionContext",
    "HookWarning",
    "wrap_after_generation",
    "wrap_before_generation",
    "wrap_before_tool",
]


class HookWarning(AgentOSWarning):
    """A hook raised, or returned something it may not; the turn went on without it."""


class _Skip:
    def __repr__(self) -> str:
        return "SKIP_TOOL"


SKIP_TOOL: Final = _Skip()
"""What ``on_before_tool_execution`` returns to skip a call."""


@dataclass(frozen=True, slots=True)
class BeforeGenerationContext:
    """What ``on_before_generation`` is told about an attempt."""

    messages: list[Message]
    system: str
    tools: list[ToolDefinition]
    model: str
    provider: str
    step: int
    prompt: str


@dataclass(frozen=True, slots=True)
class AfterGenerationContext:
    """What ``on_after_generation`` is told about a finished step."""

    text: str
    tool_calls: list[ToolCall]
    step: int
    finish_reason: str
    model: str
    provider: str


@dataclass(frozen=True, slots=True)
class BeforeToolExecutionContext:
    """What ``on_before_tool_execution`` is told about a call."""

    name: str
    args: dict[str, Any]
    call_id: str
    extra: dict[str, Any] = field(default_factory=dict)


def _warn(name: str, why: str) -> None:
    warnings.warn(HookWarning(f"{name} {why}; the turn goes on without it"), stacklevel=2)


def wrap_before_generation(
    hook: Callable[[BeforeGenerationContext], Any],
) -> Callable[[ModelCallInfo], Sequence[Message] | None]:
    """The step loop's ``before_model_call`` (the light path's, the GMI's) running ``hook``.

    It runs while the prompt is built, so it must be sync; an async hook is warned about.
    """

    def before(info: ModelCallInfo) -> Sequence[Message] | None:
        prompt = next((m.text for m in reversed(info.messages) if m.role is Role.USER), "")
        context = BeforeGenerationContext(
            list(info.messages),
            info.system,
            list(info.tools),
            info.model_id,
            info.provider_id,
            info.step_index,
            prompt,
        )
        try:
            returned = hook(context)
        except Exception as exc:
            _warn("on_before_generation", f"raised {exc!r}")
            return None
        if inspect.isawaitable(returned):
            _warn("on_before_generation", "is async, which the prompt build cannot await")
            close = getattr(returned, "close", None)
            if close is not None:
                close()
            return None
        if returned is None:
            return None
        if isinstance(returned, Sequence) and all(isinstance(m, Message) for m in returned):
            return list(returned)
        _warn("on_before_generation", f"returned {type(returned).__name__}, not messages")
        return None

    return before


def wrap_after_generation(
    hook: Callable[[AfterGenerationContext], Any],
) -> Callable[[StepInfo], Awaitable[str | None]]:
    """The step loop's ``after_model_step`` (the light path's, the GMI's) running ``hook``."""

    async def after(info: StepInfo) -> str | None:
        context = AfterGenerationContext(
            info.text,
            list(info.tool_calls),
            info.step_index,
            info.finish_reason,
            info.model_id,
            info.provider_id,
        )
        try:
            returned = hook(context)
            if inspect.isawaitable(returned):
                returned = await returned
        except Exception as exc:
            _warn("on_after_generation", f"raised {exc!r}")
            return None
        if returned is None or isinstance(returned, str):
            return returned
        text = getattr(returned, "text", None)
        return text if isinstance(text, str) else None

    return after


def wrap_before_tool(
    hook: Callable[[BeforeToolExecutionContext], Any],
) -> Callable[[ToolCall], Awaitable[ToolCall | None]]:
    """The step loop's ``before_tool_call`` (the light path's, the GMI's) running ``hook``."""

    async def before(call: ToolCall) -> ToolCall | None:
        context = BeforeToolExecutionContext(call.name, dict(call.arguments), call.id)
        try:
            returned = hook(context)
            if inspect.isawaitable(returned):
                returned = await returned
        except Exception as exc:
            _warn("on_before_tool_execution", f"raised {exc!r}")
            return call
        if returned is SKIP_TOOL:
            return None
        if isinstance(returned, Mapping):
            return ToolCall(call.id, call.name, dict(returned))
        _warn("on_before_tool_execution", "returned nothing (return SKIP_TOOL to skip a call)")
        return call

    return before
